# SPDX-License-Identifier: MIT
"""Known answer: Python lines calling C callables, some of which no method table names (their
PyMethodDef's function tail-calls another, so no native frame starts at it). Phases, each
timed with time.process_time() around its calls, 3 rounds of 30-40 ms each: sorted() of a
shuffled list, dict.get with a long string key equal to the dict's but not the same object
(compared in C at every call), str.join of a big list, str.replace and str.encode of a long
string. Writes the phases' CPU times as JSON to TIMES; prints what the work computed (the
same with and without a profiler).

usage: callees.py TIMES [SCALE]
"""
import json
import random
import sys

# sorted() and dict.get called as methods.py calls them (this directory is on sys.path)
from methods import call_get, call_sorted, timed

ROUNDS = 3


def call_join(parts):
    return "-".join(parts)  # CALL-JOIN


def call_replace(s):
    return s.replace("b", "xy")  # CALL-REPLACE


def call_encode(s):
    return s.encode("utf-16")  # CALL-ENCODE


def main():
    scale = float(sys.argv[2]) if len(sys.argv) > 2 else 1.0
    used = {}
    rng = random.Random(7)
    lst = list(range(int(150000 * scale)))
    rng.shuffle(lst)
    d = {"m" * 200000: 1}
    key = "".join(["m"] * 200000)
    parts = ["p%d" % (i % 97) for i in range(int(750000 * scale))]
    text = "abc " * int(1000000 * scale)
    out = []
    for _ in range(ROUNDS):
        s = timed(used, "sorted", call_sorted, lst)
        hits = timed(used, "get", call_get, d, key, int(12000 * scale))
        j = timed(used, "join", call_join, parts)
        r = timed(used, "replace", call_replace, text)
        e = timed(used, "encode", call_encode, text)
    out.append("sorted %d %d get %d join %d replace %d encode %d" %
               (s[0], s[-1], hits, len(j), len(r), len(e)))
    with open(sys.argv[1], "w") as f:
        json.dump(used, f)
    print("\n".join(out))


if __name__ == "__main__":
    main()
