#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""-trace-mpi on a real MPI launch, four ranks on two simulated nodes, with known answers.

usage: mpi-job.py openmpi|mpich c|fortran

c: tests/progs/mpi-job.c, first alone without a launcher (MPI's singleton: its rank 0
comes from MPI_Comm_rank, no launcher variable). Then rank r computes (r + 1) units of CPU time (120 ms) then meets the
others in MPI_Barrier, so rank 0 waits longest there; then rings of MPI_Sendrecv and of
MPI_Irecv/MPI_Isend/MPI_Waitall, 60 rounds each, whose calls and bytes are exact per rank,
in the region "rings" the program names (-filter region=, -group-by region).
The job is finalized as one (pfinalize -r res, then again under the launcher, one node a
rank) and reported as one (preport -r res): -view mpi by rank and node, -filter rank,
hotspots and top-down by node with -filter node, the summary's MPI Time, imbalance, mean
compute, slowest and fastest ranks.

fortran: tests/progs/mpi-fort.f90 through the Fortran bindings: its ring of 50 MPI_Sendrecv
calls exact per rank (counted once, though MPICH's binding calls the C function), under the
Fortran subroutine that made them; the binding's frames named as the C functions (MPI_Sendrecv,
not mpi_sendrecv_ or ompi_sendrecv_f), which -filter function= takes.
"""
import json
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2elib as e  # noqa: E402
import mpilib  # noqa: E402

NODES = ("nodeA", "nodeB")
RANKS = 4
UNIT_MS = 120
ROUNDS = 60


def finalize_job(abi, res):
    """pfinalize -r res finalizes both nodes; under the launcher each rank takes one."""
    parts = [res + "." + n for n in NODES]
    cp = e.pfinalize(res, ["-j", "2"])
    e.check(cp.returncode == 0 and all(os.path.exists(os.path.join(p, "result.db"))
                                       for p in parts),
            "pfinalize -r res -j 2 finalizes %s (stderr: %s)" % (parts, cp.stderr[-800:]))
    for p in parts:
        os.unlink(os.path.join(p, "result.db"))
    argv = [mpilib.launcher(abi)] + (["--oversubscribe"] if abi == "openmpi" else []) + [
        "-np", "2", e.tool("pfinalize"), "-r", res]
    cp = e.run(argv, env=mpilib.env(abi), timeout=300)
    e.check(cp.returncode == 0 and all(os.path.exists(os.path.join(p, "result.db"))
                                       for p in parts) and
            cp.stderr.count("finalizing 1 node result of a parallel job (this rank's share)")
            == 2, "%s -np 2 pfinalize -r res: each rank finalizes one node (stderr: %s)"
            % (os.path.basename(argv[0]), cp.stderr[-1500:]))


def compute_by_rank(res):
    """CPU Time in compute() per rank, from the job's report."""
    return {int(r["Rank"]): round(float(r["CPU Time:Total"]) * 1e9)
            for r in e.rows(res, "-view", "hotspots", "-group-by", "rank,function",
                                 "-filter", "function=compute", "-metric", "CPU Time")
            if r["Function"] == "compute"}


def singleton(abi, w, prog):
    """Started without a launcher, the program is a job of one (MPI's singleton init): no
    launcher variable names its rank, so rank 0 can come only from MPI_Comm_rank, and
    without -trace-mpi the process has no rank. (Open MPI's singleton starts a helper
    daemon, a process of no rank: the program's own process is the one looked at.)"""
    for traced in (True, False):
        res = w.join("single-%s" % ("mpi" if traced else "plain"))
        run = e.pcollect([prog, "20", "5"], result=res, env=mpilib.mpi_vars(abi),
                         finalization="full",
                         options=["-trace-mpi"] if traced else [])
        e.check(run.returncode == 0 and run.stdout == "rank 0 of 1 done, sum 0\n",
                "%s singleton runs (%r %s)" % (abi, run.stdout, run.stderr[-800:]))
        ranks = [x["Rank"] for x in e.rows(res, "-view", "hotspots", "-group-by",
                                                 "rank", "-metric", "CPU Time", "-filter",
                                                 "process=" + os.path.basename(prog))]
        e.check(ranks == (["0"] if traced else [""]),
                "singleton %s -trace-mpi: rank %s (got %s)" % (
                    "with" if traced else "without", "0 from MPI" if traced else "none",
                    ranks))
    mpilib.check_ring(mpilib.mpi_cells(w.join("single-mpi")), 1, 5, "singleton ring")


def part_c(abi, w):
    mpilib.shim(abi)
    prog = mpilib.built(os.path.join("tests", "progs", "mpi-job-" + abi),
                        "no %s development files at build time" % abi,
                        mpilib.PACKAGES[abi].split())
    singleton(abi, w, prog)
    res = w.join("res")
    cp = mpilib.job(abi, NODES, 2, res, [prog, str(UNIT_MS), str(ROUNDS)],
                    options=["-knob", "sampling-interval=2"])
    e.check(sorted(line for line in cp.stdout.splitlines() if line) ==
            ["rank %d of 4 done, sum 6" % r for r in range(RANKS)],
            "every rank ran to its end (%r)" % cp.stdout)
    finalize_job(abi, res)

    # compute 1:2:3:4, each its CPU-time budget within the tolerance of the rank's samples
    # (e2elib.Sampled: one stretch a rank)
    compute = compute_by_rank(res)
    e.check(sorted(compute) == list(range(RANKS)), "compute() sampled in every rank (%s)"
            % compute)
    tol = {}
    for r in range(RANKS):
        stats = mpilib.rank_stats(res, NODES, r)
        tol[r] = stats.time_tolerance_ns(compute[r], 1)
        e.check_time(stats, compute[r], (r + 1) * UNIT_MS * 1000000, "rank %d computes" % r,
                     stretches=1)

    # the rings: exact calls and bytes per rank, whatever the status given
    cells = mpilib.mpi_cells(res)
    mpilib.check_ring(cells, RANKS, ROUNDS, "sendrecv ring")
    mpilib.check_ring(cells, RANKS, ROUNDS, "nonblocking ring", fn="MPI_Isend",
                      received=False)
    mpilib.check_ring(cells, RANKS, ROUNDS, "nonblocking ring", fn="MPI_Irecv", sent=False,
                      received=False)
    mpilib.check_ring(cells, RANKS, ROUNDS, "nonblocking ring", fn="MPI_Waitall",
                      sent=False)
    # the wait in the collective: rank 0 arrives first and waits longest
    barrier = {r: float(cells[(r, "MPI_Barrier")]["MPI Time"]) for r in range(RANKS)}
    e.check(max(barrier, key=barrier.get) == 0 and barrier[0] > barrier[3],
            "rank 0 waits longest in MPI_Barrier (%s)" % barrier)
    for r in range(RANKS):
        e.check(int(cells[(r, "MPI_Barrier")]["Calls"]) == 1 and
                int(cells[(r, "MPI_Allreduce")]["Bytes Sent"]) == 8,
                "rank %d: one MPI_Barrier, one MPI_Allreduce of 8 bytes" % r)

    # by node, by rank, one rank
    nodes = {x["Node"]: x for x in e.rows(res, "-view", "mpi", "-group-by", "node")}
    e.check(sorted(nodes) == list(NODES) and all(int(x["Ranks"]) == 2 and
                                                 int(x["Calls"]) > 0 for x in nodes.values()),
            "-view mpi -group-by node: two nodes of two ranks (%s)" % nodes)
    one = e.rows(res, "-view", "mpi", "-group-by", "rank", "-filter", "rank=2")
    e.check([x["Rank"] for x in one] == ["2"] and
            int(one[0]["Bytes Sent"]) == 2 * ROUNDS * 3 * 1024 + 8,
            "-filter rank=2 keeps rank 2 alone (%s)" % one)
    # the rings ran in the region "rings": their calls, the summed short ones too, count there
    ring = {x["Function"]: int(x["Calls"])
            for x in e.rows(res, "-view", "mpi", "-filter", "region=rings")}
    e.check(ring == {f: RANKS * ROUNDS for f in ("MPI_Sendrecv", "MPI_Isend", "MPI_Irecv",
                                                 "MPI_Waitall")},
            "-view mpi -filter region=rings: the rings' calls, all of them, alone (%s)" % ring)
    regions = {x["Region"]: int(x["MPI Calls:Self"])
               for x in e.rows(res, "-view", "hotspots", "-group-by", "region",
                                    "-metric", "MPI Calls")}
    e.check(regions.get("rings") == 4 * RANKS * ROUNDS and regions.get("[no region]", 0) > 0,
            "hotspots -group-by region: the rings' MPI calls in 'rings', the others outside "
            "(%s)" % regions)
    fn = {x["Function"]: x for x in e.rows(res, "-view", "mpi")}
    e.check(int(fn["MPI_Sendrecv"]["Calls"]) == RANKS * ROUNDS and
            int(fn["MPI_Sendrecv"]["Ranks"]) == RANKS and
            fn["MPI_Barrier"]["Rank of Max"] == "0" and fn["MPI_Barrier"]["Kind"] ==
            "collective", "-view mpi: per function over the ranks (%s)" % fn["MPI_Barrier"])
    # its spread over the ranks is that of the ranks' own rows (population stddev)
    mean = sum(barrier.values()) / RANKS
    spread = {"Min Rank Time": min(barrier.values()), "Max Rank Time": max(barrier.values()),
              "Mean Rank Time": mean, "Stddev Rank Time": math.sqrt(
                  sum((x - mean) ** 2 for x in barrier.values()) / RANKS)}
    e.check(all(abs(float(fn["MPI_Barrier"][k]) - v) <= 0.002 for k, v in spread.items()) and
            fn["MPI_Barrier"]["Rank of Min"] == str(min(barrier, key=barrier.get)),
            "-view mpi: MPI_Barrier's min, max, mean, stddev over the ranks are %s (%s)"
            % (spread, fn["MPI_Barrier"]))

    # every view by node and filtered to one: compute 1+2 units on nodeA, 3+4 on nodeB
    by_node = {x["Node"]: round(float(x["CPU Time:Self"]) * 1e9)
               for x in e.rows(res, "-view", "hotspots", "-group-by", "node,function",
                                    "-filter", "function=compute", "-metric", "CPU Time")
               if x["Function"] == "compute"}
    for node, units in zip(NODES, (3, 7)):
        e.check(node in by_node, "hotspots -group-by node: a row for %s (%s)" % (node, by_node))
        e.check_time(e.db_sampled("%s.%s" % (res, node)), by_node.get(node, 0),
                     units * UNIT_MS * 1000000, "hotspots -group-by node: %s computes" % node,
                     stretches=2)
    tree = e.rows(res, "-view", "top-down", "-group-by", "node", "-filter",
                       "node=" + NODES[1], "-metric", "CPU Time", "-threshold", "0")
    groups = [x["Function Stack"].strip() for x in tree if x["Group"] == "node"]
    under = [round(float(x["CPU Time:Self"]) * 1e9) for x in tree
             if x["Function Stack"].strip() == "compute"]
    e.check(groups == [NODES[1]] and len(under) == 1 and under[0] == by_node.get(NODES[1]),
            "top-down -group-by node -filter node=%s: that node alone, its compute as "
            "hotspots gives it (%s %s)" % (NODES[1], groups, under))

    # the calls sit under the functions that made them
    sites = e.rows(res, "-view", "hotspots", "-metric", "MPI Calls", "-filter",
                        "function=sendrecv_ring")
    e.check(sum(int(x["MPI Calls:Self"]) for x in sites) == RANKS * ROUNDS,
            "the MPI_Sendrecv calls are under sendrecv_ring (%s)" % sites)

    # the summary: imbalance (max - mean) / max of compute, 0.375 for 1:2:3:4, within what the
    # ranks' tolerances allow: the mean's (their mean) over max, and max's, mean / max^2
    summary = {(x["Section"], x["Metric"]): x for x in e.rows(res)}
    imb = float(summary[("MPI", "MPI Imbalance")]["Value"])
    top = 4 * UNIT_MS * 1e6
    tol_mean = sum(tol.values()) / RANKS
    tol_imb = 100 * (tol_mean / top + 2.5 * UNIT_MS * 1e6 * tol[3] / top ** 2) + 0.1
    e.check(abs(imb - 37.5) <= tol_imb, "MPI Imbalance %.1f%%, known 37.5%% (+- %.1f)"
            % (imb, tol_imb))
    e.check(summary[("MPI", "Slowest Rank")]["Value"].startswith("3 ") and
            summary[("MPI", "Fastest Rank")]["Value"].startswith("0 ") and
            summary[("MPI", "Ranks")]["Value"] == "4",
            "slowest rank 3, fastest 0, 4 ranks")
    mpi_ns = sum(float(x["MPI Time"]) for x in e.rows(res, "-view", "mpi")) * 1e9
    got = summary[("MPI", "MPI Time")]
    e.check(abs(float(got["Value"]) * 1e9 - mpi_ns) <= 0.002e9 + 0.001 * mpi_ns and
            0 < float(got["Percent"]) < 100,
            "summary MPI Time %s s (%s%% of the ranks' elapsed) is -view mpi's %.3f s" % (
                got["Value"], got["Percent"], mpi_ns / 1e9))
    mean = round(float(summary[("MPI", "Mean Compute Time")]["Value"]) * 1e9)
    e.check(abs(mean - 2.5 * UNIT_MS * 1e6) <= tol_mean + 1e6,
            "Mean Compute Time %.3f s, known %.3f s (+- %.3f: the ranks' tolerances' mean)"
            % (mean / 1e9, 2.5 * UNIT_MS / 1000, tol_mean / 1e9))
    e.check(any(s == "Top MPI Call Sites" and m.startswith("MPI_Barrier from main")
                for s, m in summary), "MPI_Barrier from main is a top MPI call site")

    # the job's timeline: the long calls as slices that start when they began
    trace = json.loads(e.preport("-r", res, "-format", "chrome").stdout)
    barriers = [x for x in trace["traceEvents"] if x.get("cat") == "MPI Time" and
                x.get("name", "").endswith("MPI_Barrier")]
    e.check(len(barriers) >= 1 and all(x["ts"] >= 0 and x["dur"] > 0 for x in barriers),
            "-format chrome of the job: MPI_Barrier slices in time (%d)" % len(barriers))


def part_fortran(abi, w):
    mpilib.shim(abi)
    prog = mpilib.built(os.path.join("tests", "progs", "mpi-fort-" + abi),
                        "no mpif90.%s or gfortran at build time" % abi,
                        mpilib.PACKAGES[abi].split() + ["gfortran"])
    res = w.join("fres")
    cp = mpilib.job(abi, NODES, 2, res, [prog])
    e.check(len([x for x in cp.stdout.splitlines() if x.endswith(" of 4 done")]) == RANKS,
            "every Fortran rank ran to its end (%r)" % cp.stdout)
    cells = mpilib.mpi_cells(res)
    mpilib.check_ring(cells, RANKS, 50, "Fortran ring")
    for r in range(RANKS):
        e.check(int(cells[(r, "MPI_Barrier")]["Calls"]) == 1 and
                int(cells[(r, "MPI_Allreduce")]["Bytes Received"]) == 8 and
                int(cells[(r, "MPI_Init")]["Calls"]) == 1,
                "rank %d: MPI_Init, MPI_Barrier and MPI_Allreduce once each" % r)
    sites = e.rows(res, "-view", "hotspots", "-metric", "MPI Calls", "-filter",
                        "function=fort_ring")
    e.check(sum(int(x["MPI Calls:Self"]) for x in sites) == RANKS * 50,
            "the Fortran MPI_Sendrecv calls are under fort_ring (%s)" % sites)
    # One name for an MPI function whatever the binding (issue 23, item 8): the Fortran
    # binding's frame (mpi_sendrecv_, MPI_SENDRECV, Open MPI's ompi_sendrecv_f) is MPI_Sendrecv,
    # as in -view mpi, and -filter function= takes that name.
    calls = {x["Function"]: int(x["MPI Calls:Self"]) for x in e.rows(
        res, "-view", "hotspots", "-metric", "MPI Calls", "-call-stack-mode", "all")
        if int(x["MPI Calls:Self"])}
    e.check(calls.get("MPI_Sendrecv") == RANKS * 50 and
            set(calls) == {"MPI_Init", "MPI_Barrier", "MPI_Allreduce", "MPI_Sendrecv",
                           "MPI_Finalize"},
            "the binding's frames are named as the C functions: %s" % calls)
    kept = e.rows(res, "-view", "hotspots", "-metric", "MPI Calls", "-filter",
                  "function=MPI_Sendrecv")
    e.check(sum(int(x["MPI Calls:Self"]) for x in kept) == RANKS * 50,
            "-filter function=MPI_Sendrecv keeps the Fortran calls")


def main():
    if len(sys.argv) != 3 or sys.argv[2] not in ("c", "fortran"):
        e.fail("usage: mpi-job.py openmpi|mpich c|fortran")
    abi, part = sys.argv[1], sys.argv[2]
    mpilib.launcher(abi)
    with e.Workdir("mpi-" + abi) as w:
        (part_c if part == "c" else part_fortran)(abi, w)


if __name__ == "__main__":
    main()
