#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A stream whose next window cannot be mapped for want of address space (issue 22, item 3).
tests/progs/as-full maps every free range of its address space (PROT_NONE, nothing
committed: what RLIMIT_AS does to a program that uses all it may), then burns 2.5 s of CPU
in calls 500 to 2000 deep on ever-changing paths, so that its stream, at -knob
stack-depth=2048, passes its first 256 KiB window within a second (1.5 s left a busy
machine's run, 87 deep unwinds lost as busy, at 242 KB) and its next window
cannot be mapped (ENOMEM). The thread's sampling stops there: its samples from then on are
lost for reason 'address-space' (not 'buffer'), the stop is noted with its cause, and the
summary says what happened. Known: the program's output and exit code are as without us;
the samples recorded and lost ('address-space', and 'busy' while a deep unwind still ran)
hold the 2.5 s the program burned, within the sampling tolerance."""
import e2elib as e

MS = 2500

with e.Workdir("as-window") as w:
    # Its output and exit are known (as-full.c): not run alone first to learn them.
    res = e.collect(w, "res", [e.prog("as-full"), MS], interval=1,
                    stdout="address space full, burned %d ms\n" % MS,
                    options=["-knob", "stack-depth=2048"], finalize=True)
    lost = dict(((r, (c, wt)) for r, c, wt in e.db_rows(
        res, "SELECT reason, sum(count), sum(weight) FROM lost GROUP BY reason")))
    print("lost: %s" % lost)
    e.check("address-space" in lost and lost["address-space"][0] > 0,
            "samples lost for reason address-space (%s)" % lost)
    e.check("buffer" not in lost, "none lost for reason buffer (%s)" % lost)
    notes = e.db_rows(res, "SELECT detail FROM notes WHERE kind = 'stream-stopped'")
    e.check(notes and "no address space left" in notes[0][0],
            "the stop is noted with its cause (%s)" % notes)
    text = e.preport("-r", res, "-view", "summary").stdout
    e.check("left no address space" in text, "the summary says why sampling stopped")
    stats = e.db_sampled(res)
    kept = sum(wt for r, (_c, wt) in lost.items() if r in ("address-space", "busy"))
    # What it does besides the burn (its fill and unmapping) is a few ms: 20 ms allowed.
    e.check_time(stats, stats.total_ns + kept * stats.interval_ns, MS * 1e6,
                 "recorded and lost samples together", extra_ns=20e6)
