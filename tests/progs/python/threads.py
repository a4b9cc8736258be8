# SPDX-License-Identifier: MIT
"""Known answer: two threading.Thread workers take turns (a semaphore ring, so both run under
the same machine load): worker_a spins 2 * CHUNK iterations per turn, worker_b CHUNK; the main
thread waits. CPU time a:b is 2:1. Prints {"a": tid, "b": tid} (native ids) as one JSON line.

usage: threads.py [TURNS [CHUNK]]   (default 100 turns of 20000 iterations)
"""
import json
import os
import sys
import threading
from itertools import repeat

tids = {}


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


def worker_a(turns, chunk, mine, theirs):
    tids["a"] = threading.get_native_id()
    for _ in range(turns):
        mine.acquire()
        spin(2 * chunk)
        theirs.release()


def worker_b(turns, chunk, mine, theirs):
    tids["b"] = threading.get_native_id()
    for _ in range(turns):
        mine.acquire()
        spin(chunk)
        theirs.release()


def main():
    turns = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    chunk = int(sys.argv[2]) if len(sys.argv) > 2 else 20000
    # One CPU: both threads' CPU speed is the same on a machine whose CPUs are loaded
    # differently (they take turns anyway).
    os.sched_setaffinity(0, {this_cpu()})
    sa, sb = threading.Semaphore(0), threading.Semaphore(0)
    ts = [threading.Thread(target=worker_a, args=(turns, chunk, sa, sb), name="worker-a"),
          threading.Thread(target=worker_b, args=(turns, chunk, sb, sa), name="worker-b")]
    for t in ts:
        t.start()
    sa.release()
    for t in ts:
        t.join()
    print(json.dumps(tids))


if __name__ == "__main__":
    main()
