# SPDX-License-Identifier: MIT
"""Known answer: two threading.Thread workers take turns (a semaphore ring): worker_a spins
2 * CHUNK iterations per turn, worker_b CHUNK, so the work is 2:1; the main thread waits. Each
worker also measures the CPU time its spin calls took (time.thread_time), the reference the
profile must agree with. Prints {"tid": {"a": tid, "b": tid}, "cpu": {"a": s, "b": s}} (native
thread ids) as one JSON line.

usage: threads.py [TURNS [CHUNK]]   (default 100 turns of 20000 iterations)
"""
import json
import os
import sys
import threading
import time
from work import spin, this_cpu

tids, cpu = {}, {}


def take_turns(name, turns, n, mine, theirs):
    tids[name] = threading.get_native_id()
    used = 0.0
    for _ in range(turns):
        mine.acquire()
        t0 = time.thread_time()
        spin(n)
        used += time.thread_time() - t0
        theirs.release()
    cpu[name] = used


def worker_a(turns, chunk, mine, theirs):
    take_turns("a", turns, 2 * chunk, mine, theirs)


def worker_b(turns, chunk, mine, theirs):
    take_turns("b", turns, chunk, mine, theirs)


def main():
    turns = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    chunk = int(sys.argv[2]) if len(sys.argv) > 2 else 20000
    # One CPU: the threads take turns anyway, and a unit of work then costs about the same
    # CPU time in both.
    os.sched_setaffinity(0, {this_cpu()})
    sa, sb = threading.Semaphore(0), threading.Semaphore(0)
    ts = [threading.Thread(target=worker_a, args=(turns, chunk, sa, sb), name="worker-a"),
          threading.Thread(target=worker_b, args=(turns, chunk, sb, sa), name="worker-b")]
    for t in ts:
        t.start()
    sa.release()
    for t in ts:
        t.join()
    print(json.dumps({"tid": tids, "cpu": cpu}))


if __name__ == "__main__":
    main()
