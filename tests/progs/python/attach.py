# SPDX-License-Identifier: MIT
"""Known answer for pcollect -target-pid on a Python program it did not start: CPU time of the
thread's own clock in phase_one until a file appears (the test makes it once pcollect has let
go), then a budget in phase_two, each in chunks of CHUNK_MS, each chunk in the region named
after its phase (pcollect.region: the module finds an agent attached later at its next call).
Prints its pid first and "attach done" at the end.

usage: attach.py FILE MS2   (phase_one until FILE exists; CPU milliseconds of phase_two)
"""
import os
import sys

import pcollect
from work import spin_for

CHUNK_MS = 20


def phase_one(until):
    while not os.path.exists(until):
        with pcollect.region("one"):
            spin_for(CHUNK_MS)


def phase_two(ms):
    for _ in range(int(ms // CHUNK_MS)):
        with pcollect.region("two"):
            spin_for(CHUNK_MS)


def main():
    print("pid=%d" % os.getpid(), flush=True)
    phase_one(sys.argv[1])
    phase_two(float(sys.argv[2]))
    print("attach done")


main()
