# SPDX-License-Identifier: MIT
"""Known answer: asyncio tasks "alpha", "beta" and "gamma" burn CPU budgets 60/30/10 in
slices of SLICE ms of the thread's CPU time, each awaiting asyncio.sleep(0) between two
slices, so that the three interleave on the one thread; meanwhile the task "sleeper" awaits
asyncio.sleep(NAP) NAPS times on one line (the one after "# the sleeper's await").

usage: tasks.py [UNIT [FILE]]   (CPU milliseconds of gamma, default 100; FILE: where the
                                sleeper writes the seconds its awaits took, by its own clock)
"""
import asyncio
import sys
import time
import traceback
from work import spin_for

SLICE = 10  # CPU ms a slice
NAP = 0.1
NAPS = 5


async def worker(ms):
    x = 0
    for _ in range(max(1, round(ms / SLICE))):
        x ^= spin_for(SLICE)
        await asyncio.sleep(0)
    return x


took = []


async def sleeper():
    for _ in range(NAPS):
        t0 = time.monotonic()
        # the sleeper's await
        await asyncio.sleep(NAP)
        took.append(time.monotonic() - t0)
    return NAPS


async def failing():
    await asyncio.sleep(0)
    raise ValueError("failing")


async def traceback_names():
    """The functions of a task's traceback, as the program sees them: without pcollect's
    driver frames on 3.11+ (a re-raise on 3.10 keeps them: printed as '-' there)."""
    try:
        await asyncio.create_task(failing())
    except ValueError as e:
        names = [f.name for f in traceback.extract_tb(e.__traceback__)]
        return ",".join(names) if sys.version_info >= (3, 11) else "-"


async def main(unit):
    jobs = [asyncio.create_task(worker(6 * unit), name="alpha"),
            asyncio.create_task(worker(3 * unit), name="beta"),
            asyncio.create_task(worker(unit), name="gamma"),
            asyncio.create_task(sleeper(), name="sleeper")]
    done = await asyncio.gather(*jobs)
    names = [t.get_name() for t in jobs]
    return names, done[-1], repr(jobs[0]).split(" coro=")[0] + " " + await traceback_names()


if __name__ == "__main__":
    names, naps, rep = asyncio.run(main(float(sys.argv[1]) if len(sys.argv) > 1 else 100))
    print(" ".join(names), naps, rep)
    if len(sys.argv) > 2:
        with open(sys.argv[2], "w") as f:
            f.write("%.9f\n" % sum(took))
