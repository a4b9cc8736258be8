#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A -trace-mpi job killed with -9 (issue 22, item 6): two ranks of tests/progs/mpi-loop
(MPI_Allreduce on one double in a loop, each rank printing when its loop began and
counting its calls in a file it maps) under mpirun, each under pcollect -trace-mpi; 0.5 s into the loop both ranks are killed with
SIGKILL, as a scheduler's last word does (the issue's job kept only MPI_Init when killed
0.2-0.5 s into its loop). The calls are short (summed per call site): the sums must have
reached the disk on their own, so each rank's MPI view holds at least the MPI_Allreduce
calls the rank had made 0.3 s before the kill (its file, read then), and an MPI Time of at
least its time in the loop up to the kill less 0.3 s (the loop is nothing but the calls;
the agent writes the sums every 100 ms of the thread's sampling).

Usage: mpi-killed.py ABI (openmpi)."""
import os
import signal
import struct
import subprocess
import sys
import time

import e2elib as e
import mpilib

KILL_AFTER_S, SLACK_NS, RANKS = 0.5, 300000000, 2

abi = sys.argv[1] if len(sys.argv) > 1 else "openmpi"
argv0 = mpilib.launcher(abi)
mpilib.shim(abi)
prog = mpilib.built(os.path.join("tests", "progs", "mpi-loop-" + abi),
                    "no %s headers at build time" % abi, mpilib.PACKAGES[abi].split())

with e.Workdir("mpi-killed") as w:
    res = w.join("res")
    argv = [argv0] + (["--oversubscribe"] if abi == "openmpi" else []) + [
        "-np", str(RANKS), e.tool("pcollect"), "-collect", "hotspots", "-trace-mpi", "-r",
        res, "-finalization-mode=none", "-quiet", "--", prog, w.path]
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=dict(os.environ, **mpilib.env(abi)))
    ranks = {}
    while len(ranks) < RANKS:
        line = p.stdout.readline()
        if not line:
            p.kill()
            e.fail("the job ended before its loops began: %s" % p.stderr.read()[-1500:])
        if line.startswith("looping "):
            f = dict(x.split("=") for x in line.split()[1:])
            ranks[int(f["rank"])] = (int(f["pid"]), int(f["start_ns"]))
    time.sleep(KILL_AFTER_S - SLACK_NS / 1e9)
    before = {}
    for r in ranks:
        with open(w.join("calls.%d" % r), "rb") as f:
            before[r] = struct.unpack("=Q", f.read(8))[0]
    time.sleep(SLACK_NS / 1e9)
    for pid, _ in ranks.values():
        os.kill(pid, signal.SIGKILL)
    killed = time.monotonic_ns()
    try:
        p.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()
    e.finalize(res)
    cells = mpilib.mpi_cells(res)
    for r, (pid, start) in sorted(ranks.items()):
        row = cells.get((r, "MPI_Allreduce"))
        got = round(float(row["MPI Time"]) * 1e9) if row else 0
        looped = killed - start
        calls = int(row["Calls"]) if row else 0
        e.check(calls >= before[r],
                "rank %d: %d MPI_Allreduce calls recorded, %d made 0.3 s before the kill" % (
                    r, calls, before[r]))
        e.check(got >= looped - SLACK_NS,
                "rank %d: MPI_Allreduce %.0f ms, %.0f ms of calls made up to the kill" % (
                    r, got / 1e6, looped / 1e6))
