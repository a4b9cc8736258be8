# SPDX-License-Identifier: MIT
"""Known answer: threads known by their threading names. Ten threading.Thread workers named
CustomThreadName-0 .. CustomThreadName-9 (py-spy's thread_names test; 18 bytes, more than the
15 the kernel keeps of a thread's name), worker i burning (i + 1) * UNIT ms of its CPU time
in spin_for; one more started as "before-rename" and renamed RENAMED after it started (it
burns RENAMED_UNITS units once renamed); the main thread, MainThread, burns MAIN_UNITS units
while the workers run. Each thread measures its spin_for time itself (time.thread_time), the
reference the profile must agree with. Writes {name: {"tid": native id, "cpu": s}} as JSON
to OUT; prints one line that is the same every run.

usage: names.py OUT [UNIT_MS]   (default 20 ms)
"""
import json
import sys
import threading
import time
from work import spin_for

RENAMED = "RenamedAfterStart-ALongerName"
RENAMED_UNITS, MAIN_UNITS = 6, 8

done = {}


def burn(ms, go=None):
    if go is not None:
        go.wait()
    t0 = time.thread_time()
    spin_for(ms)
    done[threading.current_thread().name] = {"tid": threading.get_native_id(),
                                             "cpu": time.thread_time() - t0}


def main():
    out = sys.argv[1]
    unit = float(sys.argv[2]) if len(sys.argv) > 2 else 20
    go = threading.Event()
    workers = [threading.Thread(target=burn, args=((i + 1) * unit,),
                                name="CustomThreadName-%d" % i) for i in range(10)]
    late = threading.Thread(target=burn, args=(RENAMED_UNITS * unit, go), name="before-rename")
    late.start()
    time.sleep(0.05)  # it runs under its first name, its OS name given (3.14+)
    late.name = RENAMED
    go.set()
    for t in workers:
        t.start()
    burn(MAIN_UNITS * unit)
    for t in workers + [late]:
        t.join()
    with open(out, "w") as f:
        json.dump(done, f)
    print("done: %d threads named" % len(done))


if __name__ == "__main__":
    main()
