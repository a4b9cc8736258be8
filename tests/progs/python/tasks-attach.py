# SPDX-License-Identifier: MIT
"""Known answer, for attaching: asyncio tasks "alpha", "beta" and "gamma" burn 6, 3 and 1
pieces of SLICE ms of the thread's CPU time a turn (pieces all alike, so that the CPU clock's
ticks err alike for all three), each awaiting asyncio.sleep(0) after its turn, so that every
round of the loop burns 60/30/10 across the three, until the file GO appears.

usage: tasks-attach.py GO   (prints "pid=N" once running; "tasks done" at the end)
"""
import asyncio
import os
import sys
from work import spin_for

SLICE = 5  # CPU ms a piece
TURNS = {"alpha": 6, "beta": 3, "gamma": 1}  # pieces a turn


async def worker(pieces, go, done):
    x = 0
    while not done:
        for _ in range(pieces):
            x ^= spin_for(SLICE)
        await asyncio.sleep(0)
        if os.path.exists(go):
            done.append(True)
    return x


async def main(go):
    done = []
    jobs = [asyncio.create_task(worker(k, go, done), name=n) for n, k in TURNS.items()]
    print("pid=%d" % os.getpid(), flush=True)
    await asyncio.gather(*jobs)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
    print("tasks done")
