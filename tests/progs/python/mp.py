# SPDX-License-Identifier: MIT
"""Known answer: multiprocessing workers. proc_a and proc_b run in fork()ed children, proc_c in
a spawned interpreter (fork + exec), proc_d in a child of the interpreter's default start
method (fork up to 3.13; forkserver from 3.14: a child forked by a server process that was
itself started like a spawned one). They take turns around a ring of semaphores: per turn
proc_a spins for 2 * UNIT ms of its CPU time, the others for UNIT ms each, so the CPU time is
2:1:1:1. Each worker also measures the CPU time its spin calls took (time.thread_time, read
twice a turn), the reference the profile must agree with. Prints {"pid": {"a": pid, ...},
"cpu": {"a": seconds, ...}, "default": start method} as one JSON line.

usage: mp.py [TURNS [UNIT]]   (default 20 turns of 10 ms)
"""
import json
import multiprocessing as mp
import sys
from work import take_turns


def proc_a(turns, unit, mine, theirs, out):
    out.put(("a", take_turns(turns, 2 * unit, mine, theirs)))


def proc_b(turns, unit, mine, theirs, out):
    out.put(("b", take_turns(turns, unit, mine, theirs)))


def proc_c(turns, unit, mine, theirs, out):
    out.put(("c", take_turns(turns, unit, mine, theirs)))


def proc_d(turns, unit, mine, theirs, out):
    out.put(("d", take_turns(turns, unit, mine, theirs)))


def main():
    turns = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    unit = float(sys.argv[2]) if len(sys.argv) > 2 else 10
    fork = mp.get_context("fork")
    spawn = mp.get_context("spawn")
    default = mp.get_context()
    # Made by the spawn context: such objects may go to children of every start method.
    sa, sb, sc, sd = (spawn.Semaphore(0) for _ in range(4))
    out = spawn.SimpleQueue()
    ps = {"a": fork.Process(target=proc_a, args=(turns, unit, sa, sb, out)),
          "b": fork.Process(target=proc_b, args=(turns, unit, sb, sc, out)),
          "c": spawn.Process(target=proc_c, args=(turns, unit, sc, sd, out)),
          "d": default.Process(target=proc_d, args=(turns, unit, sd, sa, out))}
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
