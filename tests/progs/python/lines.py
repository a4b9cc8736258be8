# SPDX-License-Identifier: MIT
"""Known answer: two_loops runs two one-line loops with the same body, LOOP-A for three times
the CPU time of LOOP-B (budgets of the thread's CPU time, the clock CPU-time sampling runs
on, looked at every CHUNK iterations): line attribution 75/25. native_line then spends as
long as LOOP-B in one line, LOOP-C, that calls zlib's compressor (native code): 60/20/20 of
the three lines, LOOP-C's time almost all in native frames under it. A budget is looked at
between zlib's calls, and a call can take far longer than usual on a loaded machine (its
allocations: brk and the pages it zeroes): the program measures what each line took and
prints it after the total, "A B C" in ns, for the test to judge the profile against.

usage: lines.py [UNIT]   (CPU milliseconds of LOOP-B per round; default 75)
"""
import sys
import zlib
from itertools import repeat
from work import cpu_ns

ROUNDS = 4
CHUNK = 5000
BLOCK = bytes(range(256)) * 256


SPENT = [0, 0, 0]  # ns of CPU time LOOP-A, LOOP-B and LOOP-C took


def two_loops(ms):
    x = 0
    start = cpu_ns()
    end = start + int(3 * ms * 1e6)
    while cpu_ns() < end:
        for _ in repeat(None, CHUNK): x = (x + 3) & 127  # LOOP-A  # noqa: E701
    mid = cpu_ns()
    end = mid + int(ms * 1e6)
    while cpu_ns() < end:
        for _ in repeat(None, CHUNK): x = (x + 3) & 127  # LOOP-B  # noqa: E701
    SPENT[0] += mid - start
    SPENT[1] += cpu_ns() - mid
    return x


def native_line(ms):
    n = 0
    start = cpu_ns()
    end = start + int(ms * 1e6)
    while cpu_ns() < end:
        n += len(zlib.compress(BLOCK, 9))  # LOOP-C
    SPENT[2] += cpu_ns() - start
    return n & 127


def main():
    unit = float(sys.argv[1]) if len(sys.argv) > 1 else 75
    total = 0
    for _ in range(ROUNDS):
        total += two_loops(unit) + native_line(unit)
    print(total)
    print(*SPENT)


if __name__ == "__main__":
    main()
