# SPDX-License-Identifier: MIT
"""Known answer: Python lines calling C by name. Phases, each timed with time.process_time()
around its calls: the extension pymeth (tests/progs/python/pymeth.c, when its directory is
given) burning EXT_MS (400) split 60/30/10 between Burner.burn, spin and fast, and 10% more
in lone (a function of its own PyMethodDef, as Cython makes them); sorted() of a
shuffled list; dict.get with a long string key equal to the
dict's but not the same object (compared in C at every call); numpy's
ndarray.sort when numpy imports. Writes the phases' CPU times as JSON to TIMES; prints what
the work computed (the same with and without a profiler).

usage: methods.py TIMES [PYMETH-DIR [EXT-MS]]
"""
import json
import random
import sys
import time

ROUNDS = 10


def call_burn(b, ms):
    return b.burn(ms)  # CALL-BURN


def call_spin(pymeth, ms):
    return pymeth.spin(ms)  # CALL-SPIN


def call_fast(pymeth, ms):
    return pymeth.fast(ms)  # CALL-FAST


def call_lone(pymeth, ms):
    return pymeth.lone(ms)  # CALL-LONE


def call_sorted(lst):
    return sorted(lst)  # CALL-SORTED


def call_get(d, key, n):
    hits = 0
    for _ in range(n):
        hits += d.get(key, 0)  # CALL-GET
    return hits


def call_sort(a):
    a.sort()  # CALL-SORT
    return a


def timed(used, what, fn, *args):
    t0 = time.process_time()
    r = fn(*args)
    used[what] = used.get(what, 0.0) + time.process_time() - t0
    return r


def main():
    used = {}
    out = []
    if len(sys.argv) > 2:
        sys.path.insert(0, sys.argv[2])
        import pymeth
        ms = float(sys.argv[3]) if len(sys.argv) > 3 else 400
        b = pymeth.Burner()
        for _ in range(ROUNDS):
            timed(used, "burn", call_burn, b, 0.6 * ms / ROUNDS)
            timed(used, "spin", call_spin, pymeth, 0.3 * ms / ROUNDS)
            timed(used, "fast", call_fast, pymeth, 0.1 * ms / ROUNDS)
            timed(used, "lone", call_lone, pymeth, 0.1 * ms / ROUNDS)
        out.append("pymeth")
    rng = random.Random(7)
    lst = list(range(150000))
    rng.shuffle(lst)
    # an equal key, not the same object: every lookup compares 200,000 characters in C
    d = {"m" * 200000: 1}
    key = "".join(["m"] * 200000)
    for _ in range(3):
        s = timed(used, "sorted", call_sorted, lst)
        hits = timed(used, "get", call_get, d, key, 12000)
    out.append("sorted %d %d get %d" % (s[0], s[-1], hits))
    try:
        import numpy
    except ImportError:
        numpy = None
    if numpy is not None:
        base = numpy.random.default_rng(7).random(500000)
        for _ in range(3):
            a = timed(used, "sort", call_sort, base.copy())
        out.append("numpy sort %.6f %.6f" % (a[0], a[-1]))
    with open(sys.argv[1], "w") as f:
        json.dump(used, f)
    print("\n".join(out))


if __name__ == "__main__":
    main()
