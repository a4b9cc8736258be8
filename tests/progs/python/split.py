# SPDX-License-Identifier: MIT
"""Known answer: spin_a, spin_b and spin_c share the CPU time 60/30/10, under a chain
main -> level1 -> level2 -> level3. Each spin function burns a budget of its thread's CPU
time (the clock CPU-time sampling runs on), with a look at the clock every CHUNK iterations
of a body that allocates nothing; each round runs them one after the other.

usage: split.py [UNIT]   (CPU milliseconds of spin_c per round; default 30)
"""
import sys
from itertools import repeat
from work import cpu_ns

ROUNDS = 4
CHUNK = 5000


def spin_a(ms):
    x = 0
    end = cpu_ns() + int(ms * 1e6)
    while cpu_ns() < end:
        for _ in repeat(None, CHUNK):
            x = (x + 3) & 127
    return x


def spin_b(ms):
    x = 0
    end = cpu_ns() + int(ms * 1e6)
    while cpu_ns() < end:
        for _ in repeat(None, CHUNK):
            x = (x + 3) & 127
    return x


def spin_c(ms):
    x = 0
    end = cpu_ns() + int(ms * 1e6)
    while cpu_ns() < end:
        for _ in repeat(None, CHUNK):
            x = (x + 3) & 127
    return x


def level3(unit):
    return spin_a(6 * unit) + spin_b(3 * unit) + spin_c(unit)


def level2(unit):
    return level3(unit)


def level1(unit):
    return level2(unit)


def main():
    unit = float(sys.argv[1]) if len(sys.argv) > 1 else 30
    total = 0
    for _ in range(ROUNDS):
        total += level1(unit)
    print(total)


if __name__ == "__main__":
    main()
