# SPDX-License-Identifier: MIT
"""Python waits of known length, each measured by the program around the call: time.sleep,
Thread.join, Lock.acquire of a lock another thread holds, queue.get until another thread puts;
then two threads that burn CPU in Python and so wait for the GIL in turn. Prints name=value
lines for tests/e2e/collect-waits-python.py: each wait's start and end on CLOCK_MONOTONIC (ns,
the clock of the raw streams), each burner's time off the CPU and blocked, and the start and
end of the window it measured them in."""
import os
import queue
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import work  # noqa: E402


def ns():
    return time.monotonic_ns()


def sleeper():
    t0 = ns()
    time.sleep(0.3)
    return t0, ns()


def joiner():
    t = threading.Thread(target=time.sleep, args=(0.2,))
    t.start()
    t0 = ns()
    t.join()
    return t0, ns()


def locker():
    lock = threading.Lock()
    taken = threading.Event()

    def hold():
        with lock:
            taken.set()
            time.sleep(0.25)

    t = threading.Thread(target=hold)
    t.start()
    taken.wait()
    t0 = ns()
    lock.acquire()
    t1 = ns()
    lock.release()
    t.join()
    return t0, t1


def getter():
    q = queue.Queue()
    t = threading.Thread(target=lambda: (time.sleep(0.15), q.put(1)))
    t.start()
    t0 = ns()
    q.get()
    t1 = ns()
    t.join()
    return t0, t1


def schedstat():
    """This thread's time on the CPU and waiting for one (runnable), ns, as the scheduler
    counts them: what is left of its elapsed time it spent blocked."""
    with open("/proc/thread-self/schedstat") as f:
        run, delay, _slices = f.read().split()
    return int(run), int(delay)


def burner(out, i):
    """CPU in Python for 300 ms of this thread's CPU time, while another thread does the
    same: each waits for the GIL while the other holds it. Blocked is the thread's elapsed
    time less its time on a CPU and runnable: on a busy machine too, what it spent waiting
    for the GIL (nothing else in spin() blocks)."""
    run0, delay0 = schedstat()
    t0 = ns()
    work.spin_for(300)
    t1 = ns()
    run1, delay1 = schedstat()
    off = t1 - t0 - (run1 - run0)
    out[i] = (off, off - (delay1 - delay0), threading.get_native_id(), t0, t1)


def gil():
    out = [None, None]
    threads = [threading.Thread(target=burner, args=(out, i), name="burner-%d" % i)
               for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return out


for name, f in (("sleep", sleeper), ("join", joiner), ("lock", locker), ("queue", getter)):
    start, end = f()
    print("%s_start=%d %s_end=%d" % (name, start, name, end))
for i, (off, blocked, tid, t0, t1) in enumerate(gil()):
    print("burner%d_off_ns=%d burner%d_blocked_ns=%d burner%d_tid=%d burner%d_start=%d "
          "burner%d_end=%d" % (i, off, i, blocked, i, tid, i, t0, i, t1))
