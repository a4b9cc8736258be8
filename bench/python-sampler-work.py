#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The workloads of bench/python-samplers.py, each with a known answer it measures itself:
heavy() and light() burn CPU in a 2:1 ratio, in the way the workload names, and the program
writes the CPU time each took (time.thread_time around them, summed) as JSON to OUT.

usage: python-sampler-work.py pure|threads|asyncio|numpy OUT [SCALE]
"""
import json
import sys
import time

SCALE = float(sys.argv[3]) if len(sys.argv) > 3 else 1.0
took = {"heavy": 0.0, "light": 0.0}


def loop(sec):
    end = time.thread_time() + sec
    x = 0
    while time.thread_time() < end:
        for i in range(2000):
            x = (x + i) & 255
    return x


def timed(name, fn, *args):
    t0 = time.thread_time()
    fn(*args)
    took[name] += time.thread_time() - t0


def heavy(sec):
    return loop(sec)


def light(sec):
    return loop(sec)


def pure():
    for _ in range(10):
        timed("heavy", heavy, 0.08 * SCALE)
        timed("light", light, 0.04 * SCALE)


def threads():
    from concurrent.futures import ThreadPoolExecutor
    import threading
    lock = threading.Lock()

    def task(name, fn, sec):
        t0 = time.thread_time()
        fn(sec)
        with lock:
            took[name] += time.thread_time() - t0
    with ThreadPoolExecutor(2) as ex:
        futs = [ex.submit(task, "heavy", heavy, 0.08 * SCALE) for _ in range(5)]
        futs += [ex.submit(task, "light", light, 0.04 * SCALE) for _ in range(5)]
        for f in futs:
            f.result()


def asyncio_work():
    import asyncio

    async def heavy_task():
        for _ in range(10):
            timed("heavy", heavy, 0.008 * SCALE)
            await asyncio.sleep(0.001)

    async def light_task():
        for _ in range(10):
            timed("light", light, 0.004 * SCALE)
            await asyncio.sleep(0.001)

    async def main():
        for _ in range(10):
            await asyncio.gather(heavy_task(), light_task())
    asyncio.run(main())


_array = None


def sort_for(sec):
    import numpy as np
    global _array
    if _array is None:
        _array = np.random.default_rng(1).random(400_000)
    end = time.thread_time() + sec
    while time.thread_time() < end:
        np.sort(_array)


def heavy_np(sec):
    return sort_for(sec)


def light_np(sec):
    return sort_for(sec)


def numpy_work():
    for _ in range(10):
        timed("heavy", heavy_np, 0.08 * SCALE)
        timed("light", light_np, 0.04 * SCALE)


if __name__ == "__main__":
    {"pure": pure, "threads": threads, "asyncio": asyncio_work, "numpy": numpy_work}[
        sys.argv[1]]()
    with open(sys.argv[2], "w") as f:
        json.dump(took, f)
