#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A parallel job's finalization and report against the number of ranks, at real ranks' size.

For each job size (default 64, 256 and 1,024 ranks, 16 a node: 4, 16 and 64 nodes),
tests/progs/job-synth writes the raw streams of a simulated job (no MPI runs: 1,024 ranks do
not fit a small machine), each rank 20,000 CPU samples over 2,000 distinct stacks and 200 MPI
call sites. Then, once each (the machine is shared): pfinalize -r res (one process, -j 2),
and again under `mpirun.openmpi -np 2` (each rank its share of the nodes, the last writes
res.job.db); then ROUNDS times each (the median printed): preport -r res (the summary),
-view mpi and -view hotspots -group-by rank, reading the job database (its short stacks), the
same from a copy without the short stacks (as an older pfinalize wrote it: every rank's
stacks and samples), and with it moved away (the node databases, as before the job database). Printed per size: wall and CPU
seconds (user + sys, children included), peak RSS (the largest process of the run: wait4's
ru_maxrss), raw, node database and job database bytes, as a Markdown table.

usage: bench/job-scale.py [BUILD_DIR] [SIZES] [ROUNDS] [SAMPLES,STACKS,SITES]
       (defaults: build, 64,256,1024, 3, 20000,2000,200)
"""
import glob
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time

WHO = "job-scale"
PER_NODE = 16
MPI_ENV = dict(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_btl_vader_single_copy_mechanism="none")
VIEWS = (("summary", []), ("mpi", ["-view", "mpi"]),
         ("rank", ["-view", "hotspots", "-group-by", "rank"]))


def timed(argv, env=None):
    """(wall s, CPU s, peak RSS MiB) of argv, which must exit 0."""
    t0 = time.monotonic()
    p = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    err = p.stderr.read().decode(errors="replace")
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.monotonic() - t0
    p.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit("%s: %s failed: %s" % (WHO, " ".join(argv[:6]), err.strip()[-800:]))
    return wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024.0


def median(runs):
    return tuple(statistics.median(r[i] for r in runs) for i in range(3))


def size_of(pattern):
    return sum(os.path.getsize(p) for p in glob.glob(pattern, recursive=True)
               if os.path.isfile(p))


def clear_dbs(res):
    for p in glob.glob(res + ".*/result.db") + glob.glob(res + ".job.db"):
        os.unlink(p)


def main():
    build = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build")
    sizes = [int(x) for x in (sys.argv[2] if len(sys.argv) > 2 else "64,256,1024").split(",")]
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    samples, stacks, sites = (sys.argv[4] if len(sys.argv) > 4 else "20000,2000,200").split(",")
    synth = os.path.join(build, "tests", "progs", "job-synth")
    pfinalize = os.path.join(build, "finalizer", "pfinalize")
    preport = os.path.join(build, "report", "preport")
    mpirun = shutil.which("mpirun.openmpi")
    for x in (synth, pfinalize, preport):
        if not os.access(x, os.X_OK):
            sys.exit("%s: missing '%s': build first" % (WHO, x))
    rows = []
    for ranks in sizes:
        work = tempfile.mkdtemp(prefix="pcollect-job-scale.")
        res = os.path.join(work, "res")
        nodes = max(1, ranks // PER_NODE)
        subprocess.run([synth, res, str(ranks), str(nodes), samples, stacks, sites], check=True,
                       stdout=subprocess.DEVNULL)
        row = {"ranks": ranks, "nodes": nodes, "raw": size_of(res + ".*/raw/*")}
        print("%s: %d ranks on %d nodes, %.0f MB of streams" % (WHO, ranks, nodes,
                                                                 row["raw"] / 1e6), flush=True)
        row["fin1"] = timed([pfinalize, "-q", "-r", res, "-j", "2"])
        if mpirun:
            clear_dbs(res)
            row["finmpi"] = timed([mpirun, "--oversubscribe", "-np", "2", pfinalize, "-q", "-r",
                                   res, "-j", "1"], env=dict(os.environ, **MPI_ENV))
        row["dbs"] = size_of(res + ".*/result.db")
        row["jobdb"] = size_of(res + ".job.db")
        for name, args in VIEWS:
            row[name] = median([timed([preport, "-r", res] + args) for _ in range(rounds)])
        # The job database as an older pfinalize wrote it: without the short stacks.
        shutil.copy(res + ".job.db", res + ".job.db.full")
        with sqlite3.connect(res + ".job.db.full") as db:
            for t in ("job_agg", "agg_stacks", "agg_samples"):
                db.execute("DROP TABLE IF EXISTS " + t)
        os.rename(res + ".job.db", res + ".job.db.short")
        os.rename(res + ".job.db.full", res + ".job.db")
        for name, args in VIEWS:
            row[name + "-full"] = median([timed([preport, "-r", res] + args)
                                          for _ in range(rounds)])
        os.rename(res + ".job.db", res + ".job.db.away")
        for name, args in VIEWS:
            row[name + "-nodes"] = median([timed([preport, "-r", res] + args)
                                           for _ in range(rounds)])
        rows.append(row)
        print("%s: %r" % (WHO, row), flush=True)
        shutil.rmtree(work)

    def cell(t):
        return "%.2f s / %.2f s / %.0f MiB" % t

    print("\n| ranks (nodes) | streams | node DBs | job DB | pfinalize -j 2 | mpirun -np 2 "
          "pfinalize | summary | -view mpi | -group-by rank | summary, node DBs | -view mpi, "
          "node DBs | -group-by rank, node DBs |")
    print("|---|---:|---:|---:|---|---|---|---|---|---|---|---|")
    for r in rows:
        print("| %d (%d) | %.0f MB | %.0f MB | %.0f MB | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            r["ranks"], r["nodes"], r["raw"] / 1e6, r["dbs"] / 1e6, r["jobdb"] / 1e6,
            cell(r["fin1"]), cell(r["finmpi"]) if "finmpi" in r else "-", cell(r["summary"]),
            cell(r["mpi"]), cell(r["rank"]), cell(r["summary-nodes"]), cell(r["mpi-nodes"]),
            cell(r["rank-nodes"])))
    print("\n| ranks | summary, short stacks | -view mpi, short stacks | -group-by rank, short "
          "stacks | summary, full tables | -view mpi, full tables | -group-by rank, full tables |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print("| %d | %s | %s | %s | %s | %s | %s |" % (
            r["ranks"], cell(r["summary"]), cell(r["mpi"]), cell(r["rank"]),
            cell(r["summary-full"]), cell(r["mpi-full"]), cell(r["rank-full"])))
    print("\n(each cell: wall / CPU (user + sys, children) / peak RSS of the largest process)")


main()
