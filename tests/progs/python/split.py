# SPDX-License-Identifier: MIT
"""Known answer: spin_a, spin_b and spin_c share the Python work 60/30/10, under a chain
main -> level1 -> level2 -> level3. The three spin functions have the same body, which
allocates nothing (small ints are cached, repeat() makes no counter), so equal iteration
counts cost equal CPU time; each round runs them one after the other.

usage: split.py [UNIT]   (iterations of spin_c per round; default 500000)
"""
import sys
from itertools import repeat

ROUNDS = 10


def spin_a(n):
    x = 0
    for _ in repeat(None, n):
        x = (x + 3) & 127
    return x


def spin_b(n):
    x = 0
    for _ in repeat(None, n):
        x = (x + 3) & 127
    return x


def spin_c(n):
    x = 0
    for _ in repeat(None, n):
        x = (x + 3) & 127
    return x


def level3(unit):
    return spin_a(6 * unit) + spin_b(3 * unit) + spin_c(unit)


def level2(unit):
    return level3(unit)


def level1(unit):
    return level2(unit)


def main():
    unit = int(sys.argv[1]) if len(sys.argv) > 1 else 500000
    total = 0
    for _ in range(ROUNDS):
        total += level1(unit)
    print(total)


if __name__ == "__main__":
    main()
