#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A thread pool's tasks under the Python call that submitted them (issue 24, item 4), on one
interpreter (the argument): tests/progs/python/pools.py makes a ThreadPoolExecutor and a
multiprocessing.pool.ThreadPool once (make() starts their threads), then first() submits two
tasks of 1 unit of CPU time (100 ms) to the executor, second() two of 2 units (submit and map),
third() two of 1 unit to the ThreadPool (apply_async, joblib's threading backend); each task
measures its CPU time. Known answers: with -stitch the top-down tree's <module> > main > first,
second and third each hold their own tasks' time, as measured, and make() none of it (its own
time alone, as without -stitch) (before pool tasks named their submitter, all of it sat under
make(), which created the threads). Times within e2elib.Sampled's tolerance. The program's
output (a failing task's exception and traceback among it) and exit code are the same with and
without pcollect."""
import e2elib as e
import pylib

UNIT_MS = 100


def main():
    with e.Workdir("py-pools") as w:
        # its output (a failing task's traceback, through the standard library's functions,
        # which differ between versions) as alone with no work: not known in advance
        res, cpu, stats, st = pylib.collect_stitched(w, "pools.py", UNIT_MS, None)
        top = ("<module>", "main")
        for fn in ("first", "second", "third"):
            e.check_time(stats, st.get(top + (fn,), 0), cpu[fn] * 1e9,
                         "-stitch: %s holds its tasks' time" % " > ".join(top + (fn,)),
                         stretches=4)
        # make()'s own time (the pools' set-up) is the same with and without -stitch.
        plain = e.topdown_paths(res)
        made = st.get(top + ("make",), 0) - plain.get(top + ("make",), 0)
        e.check_time(stats, made, 0, "-stitch: make (which started the pools' threads) holds "
                     "none of their tasks' time", stretches=4)
    print("ok: %s; tasks' CPU %s" % (stats, cpu))


if __name__ == "__main__":
    main()
