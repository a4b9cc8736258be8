# SPDX-License-Identifier: MIT
"""Known answer for pcollect.profile(): a thread that runs all along (a kernel's heartbeat)
burns CPU before, during and after the block; the block runs spin_a for 2 units and spin_b for
1 unit of its thread's CPU time and starts a thread that runs spin_c for 1 unit: 50/25/25 of
the block's threads, the background thread nowhere. Prints one JSON line: the profile's
threads and result, the background thread's TID, the CPU each part measured itself, and the
threads before and after the block (none of pcollect's left running).

usage: block.py RESULT [UNIT]   (CPU milliseconds of spin_b; default 150)
"""
import json
import os
import sys
import threading

import pcollect
from work import cpu_ns, spin_for

stop = threading.Event()
measured = {}


def timed(name, ms):
    t0 = cpu_ns()
    spin_for(ms)
    measured[name] = (cpu_ns() - t0) / 1e9


def spin_a(ms):
    timed("spin_a", ms)


def spin_b(ms):
    timed("spin_b", ms)


def spin_c(ms):
    timed("spin_c", ms)


def background(tid):
    tid.append(threading.get_native_id())
    while not stop.is_set():
        spin_for(2)


def block(result, unit):
    with pcollect.profile(result=result, interval=1) as p:
        spin_a(2 * unit)
        spin_b(unit)
        t = threading.Thread(target=spin_c, args=(unit,))
        t.start()
        t.join()
    return p


def main():
    result = sys.argv[1]
    unit = float(sys.argv[2]) if len(sys.argv) > 2 else 150
    bg_tid = []
    bg = threading.Thread(target=background, args=(bg_tid,), name="heartbeat")
    bg.start()
    spin_for(20)
    before = sorted(os.listdir("/proc/self/task"))
    p = block(result, unit)
    after = sorted(os.listdir("/proc/self/task"))
    text = p.report()
    stop.set()
    bg.join()
    print(json.dumps({"threads": p.threads, "background": bg_tid[0], "result": p.result,
                      "show_from": p.show_from, "measured": measured, "before": before,
                      "after": after, "argv": p.report_argv(fmt="csv", limit=0),
                      "text": text}))


if __name__ == "__main__":
    main()
