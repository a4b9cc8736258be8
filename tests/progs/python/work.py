# SPDX-License-Identifier: MIT
"""CPU work and a CPU clock shared by the Python known-answer programs."""
import resource
import time
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


def take_turns(turns, ms, mine, theirs):
    """A worker's share of a semaphore ring: turns times, acquire mine, spin_for(ms), release
    theirs. Returns the CPU seconds its spin_for calls took (time.thread_time, read twice a
    turn): the reference the profile must agree with."""
    used = 0
    for _ in range(turns):
        mine.acquire()
        t0 = time.thread_time_ns()
        spin_for(ms)
        used += time.thread_time_ns() - t0
        theirs.release()
    return used / 1e9
