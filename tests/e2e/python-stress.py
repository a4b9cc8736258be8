#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Sampling at 1 ms while Python frees and reallocates frames and code objects (deep
recursion unwinding by return and by exception, generators dropped half-run, exec-made
functions deleted, closures, classes), in two threads, on one interpreter (the argument):
tests/progs/python/stress.py. Every run must end as it does without the profiler (exit 0, its
checksum right), pfinalize must read what was written, and the samples must show the
program's own functions with sane names, never bytes of some freed object taken for a name.

Runs PCOLLECT_STRESS_RUNS times (default 1, 0.6 s of CPU each; the CPU-time timers fire at
most once a 4 ms tick: ~150 samples a run; tests/stress-suite runs it 3 times)."""
import os
import re

import e2elib as e
import pylib

OURS = {"down", "down_raise", "gen", "nested_raise", "one_round", "worker", "main",
        "<module>", "<genexpr>", "<listcomp>", "<lambda>"}
NAME = re.compile(r"^[A-Za-z_<][\w.<>-]*$")


def one_run(w, python, k):
    res = e.collect(w, "res%d" % k, [python, pylib.program("stress.py"), "0.6"], interval=1,
                    finalize=True)
    out = res.stdout
    e.check(out.startswith("done "), "run %d: stress.py ended with its checksum (%s)"
            % (k, out.strip()))
    db = e.Db(res)
    total = with_py = ours = 0
    names = set()
    for _th, sid, count, _w, _t in db.samples:
        total += count
        frames = db.python_frames(sid)
        if frames:
            with_py += count
        for f in frames:
            names.add(f["name"])
        if any(f["name"].split(".")[-1] in OURS or f["name"].startswith("made_") or
               f["name"].startswith("one_round.") for f in frames):
            ours += count
    # CPython 3.12+'s entry frames run a shim code object ("<interpreter trampoline>"): the
    # agent skips them, also one read while it is set up or left on the C stack.
    bad = sorted(n for n in names if n != "[python]" and not NAME.match(n))
    e.check(not bad, "run %d: every Python name is a name (%s)" % (k, bad[:5]))
    e.check(total >= 100 and ours >= 0.8 * total,
            "run %d: %d of %d samples in the program's own functions (%d with Python frames)"
            % (k, ours, total, with_py))
    notes = db.notes()
    e.check(notes.get("read-failed", 0) <= 0.05 * total,
            "run %d: frames that could not be read: %s of %d samples"
            % (k, notes.get("read-failed", 0), total))


def main():
    python = pylib.interpreter(pylib.label_arg())
    runs = int(os.environ.get("PCOLLECT_STRESS_RUNS", "1"))
    with e.Workdir("py-stress") as w:
        for k in range(runs):
            one_run(w, python, k)


if __name__ == "__main__":
    main()
