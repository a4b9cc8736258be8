#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""OpenMP work under the call that began it (issue 24, item 4): tests/progs/stitch-omp, whose
main calls first(), a parallel region of 2 threads burning 1 unit of CPU time (100 ms) each,
then second(), a region of 2 threads burning 2 units each; built with gcc and libgomp or
clang and libomp (argument gomp or libomp). The runtime creates its worker thread in first()'s
region, so the thread's creating stack alone would put second()'s work under first().
Known answers (OMP_WAIT_POLICY=passive: no thread spins at a barrier): with -stitch the
top-down tree has one root, main (6 units); main > first holds 2 units, main > second 4,
each region's outlined function one node with both threads' parts;
result.db's contexts name the regions' beginnings (origin_stack_id under first and second).
Without -stitch the view is as before: the worker is a root of its own ([OpenMP worker], 3
units) and main > second holds the main thread's 2. Times within e2elib.Sampled's tolerance.
The program's output and exit code are the same with and without pcollect."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2elib as e  # noqa: E402

PROGS = {"gomp": "stitch-omp", "libomp": "stitch-omp-libomp"}
UNIT_MS = 100


def main():
    runtime, built = e.omp_program(PROGS)
    unit = UNIT_MS * 1000000
    with e.Workdir("stitch-omp-" + runtime) as w:
        # Its output is known (stitch-omp.c): it is not run alone first to learn it.
        res = e.collect(w, "res", [built, UNIT_MS], interval=1, stdout="threads=2,2\n",
                        finalize=True, env={"OMP_WAIT_POLICY": "passive"})
        stats = e.db_sampled(res)

        # result.db: the samples of the worker's parts name where each region began.
        db = e.Db(res)
        began = set()
        for (sid,) in res.db("SELECT origin_stack_id FROM contexts "
                             "WHERE origin_stack_id IS NOT NULL"):
            names = [f["name"] for f in db.stack(sid)]
            began |= set(names) & {"first", "second"}
        e.check(began == {"first", "second"},
                "%s: contexts name the regions' beginnings in first and second (%s)" % (
                    runtime, sorted(began)))

        st = e.topdown_paths(res, "-stitch")
        roots = {k[0]: v for k, v in st.items() if len(k) == 1}
        e.check(max(roots, key=roots.get) == "main",
                "%s -stitch: main is the root (%s)" % (runtime, roots))
        e.check(sum(v for k, v in roots.items() if k != "main") <= stats.quantum_ns,
                "%s -stitch: no other root holds time (%s)" % (runtime, roots))
        e.check_time(stats, roots["main"], 6 * unit, "%s -stitch: main" % runtime,
                     stretches=4)
        e.check_time(stats, st.get(("main", "first"), 0), 2 * unit,
                     "%s -stitch: main > first" % runtime, stretches=4)
        e.check_time(stats, st.get(("main", "second"), 0), 4 * unit,
                     "%s -stitch: main > second" % runtime, stretches=4)
        # Both threads' parts are one node: the worker's meets the main thread's under the
        # runtime's entry (libgomp: GOMP_parallel; libomp: its dispatcher).
        for fn, units in (("first", 2), ("second", 4)):
            nodes = {k: v for k, v in st.items() if k[:2] == ("main", fn) and
                     k[-1].startswith(fn + " [omp parallel at stitch-omp.c:")}
            e.check(len(nodes) == 1, "%s -stitch: %s's region is one node (%s)" % (
                runtime, fn, sorted(nodes)))
            e.check_time(stats, max(nodes.values()), units * unit,
                         "%s -stitch: %s's region, both threads' parts" % (runtime, fn),
                         stretches=4)

        plain = e.topdown_paths(res)
        e.check_time(stats, plain.get(("[OpenMP worker]",), 0), 3 * unit,
                     "%s default: the worker root" % runtime, stretches=4)
        e.check_time(stats, plain.get(("main", "second"), 0), 2 * unit,
                     "%s default: main > second, the main thread's part" % runtime,
                     stretches=2)
    print("ok: %s: %s" % (runtime, stats))


if __name__ == "__main__":
    main()
