# SPDX-License-Identifier: MIT
"""Known answer: a spawn Pool of 2 workers ended by its context manager (Pool.terminate():
SIGTERM to each worker, which dies of it). Each of the 2 tasks burns BUDGET ms of its
worker's CPU time (work.spin_for) and returns its worker's pid and the CPU time that worker's
process had used at the task's end (time.process_time): all it uses before it is killed but
the few ms of handing the result back and taking the next task. Then each worker is made to
wait in a task of its own (on a barrier with the main process, then asleep) when the pool is
ended: an idle worker may read the pool's request to stop and end on its own first, a busy
one is killed. Prints "pool: 2 tasks done"; the figures, as one JSON line {"tasks": [[pid,
seconds], ...]}, go to the file OUT.

usage: pool.py OUT [BUDGET]   (default 400 ms)
"""
import json
import multiprocessing as mp
import os
import sys
import time
from work import spin_for


barrier = None


def init(b):
    global barrier
    barrier = b


def task(ms):
    spin_for(ms)
    return os.getpid(), time.process_time()


def wait_there():
    barrier.wait()
    time.sleep(3600)


def main():
    out = sys.argv[1]
    budget = float(sys.argv[2]) if len(sys.argv) > 2 else 400
    ctx = mp.get_context("spawn")
    b = ctx.Barrier(3)
    with ctx.Pool(2, initializer=init, initargs=(b,)) as pool:
        tasks = pool.map(task, [budget, budget], chunksize=1)
        # one blocked worker cannot take the other's: both are busy once the barrier opens
        for _ in range(2):
            pool.apply_async(wait_there)
        b.wait()
    with open(out, "w") as f:
        f.write(json.dumps({"tasks": tasks}) + "\n")
    print("pool: %d tasks done" % len(tasks))


if __name__ == "__main__":
    main()
