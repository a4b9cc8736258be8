# SPDX-License-Identifier: MIT
"""CPU work shared by the threads and multiprocessing known-answer programs."""
import os
from itertools import repeat


def spin(n):
    # Allocates nothing (small ints are cached, repeat() makes no counter): the cost of an
    # iteration does not depend on how the allocator's pools were left by the other worker.
    x = 0
    for _ in repeat(None, n):
        x = (x + 3) & 127
    return x


def this_cpu():
    """The CPU this process runs on (field 39 of /proc/self/stat), to pin to it: not always
    CPU 0, which other tests running at the same time may have pinned themselves to."""
    with open("/proc/self/stat") as f:
        cpu = int(f.read().rsplit(")", 1)[1].split()[36])
    return cpu if cpu in os.sched_getaffinity(0) else min(os.sched_getaffinity(0))
