# SPDX-License-Identifier: MIT
"""Known answer: two_loops runs two one-line loops, LOOP-A three times as many iterations as
LOOP-B, with the same body (which allocates nothing, so every iteration costs the same): line
attribution 75/25.

usage: lines.py [UNIT]   (iterations of LOOP-B per round; default 1200000)
"""
import sys
from itertools import repeat

ROUNDS = 10


def two_loops(n):
    x = 0
    for _ in repeat(None, 3 * n): x = (x + 3) & 127  # LOOP-A  # noqa: E701
    for _ in repeat(None, n): x = (x + 3) & 127  # LOOP-B  # noqa: E701
    return x


def main():
    unit = int(sys.argv[1]) if len(sys.argv) > 1 else 1200000
    total = 0
    for _ in range(ROUNDS):
        total += two_loops(unit)
    print(total)


if __name__ == "__main__":
    main()
