#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A thread that already runs when the agent starts (started by a library constructor, which
the loader runs before the agent's): it gets its own stream and is sampled from outside.
Known answer: early_burn 300 ms of CPU in that thread, main_burn 200 ms in the main thread,
each within the tolerance of its samples (e2elib.Sampled) and a tick for the budget, with
both the timer and the task-clock sampling clocks."""
import e2elib as e


def one(w, clock):
    res = w.join("res-" + clock)
    r = e.pcollect([e.prog("early-thread")], result=res,
                   options=["-knob", "sampling-interval=1", "-knob", "sampling-clock=" + clock])
    e.check(r.returncode == 0 and r.stdout == "done\n",
            "%s: the program runs as without us (%d: %s)" % (clock, r.returncode, r.stderr))
    streams = e.load_streams(res)
    threads = e.thread_streams(streams)
    e.check(len(threads) == 2, "%s: two streams, the main thread's and the early one's (%d)"
            % (clock, len(threads)))
    samples = e.named_samples(streams)
    interval = streams[0].header["interval_ns"]
    for name, want_ms in (("early_burn", 300), ("main_burn", 200)):
        mine = [x for x in samples if x[2] and x[2][0] == name]
        thread = [x for x in samples if x[0] is mine[0][0]] if mine else []
        got = sum(wt for _s, wt, _st, _f in mine)
        # The budget is read on a clock that moves at ticks: a tick either way.
        e.check_time(e.sampled_of(thread, interval), got * interval, want_ms * 1e6,
                     "%s: %s" % (clock, name), stretches=1, extra_ns=e.TICK_NS)
    # Module records are in the process stream: name every stream's samples with all.
    sym = e.Symbolizer(streams)
    by_tid = {s.tid: [st[0] for _s, _w, st, _f in e.named_samples([s], sym) if st]
              for s in threads}
    early = [tid for tid, leaves in by_tid.items() if "early_burn" in leaves]
    main = [tid for tid, leaves in by_tid.items() if "main_burn" in leaves]
    e.check(len(early) == 1 and len(main) == 1 and early[0] != main[0] and
            "main_burn" not in by_tid[early[0]] and "early_burn" not in by_tid[main[0]],
            "%s: early_burn's samples are in the early thread's own stream (%s)"
            % (clock, {t: sorted(set(v)) for t, v in by_tid.items()}))


with e.Workdir("early-thread") as w:
    one(w, "timer")
    one(w, "task-clock")
