#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Python work under the call that started it (issue 24, item 4), on one interpreter (the
argument): tests/progs/python/stitch.py runs two tasks of 1 and 2 units of CPU time (100 ms)
in a concurrent.futures.ThreadPoolExecutor from start_pool(), two threading.Thread of 1 unit
from start_threads(), and 1 unit in own(); each task measures its CPU time. Known answers:
with -stitch the top-down tree's <module> > main holds all of it, start_pool the pool's
tasks (under ThreadPoolExecutor.submit, "submit" before 3.11, which submitted them and
created the pool's threads), start_threads its
threads' and own its own, each as measured; without -stitch start_pool and start_threads hold
none of their threads' time. Times within e2elib.Sampled's tolerance. The program's output
and exit code are the same with and without pcollect."""
import e2elib as e
import pylib

UNIT_MS = 100


def main():
    with e.Workdir("py-stitch") as w:
        res, cpu, stats, st = pylib.collect_stitched(w, "stitch.py", UNIT_MS,
                                                     "pool, threads, own\n")
        top = ("<module>", "main")
        for part, fn in (("pool", "start_pool"), ("threads", "start_threads"), ("own", "own")):
            e.check_time(stats, st.get(top + (fn,), 0), cpu[part] * 1e9,
                         "-stitch: %s (%s)" % (" > ".join(top + (fn,)), part), stretches=4)
        under = sum(v for k, v in st.items() if k[:3] == top + ("start_pool",) and
                    k[-1] == "task" and any(x.endswith("submit") for x in k))
        e.check_time(stats, under, cpu["pool"] * 1e9,
                     "-stitch: the pool's tasks under ThreadPoolExecutor.submit", stretches=4)
        plain = e.topdown_paths(res)
        for fn in ("start_pool", "start_threads"):
            e.check(plain.get(top + (fn,), 0) <= stats.quantum_ns,
                    "default: %s holds none of its threads' time (%.3f s)" %
                    (fn, plain.get(top + (fn,), 0) / 1e9))
        e.check_time(stats, plain.get(top + ("own",), 0), cpu["own"] * 1e9, "default: own",
                     stretches=2)
    print("ok: %s" % stats)


if __name__ == "__main__":
    main()
