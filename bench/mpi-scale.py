#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A parallel job's results finalized and reported as one, against the number of ranks.

For each job size (default 16, 32 and 64 ranks, 8 a node over simulated nodes:
PCOLLECT_HOSTNAME), tests/progs/mpi-job-<abi> runs briefly (5 ms of compute a unit, 20 ring
rounds) under pcollect -trace-mpi -finalization-mode=none, oversubscribed; then, ROUNDS
times each: pfinalize -r res -j 2 (every res.<node>, their databases removed before each
round) and preport -r res -view mpi, and preport -r res (the summary). Printed per size: the
medians of wall and CPU seconds (user + sys, children included) of each, and the raw and
database bytes. On a shared machine the CPU figures are the ones to compare.

usage: bench/mpi-scale.py [BUILD_DIR] [ABI] [ROUNDS] [SIZES]
       (defaults: build, mpich, 5, 16,32,64)
"""
import glob
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

WHO = "mpi-scale"
PER_NODE = 8


def timed(argv, env=None):
    t0 = time.monotonic()
    p = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.monotonic() - t0
    err = p.stderr.read().decode(errors="replace")
    p.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit("%s: %s failed: %s" % (WHO, " ".join(argv[:4]), err.strip()[-800:]))
    return wall, ru.ru_utime + ru.ru_stime


def size_of(pattern):
    return sum(os.path.getsize(p) for p in glob.glob(pattern, recursive=True)
               if os.path.isfile(p))


def main():
    build = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build")
    abi = sys.argv[2] if len(sys.argv) > 2 else "mpich"
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    sizes = [int(x) for x in (sys.argv[4] if len(sys.argv) > 4 else "16,32,64").split(",")]
    pcollect = os.path.join(build, "collector", "pcollect")
    pfinalize = os.path.join(build, "finalizer", "pfinalize")
    preport = os.path.join(build, "report", "preport")
    prog = os.path.join(build, "tests", "progs", "mpi-job-" + abi)
    mpirun = shutil.which("mpirun." + abi)
    for x in (pcollect, pfinalize, preport, prog):
        if not os.access(x, os.X_OK):
            sys.exit("%s: missing '%s': build first" % (WHO, x))
    if not mpirun:
        sys.exit("%s: mpirun.%s not installed" % (WHO, abi))
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    print("%6s %5s %10s %10s %10s %10s %10s %10s %9s %9s" % (
        "ranks", "nodes", "fin wall", "fin cpu", "mpi wall", "mpi cpu", "sum wall", "sum cpu",
        "raw KB", "db KB"))
    for ranks in sizes:
        work = tempfile.mkdtemp(prefix="mpi-scale.")
        res = os.path.join(work, "res")
        argv = [mpirun] + (["--oversubscribe"] if abi == "openmpi" else [])
        for n in range((ranks + PER_NODE - 1) // PER_NODE):
            if n:
                argv.append(":")
            argv += ["-np", str(min(PER_NODE, ranks - n * PER_NODE)), "env",
                     "PCOLLECT_HOSTNAME=node%02d" % n, pcollect, "-collect", "hotspots",
                     "-trace-mpi", "-r", res, "-finalization-mode=none", "-quiet", "--", prog,
                     "5", "20"]
        timed(argv, env)
        fin, view, summ = [], [], []
        for _ in range(rounds):
            for db in glob.glob(res + ".*/result.db"):
                os.unlink(db)
            fin.append(timed([pfinalize, "-r", res, "-j", "2", "-quiet"]))
            view.append(timed([preport, "-r", res, "-view", "mpi"]))
            summ.append(timed([preport, "-r", res]))

        def med(xs, i):
            return statistics.median(x[i] for x in xs)

        print("%6d %5d %10.3f %10.3f %10.3f %10.3f %10.3f %10.3f %9d %9d" % (
            ranks, len(glob.glob(res + ".*")), med(fin, 0), med(fin, 1), med(view, 0),
            med(view, 1), med(summ, 0), med(summ, 1),
            size_of(res + ".*/raw/*") // 1024, size_of(res + ".*/result.db") // 1024))
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
