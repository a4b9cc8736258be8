# SPDX-License-Identifier: MIT
"""Known answer: the cyclic garbage collector's share of a thread. churn() builds small
reference cycles (two lists that hold each other) with the collector enabled, beside a large
set of live lists, so the collections it starts cost a good part of its CPU time; plain()
then does integer work that allocates no container, so no collection runs in it. The program
measures both itself with time.thread_time_ns(): plain() around its loop, the collector with
gc.callbacks (start and stop of every collection, summed per thread). Then churn_beside()
does churn()'s work again while a thread compresses a buffer with zlib in a loop: CPU time
spent mostly without the GIL (deflate runs without it), beside the collections, which that
thread neither starts nor runs. The callbacks are gone by then: Python code the collector
runs (callbacks, finalizers) lets another thread take the GIL in the middle of a collection,
which the profile cannot tell from the collector's own thread (docs/python.md).

usage: cycles.py OUT.json [SCALE]   (SCALE: the work, 1 = ~1 s of the main thread's CPU time)
Prints what it made (the same every run); writes {"main": tid, "zip": tid, "gc_ns": {tid:
ns}, "collections": {tid: n}, "churn_ns": ns, "plain_ns": ns, "main_ns": ns} to OUT.json
(native thread ids; gc_ns and collections of churn() and plain() only; the main thread's CPU
time at the end).
"""
import gc
import json
import sys
import threading
import time
import zlib

gc_ns, collections, started = {}, {}, {}


def on_gc(phase, _info):
    """Each collection's CPU time, per thread: its callbacks run in the collecting thread."""
    tid = threading.get_native_id()
    if phase == "start":
        started[tid] = time.thread_time_ns()
    elif tid in started:
        gc_ns[tid] = gc_ns.get(tid, 0) + time.thread_time_ns() - started.pop(tid)
        collections[tid] = collections.get(tid, 0) + 1


def churn(n):
    made = 0
    for _ in range(n):
        a = []
        b = [a]
        a.append(b)  # a cycle: only the collector frees it
        made += 1
    return made


def churn_beside(n):
    return churn(n)


def plain(n):
    x = 1
    for i in range(n):
        x = (x * 31 + i) & 0xFFFFF
    return x


def zipper(data, stop, out):
    out["tid"] = threading.get_native_id()
    rounds = 0
    while not stop.is_set():
        zlib.compress(data, 6)
        rounds += 1
    out["rounds"] = rounds


def main():
    path = sys.argv[1]
    scale = float(sys.argv[2]) if len(sys.argv) > 2 else 1.0
    # the live set the collections of older generations walk through
    live = [[i] for i in range(200000)]
    seed, raw = 1, bytearray()
    for _ in range(1 << 14):
        seed = (seed * 1103515245 + 12345) & 0x7FFFFFFF
        raw += (seed >> 8).to_bytes(3, "little")
    data = bytes(raw) * 4
    gc.collect()
    gc.callbacks.append(on_gc)
    t0 = time.thread_time_ns()
    made = churn(int(2000000 * scale))
    t1 = time.thread_time_ns()
    x = plain(int(5000000 * scale))
    t2 = time.thread_time_ns()
    gc.callbacks.remove(on_gc)
    stop, zipped = threading.Event(), {}
    t = threading.Thread(target=zipper, args=(data, stop, zipped), name="zipper")
    t.start()
    made += churn_beside(int(1200000 * scale))
    stop.set()
    t.join()
    print("cycles: %d made, %d live, plain %d" % (made, len(live), x))
    with open(path, "w") as f:
        json.dump({"main": threading.get_native_id(), "zip": zipped["tid"],
                   "gc_ns": {str(k): v for k, v in gc_ns.items()},
                   "collections": {str(k): v for k, v in collections.items()}, "churn_ns": t1 - t0,
                   "plain_ns": t2 - t1, "main_ns": time.thread_time_ns()}, f)


if __name__ == "__main__":
    main()
