# SPDX-License-Identifier: MIT
"""CPU work and a CPU clock shared by the Python known-answer programs."""
import os
import resource
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


def cpu_ns():
    """This thread's CPU time, ns, as of its last tick or context switch: the sum the
    CPU-time timers run on. Not time.thread_time_ns(), whose clock_gettime brings the
    scheduler's accounting up to date: polled often on a busy machine, that preempts the
    thread between ticks, where the timers are not checked (tests/progs/burn.h)."""
    ru = resource.getrusage(resource.RUSAGE_THREAD)
    return int((ru.ru_utime + ru.ru_stime) * 1e9)
