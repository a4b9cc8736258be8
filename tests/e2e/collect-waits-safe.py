#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The program sees no difference (tests/progs/no-eintr.c): sleeps, poll, select, epoll, a
timed semaphore, a futex and a condition with timeouts, between bursts of CPU work, abort the
program on any EINTR, any sleep or timeout cut short, any errno moved by a call that
succeeded. It runs clean at 1 ms under hotspots and threading, with both sampling clocks; and
with the sampling signal made to interrupt nearly every call ("forge": a CLOCK_MONOTONIC timer
of the program's sends it with the agent's cookie), which without pcollect interrupts most of
them: the agent resumes what only its signal interrupted."""
import e2elib as e

# CPU time of the program's bursts: 200 ms make over 1,000 calls a run (1,300 to 1,450 on a
# quiet machine; the check wants 100), a third of them interrupted without us
BUDGET_MS = "200"

prog = e.prog("no-eintr")
alone = e.run([prog, "forge", BUDGET_MS], timeout=120)
e.check(alone.returncode == 0, "alone: the program runs (%d: %s)" % (alone.returncode,
                                                                    alone.stderr.strip()))
counts = dict(w.split("=") for w in alone.stdout.split())
e.check(int(counts["eintr"]) > int(counts["calls"]) // 10,
        "alone, its own handler: %s of %s calls interrupted (the hazard is real)" % (
            counts["eintr"], counts["calls"]))

with e.Workdir("waits-safe") as w:
    for clock in ("timer", "task-clock"):
        for analysis in ("hotspots", "threading"):
            for mode in ("plain", "forge"):
                name = "%s-%s-%s" % (analysis, clock, mode)
                # forge sends signal 57 with our cookie: the agent's, forced (the program
                # reads PCOLLECT_SIGNAL).
                r = e.pcollect([prog, mode, BUDGET_MS], result=w.join(name),
                               analysis=analysis,
                               options=["-knob", "sampling-interval=1", "-knob",
                                        "sampling-clock=" + clock] +
                               (["-knob", "sampling-signal=57"] if mode == "forge" else []))
                out = dict(x.split("=") for x in r.stdout.split()) if r.returncode == 0 \
                    else {}
                e.check(r.returncode == 0 and out.get("eintr") == "0" and
                        int(out.get("calls", 0)) > 100,
                        "%s: no EINTR, no short sleep, errno kept (exit %d, %s %s)" % (
                            name, r.returncode, r.stdout.strip(), r.stderr.strip()[-300:]))
