# SPDX-License-Identifier: MIT
"""Known answer for pause, resume and regions from Python (the pcollect module), as
tests/progs/regions.c does in C: run under pcollect -start-paused, setup_work runs paused (no
sample of it, nor of the interpreter's start), the program resumes, outside_work is in no
region, small_work (a with-block) and large_work (a decorated function) burn 1:2 in "solve",
then the program pauses for teardown_work. Each phase's CPU time (the thread's clock) goes to
stderr; "regions done" and whether pcollect saw the program to stdout.

usage: regions.py [SCALE]   (every budget times SCALE; default 1)
"""
import sys

import pcollect
from work import cpu_ns, spin_for

spent = {}


def measured(name, ms):
    t0 = cpu_ns()
    spin_for(ms)
    spent[name] = cpu_ns() - t0


def setup_work(scale):
    measured("setup", 300 * scale)


def outside_work(scale):
    measured("outside", 200 * scale)


def small_work(scale):
    measured("small", 300 * scale)


@pcollect.region("large")
def large_work(scale):
    measured("large", 600 * scale)


def teardown_work(scale):
    measured("teardown", 300 * scale)


def main():
    scale = float(sys.argv[1]) if len(sys.argv) > 1 else 1.0
    setup_work(scale)
    pcollect.resume()
    outside_work(scale)
    with pcollect.region("solve"):
        with pcollect.region("small"):
            small_work(scale)
        large_work(scale)
    pcollect.pause()
    teardown_work(scale)
    sys.stderr.write(" ".join("%s_ns=%d" % kv for kv in sorted(spent.items())) + "\n")
    print("regions done active=%d" % pcollect.active())


main()
