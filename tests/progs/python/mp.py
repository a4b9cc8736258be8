# SPDX-License-Identifier: MIT
"""Known answer: multiprocessing workers. proc_a and proc_b run in fork()ed children, proc_c in
a spawned interpreter (fork + exec), proc_d in a child of the interpreter's default start
method (fork up to 3.13; forkserver from 3.14: a child forked by a server process that was
itself started like a spawned one). They take turns around a ring of semaphores: per turn
proc_a spins 2 * CHUNK iterations, the others CHUNK each, so the work is 2:1:1:1. Each worker
also measures the CPU time its spin calls took (time.thread_time), the reference the profile
must agree with. Prints {"pid": {"a": pid, ...}, "cpu": {"a": seconds, ...}, "default":
start method} as one JSON line.

usage: mp.py [TURNS [CHUNK]]   (default 100 turns of 30000 iterations)
"""
import json
import multiprocessing as mp
import os
import sys
import time
from work import spin, this_cpu


def take_turns(name, turns, n, mine, theirs, out):
    cpu = 0.0
    for _ in range(turns):
        mine.acquire()
        t0 = time.thread_time()
        spin(n)
        cpu += time.thread_time() - t0
        theirs.release()
    out.put((name, cpu))


def proc_a(turns, chunk, mine, theirs, out):
    take_turns("a", turns, 2 * chunk, mine, theirs, out)


def proc_b(turns, chunk, mine, theirs, out):
    take_turns("b", turns, chunk, mine, theirs, out)


def proc_c(turns, chunk, mine, theirs, out):
    take_turns("c", turns, chunk, mine, theirs, out)


def proc_d(turns, chunk, mine, theirs, out):
    take_turns("d", turns, chunk, mine, theirs, out)


def main():
    turns = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    chunk = int(sys.argv[2]) if len(sys.argv) > 2 else 30000
    # One CPU for all (children inherit it): the workers take turns anyway, and a unit of
    # work then costs about the same CPU time in each of them.
    os.sched_setaffinity(0, {this_cpu()})
    fork = mp.get_context("fork")
    spawn = mp.get_context("spawn")
    default = mp.get_context()
    # Made by the spawn context: such objects may go to children of every start method.
    sa, sb, sc, sd = (spawn.Semaphore(0) for _ in range(4))
    out = spawn.SimpleQueue()
    ps = {"a": fork.Process(target=proc_a, args=(turns, chunk, sa, sb, out)),
          "b": fork.Process(target=proc_b, args=(turns, chunk, sb, sc, out)),
          "c": spawn.Process(target=proc_c, args=(turns, chunk, sc, sd, out)),
          "d": default.Process(target=proc_d, args=(turns, chunk, sd, sa, out))}
    for p in ps.values():
        p.start()
    sa.release()
    cpu = dict(out.get() for _ in ps)
    for p in ps.values():
        p.join()
    if any(p.exitcode != 0 for p in ps.values()):
        sys.exit("a worker failed: %s" % {k: p.exitcode for k, p in ps.items()})
    print(json.dumps({"pid": {k: p.pid for k, p in ps.items()}, "cpu": cpu,
                      "default": default.get_start_method()}))


if __name__ == "__main__":
    main()
