#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""An MPI library's unnamed progress loop is "[MPI progress]" (issue 23, item 7).

usage: mpi-progress.py mpich|openmpi

tests/progs/mpi-wait.c as two ranks of Debian's MPICH (ch4 over UCX) or Open MPI: rank 0
computes for 400 ms of CPU time while rank 1 waits for its message in MPI_Recv, polling (both
MPIs' default). The libraries (libmpich, libucp/libuct; libopen-pal, mca_btl_vader) are
stripped of their local symbols: their progress loop was func@0x... under MPI_Recv (MPICH's
from its first frame in, Open MPI's inside its named opal_progress). Known answers, the CPU
times each rank measured: under rank 1's MPI_Recv (PMPI_Recv) is "[MPI progress]", and the
progress loop ("[MPI progress]" or opal_progress, the outermost, and Open MPI's wait around
it) has all the call's CPU time; no func@ frame lies under MPI_Recv (2% of it at most); rank 0's compute() holds its
own; the split between rank 1's wait and rank 0's compute is the measured one. Times within
e2elib.Sampled's tolerance. MPI_Init's unnamed code is not progress. The job's output and
exit code are the same with and without pcollect."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2elib as e  # noqa: E402
import mpilib  # noqa: E402

NODE = "nodeA"
PROGRESS = "[MPI progress]"
LOOPS = (PROGRESS, "opal_progress", "ucp_worker_progress", "opal_progress@plt",
         "ucp_worker_progress@plt")
# Open MPI's receive waits in a loop of its own around opal_progress(), inlined into the
# PML's function (ompi_request_wait_completion): its self time is that loop's (36 ms of
# 411 in a run on a loaded machine).
WAITS = ("mca_pml_ob1_recv",)


def subtree(td, at):
    """The rows of the top-down tree below row index at."""
    depth = int(td[at]["Depth"])
    out = []
    for row in td[at + 1:]:
        if int(row["Depth"]) <= depth:
            break
        out.append(row)
    return out


def loops(rows):
    """The outermost rows of a subtree that are the progress loop: "[MPI progress]" or a
    progress function the library names (Open MPI's opal_progress)."""
    out, inside = [], None
    for row in rows:
        depth = int(row["Depth"])
        if inside is not None and depth > inside:
            continue
        inside = None
        if row["Function Stack"] in LOOPS:
            out.append(row)
            inside = depth
    return out


def main():
    if len(sys.argv) != 2 or sys.argv[1] not in mpilib.ABIS:
        e.fail("usage: mpi-progress.py mpich|openmpi")
    abi = sys.argv[1]
    mpilib.launcher(abi)  # skips where this MPI is not installed
    prog = mpilib.built(os.path.join("tests", "progs", "mpi-wait-" + abi),
                        "no %s headers at build time" % abi, mpilib.PACKAGES[abi].split())
    with e.Workdir("mpi-progress-" + abi) as w:
        res = w.join("res")
        cp = mpilib.job(abi, [NODE], 2, res, [prog, w.path],
                        options=["-knob", "sampling-interval=1"], timeout=60)
        # What the ranks print alone is known (mpi-wait.c: the double rank 0 sends, 1.5):
        # the job is not run alone first to learn it.
        e.check(sorted(cp.stdout.splitlines()) == ["rank 0: x=1.5", "rank 1: x=1.5"],
                "%s: the job's output is the same under pcollect (%r)" % (abi, cp.stdout))
        e.finalize(res)
        part = res + "." + NODE
        k = {}
        for r in (0, 1):
            with open(w.join("figures.%d" % r)) as f:
                key, value = f.read().split("=")
                k[key] = int(value)

        # Rank 1: MPI_Recv's time is the library's progress loop, named.
        stats1 = e.db_sampled(part, "p.rank = 1")
        td = e.rows(part, "-view", "top-down", "-threshold", "0", "-filter", "rank=1")
        at = [i for i, x in enumerate(td) if x["Function Stack"] in ("MPI_Recv", "PMPI_Recv")
              and x["Module"].startswith("libmpi")]
        e.check(len(at) == 1, "%s: rank 1's top-down has one MPI_Recv (%s)" % (
            abi, [x["Function Stack"] for x in td[:12]]))
        recv = td[at[0]]
        below = subtree(td, at[0])
        names = sorted(set(x["Function Stack"] for x in below))
        e.check(PROGRESS in names, "%s: under MPI_Recv is '%s' (%s)" % (abi, PROGRESS, names))
        got = sum(e.ns(x["CPU Time:Total"]) for x in loops(below)) + \
            sum(e.ns(x["CPU Time:Self"]) for x in below if x["Function Stack"] in WAITS)
        e.check_time(stats1, e.ns(recv["CPU Time:Total"]), k["recv_ns"],
                     "%s: rank 1's MPI_Recv" % abi, stretches=1)
        e.check_time(stats1, got, k["recv_ns"], "%s: the progress loop under MPI_Recv" % abi,
                     stretches=2)
        unnamed = sum(e.ns(x["CPU Time:Self"]) for x in below
                      if x["Function Stack"].startswith("func@"))
        e.check(unnamed <= 0.02 * e.ns(recv["CPU Time:Total"]),
                "%s: func@ frames under MPI_Recv hold %.1f ms of %.1f (%s)" % (
                    abi, unnamed / 1e6, e.ns(recv["CPU Time:Total"]) / 1e6, names))

        # Rank 0: its compute is its own.
        stats0 = e.db_sampled(part, "p.rank = 0")
        hs0 = {x["Function"]: x for x in e.rows(part, "-view", "hotspots", "-threshold", "0",
                                                 "-filter", "rank=0")}
        e.check("compute" in hs0, "%s: rank 0's hotspots has compute" % abi)
        comp = e.ns(hs0["compute"]["CPU Time:Total"])
        e.check_time(stats0, comp, k["compute_ns"], "%s: rank 0's compute" % abi,
                     stretches=1)
        e.check_split(stats1, got, stats0, comp,
                      k["recv_ns"] / (k["recv_ns"] + k["compute_ns"]),
                      "%s: rank 1's wait against rank 0's compute" % abi, stretches=2)

        # MPI_Init's unnamed code is initialization, not progress.
        hs1 = e.rows(part, "-view", "top-down", "-threshold", "0", "-filter", "rank=1")
        init = [i for i, x in enumerate(hs1) if x["Function Stack"] in ("MPI_Init",
                                                                          "PMPI_Init")]
        for i in init:
            kids = [x for x in subtree(hs1, i) if int(x["Depth"]) == int(hs1[i]["Depth"]) + 1]
            e.check(all(x["Function Stack"] != PROGRESS for x in kids),
                    "%s: MPI_Init's own code is not %s" % (abi, PROGRESS))
    print("ok: %s's progress loop named under MPI_Recv" % abi)


main()
