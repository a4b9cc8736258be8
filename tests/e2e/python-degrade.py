#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Degradation, on one interpreter (the argument): a thread made by C code (no Python thread
state) and a sub-interpreter are sampled as native code with notes in the result; an
interpreter of a version the agent does not know (3.9) gives native stacks and a note. The
program must run to its end and its time must all be there."""
import os

import e2elib as e
import pylib

LIB = os.path.join(e.BUILD, "tests", "progs", "libpyburn.so")


def main():
    label = pylib.label_arg()
    python = pylib.interpreter(label)
    unsupported = label == "3.9"
    with e.Workdir("py-degrade") as w:
        res, out = pylib.collect(w, "res", python, "degrade.py", [LIB, 12000000, 240000000])
        e.check(len(out.split()) == 2, "degrade.py ran to its end (%s)" % out.strip())
        db = pylib.Db(res)
        notes = db.notes()
        print("notes: %s" % notes)
        py_samples = sum(c for _th, sid, c, _w, _t in db.samples if db.python_frames(sid))
        total = sum(c for _th, _sid, c, _w, _t in db.samples)
        summary = pylib.preport(res, "-view", "summary", "-format", "csv").stdout
        if unsupported:
            e.check(py_samples == 0 and total >= 100,
                    "3.9: %d samples, none with Python frames" % total)
            e.check(notes.get("unknown-version", 0) >= 0.9 * total,
                    "3.9: the unknown-version note counts the samples (%s of %d)"
                    % (notes.get("unknown-version"), total))
            e.check("Samples Without Python Frames (unknown-version)" in summary,
                    "the summary says why Python frames are missing")
            return
        e.check(py_samples >= 50, "spin has Python frames (%d samples)" % py_samples)

        # The C thread: its samples are native (pyburn_thread_main), with the note.
        ct = {}
        for th, sid, c, _w, _t in db.samples:
            names = [f["name"] for f in db.stack(sid)]
            if "pyburn_thread_main" in names:
                ct[th] = ct.get(th, 0) + c
                if db.python_frames(sid):
                    e.fail("a sample of the C thread has Python frames: %s" % names)
        nct = sum(ct.values())
        e.check(len(ct) == 1 and nct >= 40, "the C thread has %d native samples" % nct)
        e.check(notes.get("no-thread-state", 0) >= 0.9 * nct,
                "no-thread-state note: %s for the C thread's %d samples"
                % (notes.get("no-thread-state"), nct))

        # The sub-interpreter: samples in the eval loop without Python frames, with the note.
        e.check(notes.get("subinterpreter", 0) >= 20,
                "subinterpreter note counts %s samples" % notes.get("subinterpreter"))
        e.check("Samples Without Python Frames (subinterpreter)" in summary and
                "Samples Without Python Frames (no-thread-state)" in summary,
                "the summary names both reasons")
        hs = pylib.rows(res, "-view", "hotspots")
        e.check(abs(sum(pylib.secs(r) for r in hs) - sum(t for *_x, t in db.samples) / 1e9)
                < 0.001 * max(1, len(hs)), "hotspots account for every sample")


if __name__ == "__main__":
    main()
