# SPDX-License-Identifier: MIT
"""CPU work and a CPU clock shared by the Python known-answer programs."""
import resource
from itertools import repeat

CHUNK = 5000  # iterations of spin() between two looks at the clock: about 0.2 ms


def spin(n):
    # Allocates nothing (small ints are cached, repeat() makes no counter): the cost of an
    # iteration does not depend on how the allocator's pools were left by the other worker.
    x = 0
    for _ in repeat(None, n):
        x = (x + 3) & 127
    return x


def cpu_ns():
    """This thread's CPU time, ns, as of its last tick or context switch: the sum the
    CPU-time timers run on. Not time.thread_time_ns(), whose clock_gettime brings the
    scheduler's accounting up to date: polled often on a busy machine, that preempts the
    thread between ticks, where the timers are not checked (tests/progs/burn.h)."""
    ru = resource.getrusage(resource.RUSAGE_THREAD)
    return int((ru.ru_utime + ru.ru_stime) * 1e9)


def spin_for(ms):
    """Burn ms milliseconds of this thread's CPU time in spin(), whatever the machine's speed
    or load: the known answer is CPU time. The clock moves at ticks, so the time burnt is
    ms within a tick either way."""
    x = 0
    end = cpu_ns() + int(ms * 1e6)
    while cpu_ns() < end:
        x += spin(CHUNK)
    return x
