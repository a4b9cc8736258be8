# SPDX-License-Identifier: MIT
"""Known answer: kernel spends its CPU time on four lines in the shares 40/20/20/20: a plain
loop (LOOP-A), then a list comprehension (LOOP-B), a generator expression (LOOP-C) and a
lambda (LOOP-D), each a code object of its own defined inside kernel (the list comprehension
inlined since 3.12), each burning a budget of the thread's CPU time (work.cpu_ns), looked at
every CHUNK iterations, ROUNDS times. The HTML report's source panel must show all of kernel,
not stop at its first nested code object.

usage: comprehensions.py [UNIT]   (CPU milliseconds of LOOP-B per round; default 60)
"""
import sys
from itertools import repeat
from work import cpu_ns

ROUNDS = 3
CHUNK = 2000


def kernel(ms):
    x = 0
    end = cpu_ns() + int(2 * ms * 1e6)
    while cpu_ns() < end:
        for _ in repeat(None, CHUNK): x = (x + 3) & 127  # LOOP-A  # noqa: E701
    end = cpu_ns() + int(ms * 1e6)
    while cpu_ns() < end:
        x = (x + len([i & 7 for i in range(CHUNK)])) & 127  # LOOP-B
    end = cpu_ns() + int(ms * 1e6)
    while cpu_ns() < end:
        x = (x + sum(i & 7 for i in range(CHUNK))) & 127  # LOOP-C
    end = cpu_ns() + int(ms * 1e6)
    while cpu_ns() < end:
        x = (x + sum(map(lambda i: i & 7, range(CHUNK)))) & 127  # LOOP-D
    return x


def main():
    unit = float(sys.argv[1]) if len(sys.argv) > 1 else 60
    total = 0
    for _ in range(ROUNDS):
        total += kernel(unit)
    # The sum depends on how many iterations the budgets allowed: the output must not.
    print("%d rounds, checksum %s" % (ROUNDS, "in range" if 0 <= total < 128 * ROUNDS else "wrong"))


if __name__ == "__main__":
    main()
