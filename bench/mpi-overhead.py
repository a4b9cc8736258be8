#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""What -trace-mpi adds to an MPI call, side by side in one run.

bench/mpi-calls.c (built here with mpicc.openmpi and mpicc.mpich, those installed) makes
N small MPI calls (MPI_Iprobe, MPI_Allreduce of one int, MPI_Sendrecv of 8 bytes to itself,
in turn) on one rank and prints its CPU time across the loop. Each MPI runs it plain (mpirun
-np 1), under pcollect without -trace-mpi and under pcollect -trace-mpi, interleaved
round-robin (bench/benchlib.py's reasons); printed per variant: the median loop CPU time and
per call, and the median added per call by -trace-mpi over pcollect alone (the paired
difference of the same round). With Open MPI first in LD_PRELOAD, an MPICH program's calls
pass through the Open MPI shim to the MPICH one: that forwarding is in MPICH's figure.

usage: bench/mpi-overhead.py [BUILD_DIR] [ROUNDS] [CALLS]   (defaults: build, 11, 100000)
"""
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

WHO = "mpi-overhead"
HERE = os.path.dirname(os.path.abspath(__file__))


def loop_ns(argv, env):
    cp = subprocess.run(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                        text=True)
    for line in cp.stdout.splitlines():
        words = line.split()
        if cp.returncode == 0 and len(words) >= 4 and words[0] == "calls":
            return int(words[3])
    sys.exit("%s: %s failed (exit %d): %s" % (WHO, " ".join(argv), cp.returncode,
                                              cp.stderr.strip()[-500:]))


def main():
    build = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build")
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 11
    calls = int(sys.argv[3]) if len(sys.argv) > 3 else 100000
    pcollect = os.path.join(build, "collector", "pcollect")
    if not os.access(pcollect, os.X_OK):
        sys.exit("%s: missing '%s': build first" % (WHO, pcollect))
    work = tempfile.mkdtemp(prefix="mpi-overhead.")
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    abis = [a for a in ("openmpi", "mpich")
            if shutil.which("mpicc." + a) and shutil.which("mpirun." + a)]
    if not abis:
        sys.exit("%s: neither mpicc.openmpi nor mpicc.mpich is installed" % WHO)
    n = [0]

    def fresh():
        n[0] += 1
        return os.path.join(work, "r%d" % n[0])

    variants = []
    for abi in abis:
        prog = os.path.join(work, "mpi-calls-" + abi)
        subprocess.run(["mpicc." + abi, "-O2", "-g", "-o", prog,
                        os.path.join(HERE, "mpi-calls.c")], check=True)
        run = ["mpirun." + abi, "-np", "1"]
        pc = [pcollect, "-collect", "hotspots", "-quiet", "-finalization-mode=none"]
        variants += [
            (abi, "plain", lambda run=run, prog=prog: run + [prog, str(calls)]),
            (abi, "pcollect", lambda run=run, pc=pc, prog=prog:
             run + pc + ["-r", fresh(), "--", prog, str(calls)]),
            (abi, "pcollect -trace-mpi", lambda run=run, pc=pc, prog=prog:
             run + pc + ["-trace-mpi", "-r", fresh(), "--", prog, str(calls)]),
        ]
    times = {(a, v): [] for a, v, _ in variants}
    for a, v, argv in variants:
        loop_ns(argv(), env)  # warm-up
    for _ in range(rounds):
        for a, v, argv in variants:
            times[(a, v)].append(loop_ns(argv(), env))
        for name in os.listdir(work):
            if name.startswith("r"):
                shutil.rmtree(os.path.join(work, name), ignore_errors=True)
    print("%d calls, medians of %d interleaved rounds (loop CPU time)" % (calls, rounds))
    print("%-8s %-20s %12s %10s %16s" % ("mpi", "run", "loop ms", "ns/call", "added ns/call"))
    for a in abis:
        base = times[(a, "pcollect")]
        for v in ("plain", "pcollect", "pcollect -trace-mpi"):
            t = times[(a, v)]
            added = ""
            if v == "pcollect -trace-mpi":
                added = "%.1f" % (statistics.median(x - b for x, b in zip(t, base)) / calls)
            print("%-8s %-20s %12.3f %10.1f %16s" % (a, v, statistics.median(t) / 1e6,
                                                     statistics.median(t) / calls, added))
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
