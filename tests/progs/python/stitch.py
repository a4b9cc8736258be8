# SPDX-License-Identifier: MIT
"""Known answer: work started in other threads. start_pool() runs two tasks of 1 and 2 units
of CPU time in a concurrent.futures.ThreadPoolExecutor (whose threads its submit() creates),
start_threads() two threading.Thread of 1 unit each, own() burns 1 unit in the main thread.
Each task measures its CPU time (time.thread_time), written to FILE as {"pool": s,
"threads": s, "own": s}; standard output says only that it ran.

usage: stitch.py UNIT_MS FILE
"""
import json
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

cpu = {"pool": 0.0, "threads": 0.0, "own": 0.0}
lock = threading.Lock()


def spin_for(sec):
    end = time.thread_time() + sec
    x = 0
    while time.thread_time() < end:
        for i in range(1000):
            x += i
    return x


def task(kind, sec):
    t0 = time.thread_time()
    spin_for(sec)
    with lock:
        cpu[kind] += time.thread_time() - t0


def start_pool(unit):
    with ThreadPoolExecutor(max_workers=2) as ex:
        list(ex.map(task, ["pool", "pool"], [unit, 2 * unit]))


def start_threads(unit):
    ts = [threading.Thread(target=task, args=("threads", unit)) for _ in range(2)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()


def own(unit):
    task("own", unit)


def main():
    unit = float(sys.argv[1]) / 1000
    start_pool(unit)
    start_threads(unit)
    own(unit)
    with open(sys.argv[2], "w") as f:
        json.dump(cpu, f)
    print("pool, threads, own")


if __name__ == "__main__":
    main()
