# SPDX-License-Identifier: MIT
"""Stress: frames and code objects freed and reallocated all the time, under 1 ms sampling.

Each round, in the main thread and in a second thread at once: a recursion 300 deep that
unwinds by returning and once more by an exception raised at the bottom; generators made,
advanced part way and dropped; exceptions raised and caught across frames; functions made by
exec() (a fresh code object each, its name carrying the round) called and deleted; closures
and lambdas made and dropped; a class defined and dropped. Frame memory (the frame stack and
generators' frames) and code objects are thus freed and their memory reused while samples
read them. The program must run to its end with the right answer: it prints
"done ROUNDS CHECKSUM", where the checksum is what the work computes (the same with or
without a profiler).

usage: stress.py [CPU_SECONDS]   (default 1.0: rounds run until the process has used that)
"""
import sys
import threading
import time


def down(n):
    if n == 0:
        return 0
    return down(n - 1) + 1


def down_raise(n):
    if n == 0:
        raise LookupError("bottom")
    return down_raise(n - 1) + 1


def gen(n):
    for i in range(n):
        yield i * i


def nested_raise(k):
    try:
        try:
            raise ValueError(k)
        finally:
            k += 1
    except ValueError as exc:
        return int(exc.args[0]) + k


def one_round(r):
    total = down(300)
    try:
        down_raise(300)
    except LookupError:
        total += 1
    for g in [gen(50) for _ in range(20)]:
        total += next(g) + next(g)
    total += sum(nested_raise(k) for k in range(50))
    ns = {}
    exec("def made_%d(x):\n    return [y * 2 for y in range(x)][-1]\n" % r, ns)
    total += ns["made_%d" % r](10)
    del ns
    adders = [(lambda k: lambda x: x + k)(k) for k in range(30)]
    total += sum(f(1) for f in adders)
    del adders
    klass = type("K%d" % r, (), {"m": lambda self: 7})
    total += klass().m()
    del klass
    return total


def worker(stop, out):
    rounds = s = 0
    while not stop.is_set():
        s += one_round(rounds)
        rounds += 1
    out.extend((rounds, s))


def main():
    budget = float(sys.argv[1]) if len(sys.argv) > 1 else 1.0
    rounds, checksum = 0, 0
    # a second thread runs the same rounds all along
    stop, out = threading.Event(), []
    t = threading.Thread(target=worker, args=(stop, out))
    t.start()
    while time.process_time() < budget:
        checksum += one_round(rounds)
        rounds += 1
    stop.set()
    t.join()
    rounds += out[0]
    checksum += out[1]
    if checksum != one_round(0) * rounds:
        sys.exit("wrong checksum %d after %d rounds" % (checksum, rounds))
    print("done %d %d" % (rounds, checksum))


if __name__ == "__main__":
    main()
