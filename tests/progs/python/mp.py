# SPDX-License-Identifier: MIT
"""Known answer: multiprocessing workers. proc_a (twice the work) and proc_b run in fork()ed
children, proc_c in a spawned child (a new interpreter through exec). Prints
{"a": pid, "b": pid, "c": pid} as one JSON line.

usage: mp.py [UNIT]   (iterations of proc_b and proc_c; default 3000000)
"""
import json
import multiprocessing as mp
import sys


def spin(n):
    x = 0
    for i in range(n):
        x = (x * 7 + i) & 0xFFFF
    return x


def proc_a(n):
    return spin(2 * n)


def proc_b(n):
    return spin(n)


def proc_c(n):
    return spin(n)


def main():
    unit = int(sys.argv[1]) if len(sys.argv) > 1 else 3000000
    fork = mp.get_context("fork")
    spawn = mp.get_context("spawn")
    ps = {"a": fork.Process(target=proc_a, args=(unit,)),
          "b": fork.Process(target=proc_b, args=(unit,)),
          "c": spawn.Process(target=proc_c, args=(unit,))}
    for p in ps.values():
        p.start()
    for p in ps.values():
        p.join()
    if any(p.exitcode != 0 for p in ps.values()):
        sys.exit("a worker failed: %s" % {k: p.exitcode for k, p in ps.items()})
    print(json.dumps({k: p.pid for k, p in ps.items()}))


if __name__ == "__main__":
    main()
