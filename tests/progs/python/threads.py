# SPDX-License-Identifier: MIT
"""Known answer: two threading.Thread workers, worker_a with twice the work of worker_b; the
main thread waits. Prints {"a": tid, "b": tid} (native thread ids) as one JSON line.

usage: threads.py [UNIT]   (iterations of worker_b; default 4000000)
"""
import json
import sys
import threading

tids = {}


def spin(n):
    x = 0
    for i in range(n):
        x = (x * 7 + i) & 0xFFFF
    return x


def worker_a(n):
    tids["a"] = threading.get_native_id()
    return spin(2 * n)


def worker_b(n):
    tids["b"] = threading.get_native_id()
    return spin(n)


def main():
    unit = int(sys.argv[1]) if len(sys.argv) > 1 else 4000000
    ts = [threading.Thread(target=worker_a, args=(unit,), name="worker-a"),
          threading.Thread(target=worker_b, args=(unit,), name="worker-b")]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    print(json.dumps(tids))


if __name__ == "__main__":
    main()
