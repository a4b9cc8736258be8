#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Two ranks on one node share -data-limit and -command (issue 22, item 7). Open MPI starts
two ranks, each under its own pcollect with -data-limit 0.0625 (64 KiB: two chunks) into the
same result (one node directory): the first launcher makes the node's data counter, the
second must share it, never "cannot create the data counter ... File exists". Each rank runs
fsize-work (1 s of CPU time, every sample a new deep stack: a stream grows fast), which
passes the limit within a few dozen samples: both ranks stop sampling early, both record
that the limit was hit, and their raw data together stays near the one shared limit, not
one limit each. Each rank's output and exit code are as without us."""
import os

import e2elib as e
import mpilib

BURN_MS = 1000
LIMIT = 0.0625

mpirun = mpilib.launcher("openmpi")
with e.Workdir("mpi-data-limit") as w:
    res = w.join("res")
    rank_cmd = 'exec "$0" "$1.$OMPI_COMM_WORLD_RANK" "$2"'
    target = ["sh", "-c", rank_cmd, e.prog("fsize-work"), w.join("out"), str(BURN_MS)]
    base = [mpirun, "--allow-run-as-root", "--oversubscribe", "-np", "2"]
    # What each rank prints and writes without us is known (fsize-work.c: 16 blocks of 4 KiB,
    # "file=65536", "done"): the job is not run alone first (its ranks' burn again).
    sizes = {r: 16 * 4096 for r in (0, 1)}
    out = ["file=%d" % (16 * 4096), "done"] * 2
    argv = base + ["env", "PCOLLECT_HOSTNAME=node1", e.tool("pcollect"), "-collect",
                   "hotspots", "-r", res, "-finalization-mode=none", "-data-limit", str(LIMIT),
                   "-knob", "sampling-interval=1", "--"] + target
    cp = e.run(argv, env=mpilib.env("openmpi"), timeout=120)
    e.check(cp.returncode == 0, "the job exits 0 under pcollect (%s)" % cp.stderr[-1500:])
    e.check("cannot create the data counter" not in cp.stderr,
            "no rank is refused the data counter (%s)" %
            [l for l in cp.stderr.splitlines() if "data counter" in l])
    e.check(sorted(cp.stdout.splitlines()) == sorted(out),
            "the ranks print what they print without us (%r)" % cp.stdout)
    e.check({r: os.path.getsize(w.join("out.%d" % r)) for r in (0, 1)} == sizes,
            "the ranks' files are as without us")
    nodes = [d for d in os.listdir(w.join()) if d.startswith("res")]
    e.check(len(nodes) == 1, "one node directory (%s)" % nodes)
    node = w.join(nodes[0])
    metas = [os.path.join(node, "meta", n) for n in os.listdir(os.path.join(node, "meta"))
             if n.endswith(".meta")]
    e.check(len(metas) == 2, "a launcher's metadata for each rank (%d)" % len(metas))
    for m in metas:
        with open(m) as f:
            e.check("data_limit_hit=1\n" in f.read(),
                    "%s: the rank's launcher says the limit was hit" % os.path.basename(m))
    streams = e.load_streams(node)
    by_pid = {}
    for s in e.thread_streams(streams):
        wt, cpu = by_pid.get(s.pid, (0, 0))
        by_pid[s.pid] = (wt + s.weight() * s.header["interval_ns"], cpu + s.cpu_ns())
    fsize = [p for p, (_w, cpu) in by_pid.items() if cpu >= BURN_MS * 1e6 - e.TICK_NS]
    e.check(len(fsize) == 2, "two ranks burnt their %d ms (%s)" % (BURN_MS, by_pid))
    for p in fsize:
        wt, cpu = by_pid[p]
        e.check(wt < 0.75 * cpu, "rank pid %d stopped sampling early: %.3f s sampled of %.3f s"
                % (p, wt / 1e9, cpu / 1e9))
    raw = sum(os.path.getsize(s.path) for s in streams)
    e.check(raw < 2 * LIMIT * 1048576 + 64 * 1024,
            "the ranks' raw data together near the one shared limit (%d bytes)" % raw)
