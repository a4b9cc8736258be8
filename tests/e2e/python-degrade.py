#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Degradation, on one interpreter (the argument): a thread made by C code (no Python thread
state) and a sub-interpreter are sampled as native code with notes in the result; an
interpreter of a version the agent does not know (3.9) gives native stacks and a note. The
program must run to its end and its time must all be there. Each phase burns 300 ms of CPU
time (tests/progs/python/degrade.py, which prints each phase's window and CPU time); the
samples must hold them, within the tolerance of e2elib.Sampled."""
import json
import os

import e2elib as e
import pylib

LIB = os.path.join(e.BUILD, "tests", "progs", "libpyburn.so")
MS = 200  # each phase's CPU time


def in_window(db, window, tid):
    """(stack id, weight) of thread tid's samples inside a phase's window."""
    start = int(db.meta("start_monotonic_ns"))
    return [(sid, wt) for t, ttid, _pid, sid, wt in db.timeline()
            if ttid == tid and window[0] <= start + t <= window[1]]


def main():
    label = pylib.label_arg()
    python = pylib.interpreter(label)
    unsupported = label == "3.9"
    with e.Workdir("py-degrade") as w:
        res = e.collect(w, "res", [python, pylib.program("degrade.py"), LIB, MS, MS, MS],
                        interval=1, finalize=True)
        out = res.stdout
        phases = json.loads(out.strip().splitlines()[-1])
        e.check(set(phases) == {"spin", "cthread", "sub"}, "degrade.py ran to its end")
        db = e.Db(res)
        notes = db.notes()
        print("notes: %s; phases %s" % (notes, phases))
        stats = e.db_sampled(res)
        interval = stats.interval_ns
        py_count = sum(c for _th, sid, c, _w, _t in db.samples if db.python_frames(sid))
        count = sum(c for _th, _sid, c, _w, _t in db.samples)
        summary = res.preport("-view", "summary", "-format", "csv").stdout
        if unsupported:
            e.check(py_count == 0, "3.9: %d samples, none with Python frames" % count)
            # The phases, and starting Python besides: at least their CPU time.
            phases_ns = (phases["spin"][2] + phases["sub"][2]) * 1e9 + MS * 1e6
            tol = stats.time_tolerance_ns(stats.total_ns) + e.TICK_NS
            e.check(stats.total_ns >= phases_ns - tol, "3.9: the run's samples hold its three "
                    "phases: %.3f s sampled, %.3f s in the phases (less %.3f s; %s)"
                    % (stats.total_ns / 1e9, phases_ns / 1e9, tol / 1e9, stats))
            e.check(notes.get("unknown-version", 0) >= 0.9 * count,
                    "3.9: the unknown-version note counts the samples (%s of %d)"
                    % (notes.get("unknown-version"), count))
            e.check("Samples Without Python Frames (unknown-version)" in summary,
                    "the summary says why Python frames are missing")
            return
        main_tid = [tid for tid, pid in db.threads.values() if tid == pid][0]

        # Python: the main thread's samples in the spin phase have its frames.
        spin = in_window(db, phases["spin"], main_tid)
        with_py = sum(wt for sid, wt in spin if any(
            f["name"] == "spin_for" for f in db.python_frames(sid)))
        e.check_time(stats, with_py * interval, phases["spin"][2] * 1e9,
                     "spin_for, with its Python frames, against its phase's CPU time",
                     stretches=1)

        # The C thread: its samples are native (pyburn_thread_main), with the note.
        ct, nct, wct = {}, 0, 0
        for th, sid, c, wt, _t in db.samples:
            names = [f["name"] for f in db.stack(sid)]
            if "pyburn_thread_main" in names:
                ct[th] = ct.get(th, 0) + c
                nct += c
                wct += wt
                if db.python_frames(sid):
                    e.fail("a sample of the C thread has Python frames: %s" % names)
        e.check(len(ct) == 1, "the C thread's samples are in one thread (%d)" % len(ct))
        e.check_time(stats, wct * interval, MS * 1e6, "the C thread's native samples, against "
                     "its budget", stretches=1, extra_ns=e.TICK_NS)
        e.check(notes.get("no-thread-state", 0) >= 0.9 * nct,
                "no-thread-state note: %s for the C thread's %d samples"
                % (notes.get("no-thread-state"), nct))

        # The sub-interpreter: samples in the eval loop without Python frames, with the note.
        sub = in_window(db, phases["sub"], main_tid)
        e.check_time(stats, sum(wt for _sid, wt in sub) * interval, phases["sub"][2] * 1e9,
                     "the sub-interpreter's samples against its phase's CPU time", stretches=1)
        bare = sum(1 for sid, _wt in sub if not db.python_frames(sid))
        e.check(bare >= 0.9 * len(sub) and notes.get("subinterpreter", 0) >= bare,
                "the sub-interpreter's samples have no Python frames (%d of %d) and the "
                "subinterpreter note counts them (%s)" % (bare, len(sub),
                                                          notes.get("subinterpreter")))
        e.check("Samples Without Python Frames (subinterpreter)" in summary and
                "Samples Without Python Frames (no-thread-state)" in summary,
                "the summary names both reasons")
        hs = e.rows(res, "-view", "hotspots")
        e.check(abs(sum(e.secs(r) for r in hs) - sum(t for *_x, t in db.samples) / 1e9)
                < 0.001 * max(1, len(hs)), "hotspots account for every sample")


if __name__ == "__main__":
    main()
