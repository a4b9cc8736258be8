#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""What the views call an OpenMP program's parts (issue 23, item 7): tests/progs/omp-regions
(two parallel regions in main, 6 and 4 units of work, a thread waiting at each region's
barrier), built with gcc and libgomp or clang and libomp (argument gomp or libomp), stripped
with its DWARF in a debug file beside it, as a distribution ships it; the runtimes are
Debian's, stripped of their local symbols. With OMP_WAIT_POLICY=active the waiting thread
spins (and with KMP_USE_YIELD=0 libomp's does not yield the processor at every turn, which
leaves the spin a few milliseconds of CPU time on a busy machine). Known answers: the two regions are two rows, "main [omp parallel at
omp-regions.c:LINE]" at their directives' lines, each with the CPU time the program measured
in it; "[OpenMP barrier wait]" (the runtime's spin, unnamed in its library) holds the CPU
time the program measured between each thread's end of work and its region's end; the
worker thread's root is "[OpenMP worker]", with all the worker's CPU time; no unnamed
function of the runtime holds more than 2% of the CPU time. Times within e2elib.Sampled's
tolerance (10 ms more for the spin until the program exits). The program's output and exit
code are the same with and without pcollect."""
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2elib as e  # noqa: E402

PROGS = {"gomp": "omp-regions", "libomp": "omp-regions-libomp"}
LIBS = {"gomp": "libgomp", "libomp": "libomp"}
SPIN_EXTRA_NS = 10000000  # the worker spins on from the program's last clock read to its exit
THREAD_ENTRIES = ("start_thread", "clone", "clone3", "__clone", "__clone3")


def main():
    runtime, built = e.omp_program(PROGS)
    lib = LIBS[runtime]
    src = os.path.join(e.SOURCE, "tests", "progs", "omp-regions.c")
    lines = [e.source_line(src, "REGION-1"), e.source_line(src, "REGION-2")]
    regions = ["main [omp parallel at omp-regions.c:%d]" % n for n in lines]
    with e.Workdir("omp-names-" + runtime) as w:
        prog = w.join("omp-regions")
        shutil.copy(built, prog)
        e.run_ok(["objcopy", "--only-keep-debug", prog, prog + ".debug"])
        e.run_ok(["objcopy", "--strip-all", "--add-gnu-debuglink=" + prog + ".debug", prog])
        with open(prog, "rb") as f:
            data = f.read()
        e.check(b".symtab" not in data and b".debug_info" not in data,
                "%s: the program is stripped, its DWARF in omp-regions.debug" % runtime)
        figures = w.join("figures.txt")
        # Its output is known (omp-regions.c): it is not run alone first to learn it.
        res = e.collect(w, "res", [prog, figures], interval=1,
                        stdout="two regions of 2 threads\n", finalize=True,
                        options=["-knob", "sampling-clock=task-clock"],
                        env={"OMP_WAIT_POLICY": "active", "KMP_USE_YIELD": "0"})
        with open(figures) as f:
            k = dict((a, int(b)) for a, b in (x.split("=") for x in f.read().split()))
        busy = [k["r%d_t0_busy_ns" % r] + k["r%d_t1_busy_ns" % r] for r in (1, 2)]
        spin = sum(k["r%d_t%d_spin_ns" % (r, t)] for r in (1, 2) for t in (0, 1))
        stats = e.db_sampled(res)
        hs = {x["Function"]: x for x in e.rows(res, "-view", "hotspots", "-threshold", "0")}

        # The regions: two rows, at their directives, each with its work.
        for r in (0, 1):
            row = hs.get(regions[r])
            e.check(row is not None, "%s: hotspots has the row '%s' (%s)" % (
                runtime, regions[r], sorted(hs)[:12]))
            e.check(row["Source Line"] == str(lines[r]) and
                    row["Source File"].endswith("omp-regions.c"),
                    "%s: region %d at omp-regions.c:%d (%s:%s)" % (
                        runtime, r + 1, lines[r], row["Source File"], row["Source Line"]))
            e.check_time(stats, e.ns(row["CPU Time:Total"]), busy[r],
                         "%s: region %d's CPU time" % (runtime, r + 1), stretches=2)
        e.check_split(stats, e.ns(hs[regions[0]]["CPU Time:Total"]), stats,
                      e.ns(hs[regions[1]]["CPU Time:Total"]), busy[0] / (busy[0] + busy[1]),
                      "%s: the regions' split" % runtime, stretches=2)

        # The barrier wait: what the program measured its threads spin, and that share.
        row = hs.get("[OpenMP barrier wait]")
        e.check(row is not None and row["Module"].startswith(lib),
                "%s: hotspots has '[OpenMP barrier wait]' in %s" % (runtime, lib))
        got = e.ns(row["CPU Time:Total"])
        e.check(row.get("Spin Time:Total") == row["CPU Time:Total"],
                "%s: [OpenMP barrier wait] is Spin Time, all of it (%s of %s s)" % (
                    runtime, row.get("Spin Time:Total"), row["CPU Time:Total"]))
        e.check_time(stats, got, spin, "%s: [OpenMP barrier wait]" % runtime, stretches=4,
                     extra_ns=SPIN_EXTRA_NS)
        total = stats.total_ns
        want = spin / (k["t0_cpu_ns"] + k["t1_cpu_ns"])
        tol = stats.share_tolerance(want, stretches=4) + SPIN_EXTRA_NS / total
        share = float(row["CPU Time:Total %"]) / 100
        e.check(abs(share - want) <= tol + 0.001,
                "%s: [OpenMP barrier wait] has %.1f%% of the CPU time (the program's %.1f%% "
                "+- %.1f)" % (runtime, 100 * share, 100 * want, 100 * tol))

        # Nothing of the runtime left unnamed that matters.
        unnamed = sum(e.ns(x["CPU Time:Self"]) for x in hs.values()
                      if x["Function"].startswith("func@") and x["Module"].startswith(lib))
        e.check(unnamed <= 0.02 * total, "%s: %s's unnamed functions hold %.1f ms of %.1f" % (
            runtime, lib, unnamed / 1e6, total / 1e6))

        # The worker's root, in the top-down tree and in every sample of the worker.
        td = e.rows(res, "-view", "top-down", "-threshold", "0")
        roots = {x["Function Stack"]: x for x in td if x["Depth"] == "1"}
        e.check("[OpenMP worker]" in roots and roots["[OpenMP worker]"]["Module"].startswith(lib),
                "%s: top-down has the root '[OpenMP worker]' (%s)" % (runtime, sorted(roots)))
        e.check_time(stats, e.ns(roots["[OpenMP worker]"]["CPU Time:Total"]), k["t1_cpu_ns"],
                     "%s: [OpenMP worker] holds the worker's CPU time" % runtime, stretches=1,
                     extra_ns=SPIN_EXTRA_NS)
        for r in (0, 1):
            e.check(sum(1 for x in td if x["Function Stack"] == regions[r]) >= 2,
                    "%s: top-down has region %d under main and under the worker" % (
                        runtime, r + 1))
        db = e.Db(res)
        pid = db.threads[next(iter(db.threads))][1]
        weights = {}
        for th, sid, _c, weight, _v in db.samples:
            if db.threads[th][0] == pid:
                continue
            root = [f["name"] for f in db.stack(sid) if f["name"] not in THREAD_ENTRIES]
            key = root[0] if root else ""
            weights[key] = weights.get(key, 0) + weight
        worker = sum(weights.values())
        e.check(worker and weights.get("[OpenMP worker]", 0) >= 0.98 * worker,
                "%s: the worker's samples start at [OpenMP worker] (%s)" % (runtime, weights))


if __name__ == "__main__":
    main()
