# SPDX-License-Identifier: MIT
"""Known answer: multiprocessing workers. proc_a and proc_b run in fork()ed children, proc_c in
a spawned interpreter (fork + exec). They take turns around a ring of semaphores: per turn
proc_a spins for 2 * UNIT ms of its CPU time, proc_b and proc_c for UNIT ms each, so the CPU
time is 2:1:1. Each worker also measures the CPU time its spin calls took (time.thread_time,
read twice a turn), the reference the profile must agree with. Prints
{"pid": {"a": pid, ...}, "cpu": {"a": seconds, ...}} as one JSON line.

usage: mp.py [TURNS [UNIT]]   (default 20 turns of 10 ms)
"""
import json
import multiprocessing as mp
import sys
import time
from work import spin_for


def take_turns(name, turns, ms, mine, theirs, out):
    cpu = 0
    for _ in range(turns):
        mine.acquire()
        t0 = time.thread_time_ns()
        spin_for(ms)
        cpu += time.thread_time_ns() - t0
        theirs.release()
    out.put((name, cpu / 1e9))


def proc_a(turns, unit, mine, theirs, out):
    take_turns("a", turns, 2 * unit, mine, theirs, out)


def proc_b(turns, unit, mine, theirs, out):
    take_turns("b", turns, unit, mine, theirs, out)


def proc_c(turns, unit, mine, theirs, out):
    take_turns("c", turns, unit, mine, theirs, out)


def main():
    turns = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    unit = float(sys.argv[2]) if len(sys.argv) > 2 else 10
    fork = mp.get_context("fork")
    spawn = mp.get_context("spawn")
    # Made by the spawn context: such objects may go to spawned and forked children alike.
    sa, sb, sc = spawn.Semaphore(0), spawn.Semaphore(0), spawn.Semaphore(0)
    out = spawn.SimpleQueue()
    ps = {"a": fork.Process(target=proc_a, args=(turns, unit, sa, sb, out)),
          "b": fork.Process(target=proc_b, args=(turns, unit, sb, sc, out)),
          "c": spawn.Process(target=proc_c, args=(turns, unit, sc, sa, out))}
    for p in ps.values():
        p.start()
    sa.release()
    cpu = dict(out.get() for _ in ps)
    for p in ps.values():
        p.join()
    if any(p.exitcode != 0 for p in ps.values()):
        sys.exit("a worker failed: %s" % {k: p.exitcode for k, p in ps.items()})
    print(json.dumps({"pid": {k: p.pid for k, p in ps.items()}, "cpu": cpu}))


if __name__ == "__main__":
    main()
