#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Issue 22: preport -view timeline of a parallel job (a result of several node parts) shows a
row per rank's thread and bucket, where it crashed before. Two simulated nodes with two ranks
each (SLURM_* and PCOLLECT_HOSTNAME, as parallel-ranks.py); rank r burns (r + 1) units of 200
ms of CPU time (tests/progs/rank-work). Known answers: each rank's CPU time summed over its
buckets of the timeline equals the job's hotspots -group-by rank for it (the same samples,
another table: 1% + a sampling interval), which holds (r + 1) * 200 ms within e2elib.Sampled's
tolerance (and 30 ms for the process's start). The program's output and exit code are as without pcollect."""
import csv
import io
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2elib as e  # noqa: E402

INTERVAL_MS = 2
UNIT_NS = 200000000
START_NS = 30000000


def launch(res, rank, node):
    env = dict(os.environ, SLURM_JOB_ID="4242", SLURM_STEP_ID="0", SLURM_PROCID=str(rank),
               PCOLLECT_HOSTNAME=node, **e.tool_env())
    return subprocess.Popen([e.tool("pcollect"), "-collect", "hotspots", "-r", res,
                             "-finalization-mode=none", "-knob",
                             "sampling-interval=%d" % INTERVAL_MS, "-quiet", "--",
                             e.prog("rank-work")], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


with e.Workdir("report-job-timeline") as w:
    res = w.join("res")
    procs = [launch(res, rank, node)
             for rank, node in enumerate(["nodeA", "nodeA", "nodeB", "nodeB"])]
    for rank, p in enumerate(procs):
        out, err = p.communicate(timeout=120)
        e.check(p.returncode == 0 and out == "rank %d done\n" % rank,
                "rank %d: exit 0 and its output as alone (%d: %r %s)"
                % (rank, p.returncode, out, err.strip()))
    for node in ("nodeA", "nodeB"):
        e.finalize(res + "." + node)

    cp = e.run([e.tool("preport"), "-r", res, "-view", "timeline", "-format", "csv"])
    e.check(cp.returncode == 0, "-view timeline of a job answers (exit %d: %s)"
            % (cp.returncode, cp.stderr.strip()[-500:]))
    rows = list(csv.DictReader(io.StringIO(cp.stdout)))
    e.check(rows and "Rank" in rows[0], "the timeline has a Rank column (%s)"
            % (list(rows[0]) if rows else "no rows"))
    tl = {}
    for r in rows:
        ns = (float(r["End"]) - float(r["Start"])) * 1e9 * float(r["CPU Time Share"]) / 100
        tl[int(r["Rank"])] = tl.get(int(r["Rank"]), 0.0) + ns
    e.check(set(tl) == {0, 1, 2, 3}, "rows of every rank (%s)" % sorted(tl))
    text = e.run([e.tool("preport"), "-r", res, "-view", "timeline"])
    e.check(text.returncode == 0 and len(text.stdout.splitlines()) > 4,
            "-view timeline of a job as text (exit %d)" % text.returncode)

    hs = e.rows(res, "-view", "hotspots", "-group-by", "rank")
    by_rank = {int(r["Rank"]): e.ns(r["CPU Time"] if "CPU Time" in r else r["CPU Time:Self"])
               for r in hs}
    interval = INTERVAL_MS * 1000000
    for rank in range(4):
        got, want = tl.get(rank, 0.0), by_rank.get(rank, 0)
        e.check(abs(got - want) <= 0.01 * want + interval,
                "rank %d: the timeline's CPU time %.3f s is hotspots' %.3f s"
                % (rank, got / 1e9, want / 1e9))
        samples = e.db_sampled(res + (".nodeA" if rank < 2 else ".nodeB"), "p.rank = ?",
                               (rank,))
        # The process's start and end (the loader, the agent's set-up) beside rank_work.
        e.check_time(samples, want, (rank + 1) * UNIT_NS, "rank %d's CPU time" % rank,
                     extra_ns=START_NS)
