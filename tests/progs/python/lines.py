# SPDX-License-Identifier: MIT
"""Known answer: two_loops runs two one-line loops with the same body, LOOP-A for three times
the CPU time of LOOP-B (budgets of the thread's CPU time, the clock CPU-time sampling runs
on, looked at every CHUNK iterations): line attribution 75/25.

usage: lines.py [UNIT]   (CPU milliseconds of LOOP-B per round; default 75)
"""
import sys
from itertools import repeat
from work import cpu_ns

ROUNDS = 4
CHUNK = 5000


def two_loops(ms):
    x = 0
    end = cpu_ns() + int(3 * ms * 1e6)
    while cpu_ns() < end:
        for _ in repeat(None, CHUNK): x = (x + 3) & 127  # LOOP-A  # noqa: E701
    end = cpu_ns() + int(ms * 1e6)
    while cpu_ns() < end:
        for _ in repeat(None, CHUNK): x = (x + 3) & 127  # LOOP-B  # noqa: E701
    return x


def main():
    unit = float(sys.argv[1]) if len(sys.argv) > 1 else 75
    total = 0
    for _ in range(ROUNDS):
        total += two_loops(unit)
    print(total)


if __name__ == "__main__":
    main()
