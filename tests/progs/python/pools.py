# SPDX-License-Identifier: MIT
"""Known answer: thread pools made once, used from several calls. make() creates a
concurrent.futures.ThreadPoolExecutor and a multiprocessing.pool.ThreadPool of two threads each
and starts their threads; then first() submits two tasks of 1 unit of CPU time to the executor,
second() two of 2 units (one through submit, one through map), third() two tasks of 1 unit to
the ThreadPool (apply_async, as joblib's threading backend does). Each task measures its CPU
time (time.thread_time; work.spin_for burns it), written to FILE as {"first": s, "second": s,
"third": s}. Standard output: each call's results, and a failing task's exception and traceback
(the functions it names, from 3.11 on), the same with and without a profiler.

usage: pools.py UNIT_MS FILE
"""
import json
import sys
import threading
import time
import traceback
from concurrent.futures import ThreadPoolExecutor
from multiprocessing.pool import ThreadPool

from work import spin_for

cpu = {"first": 0.0, "second": 0.0, "third": 0.0}
lock = threading.Lock()


def task(kind, sec):
    t0 = time.thread_time()
    spin_for(sec * 1000)
    with lock:
        cpu[kind] += time.thread_time() - t0
    return kind


def fail(n):
    raise ValueError("task %d failed" % n)


def make():
    ex = ThreadPoolExecutor(max_workers=2)
    list(ex.map(abs, [1, 2, 3, 4]))  # its threads start here
    tp = ThreadPool(2)
    return ex, tp


def first(ex, unit):
    futures = [ex.submit(task, "first", unit) for _ in range(2)]
    return [f.result() for f in futures]


def second(ex, unit):
    f = ex.submit(task, "second", 2 * unit)
    rest = list(ex.map(task, ["second"], [2 * unit]))
    return [f.result()] + rest


def third(tp, unit):
    results = [tp.apply_async(task, ("third", unit)) for _ in range(2)]
    return [r.get() for r in results]


def failing(ex, tp):
    for name, get in (("executor", lambda: ex.submit(fail, 1).result()),
                      ("thread pool", lambda: tp.apply_async(fail, (2,)).get())):
        try:
            get()
        except ValueError as e:
            print("%s: %r" % (name, e))
            if sys.version_info >= (3, 11):
                print("  " + " > ".join(f.name for f in traceback.extract_tb(e.__traceback__)))


def main():
    unit = float(sys.argv[1]) / 1000
    ex, tp = make()
    print("first", first(ex, unit))
    print("second", second(ex, unit))
    print("third", third(tp, unit))
    failing(ex, tp)
    ex.shutdown()
    tp.close()
    tp.join()
    with open(sys.argv[2], "w") as f:
        json.dump(cpu, f)


if __name__ == "__main__":
    main()
