# SPDX-License-Identifier: MIT
"""A pure-Python CPU-bound workload for bench/python-overhead.sh: recursion (many calls, which
tracing profilers pay for), loops over integers, and string and dict work, in fixed amounts.

usage: python-workload.py [SCALE]   (default 1: about 3 s with /usr/bin/python3.11 here;
cProfile runs it about 2x slower)
"""
import sys


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def loop(n):
    x = 0
    for i in range(n):
        x = ((x << 3) - x + i) & 0xFFFF  # x * 7, as shifts
    return x


def words(n):
    counts = {}
    for i in range(n):
        w = "w%d" % (i % 997)
        counts[w] = counts.get(w, 0) + len(w)
    return len(counts)


def main():
    scale = float(sys.argv[1]) if len(sys.argv) > 1 else 1.0
    total = 0
    for _ in range(max(1, int(8 * scale))):
        total += fib(24) + loop(5000000) + words(500000)
    print(total)


if __name__ == "__main__":
    main()
