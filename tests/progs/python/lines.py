# SPDX-License-Identifier: MIT
"""Known answer: two_loops runs two one-line loops, LOOP-A three times as many iterations as
LOOP-B, with the same body: line attribution 75/25.

usage: lines.py [UNIT]   (iterations of LOOP-B per round; default 500000)
"""
import sys

ROUNDS = 10


def two_loops(n):
    x = 0
    for i in range(3 * n): x = (x * 7 + i) & 0xFFFF  # LOOP-A  # noqa: E701
    for i in range(n): x = (x * 7 + i) & 0xFFFF  # LOOP-B  # noqa: E701
    return x


def main():
    unit = int(sys.argv[1]) if len(sys.argv) > 1 else 500000
    total = 0
    for _ in range(ROUNDS):
        total += two_loops(unit)
    print(total)


if __name__ == "__main__":
    main()
