# SPDX-License-Identifier: MIT
"""Known answer: two threading.Thread workers take turns (a semaphore ring): per turn worker_a
spins for 2 * UNIT ms of its CPU time, worker_b for UNIT ms, so the CPU time is 2:1; the main
thread waits. Each worker also measures the CPU time its spin calls took (time.thread_time,
read twice a turn), the reference the profile must agree with. Prints
{"tid": {"a": tid, "b": tid}, "cpu": {"a": s, "b": s}, "turns": N} (native thread ids) as one
JSON line.

usage: threads.py [TURNS [UNIT]]   (default 20 turns of 10 ms)
"""
import json
import sys
import threading
from work import take_turns

tids, cpu = {}, {}


def worker(name, turns, ms, mine, theirs):
    tids[name] = threading.get_native_id()
    cpu[name] = take_turns(turns, ms, mine, theirs)


def worker_a(turns, unit, mine, theirs):
    worker("a", turns, 2 * unit, mine, theirs)


def worker_b(turns, unit, mine, theirs):
    worker("b", turns, unit, mine, theirs)


def main():
    turns = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    unit = float(sys.argv[2]) if len(sys.argv) > 2 else 10
    sa, sb = threading.Semaphore(0), threading.Semaphore(0)
    ts = [threading.Thread(target=worker_a, args=(turns, unit, sa, sb), name="worker-a"),
          threading.Thread(target=worker_b, args=(turns, unit, sb, sa), name="worker-b")]
    for t in ts:
        t.start()
    sa.release()
    for t in ts:
        t.join()
    print(json.dumps({"tid": tids, "cpu": cpu, "turns": turns}))


if __name__ == "__main__":
    main()
