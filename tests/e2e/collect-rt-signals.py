#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A program's own real-time signals stay its own (issue 22, item 2; tests/progs/rt-signals.c).
It takes a signal for itself (blocks it and sigtimedwait()s it, reads it from a signalfd, or
gives it a handler), sends it to itself 10 times between 20 ms bursts of rt_work while a second
thread burns 150 ms in side_work: under pcollect it prints the same and exits 0, as alone,
whether the signal is 57 (SIGRTMAX-7, the collector's signal once: the program died of it,
exit 185), SIGRTMAX (the signal the agent chooses first: sampling moves to another) or one
forced with -knob sampling-signal; rt_work and side_work are still sampled for their CPU time.
A program that takes every real-time signal runs the same, and what it burns after is
reported lost for want of a signal (reason no-signal) with its CPU time; one that blocks
every signal but SIGINT and SIGTERM (a blanket, which claims none) is still sampled. -knob
sampling-signal is checked."""
import re
import signal

import e2elib as e

prog = e.prog("rt-signals")
ROUNDS = 10  # rt-signals.c


def said(how, n):
    """What rt-signals prints when all n signals it sent came back (rt-signals.c), as it
    does alone: known, so the program is not run alone first to learn it."""
    return "%s: %d of %d signals came back as sent\n" % (how, n, n)


def known(res):
    """The CPU time (ns) each function burned, as the program measured it (its stderr):
    rt_work 10 x 20 ms, side_work 150 ms, early_work 100 ms ("all", before it takes the
    signals), each a tick late at most."""
    return {k: int(v) for k, v in re.findall(r"(\w+)_ns=(\d+)", res.stderr)}


def check_work(res, what, names):
    """Each of names sampled for the CPU time it burned, in the thread it ran in."""
    want = {n: known(res)[n] for n in names}
    streams = e.load_streams(res)
    samples = e.named_samples(streams)
    interval = streams[0].header["interval_ns"]
    for name, burned in want.items():
        mine = [x for x in samples if any(name in y[2] for y in samples if y[0] is x[0])]
        weight = e.under(mine, [name])[0][name]
        e.check_time(e.sampled_of(mine, interval), weight * interval, burned,
                     "%s: %s" % (what, name), stretches=1, extra_ns=e.TICK_NS)


with e.Workdir("rt-signals") as w:
    # The program's output and exit do not depend on the signal's number.
    cases = [("queue-57", ["queue", 57], []), ("signalfd-57", ["signalfd", 57], []),
             ("queue-max", ["queue", signal.SIGRTMAX], []),
             ("handler-forced", ["handler", 50], ["-knob", "sampling-signal=50"])]
    for name, args, opts in cases:
        res = e.collect(w, name, [prog] + args, interval=1, options=opts,
                        stdout=said(args[0], ROUNDS))
        check_work(res, name, ["rt_work", "side_work"])
        moved = "took signal %d for itself: sampling moved" % args[1] in res.agent_log()
        e.check(moved == (args[1] != 57), "%s: the agent %s" % (name, (
            "moved off the program's signal" if args[1] != 57 else
            "never sampled with the program's signal")))

    # every real-time signal (SIGRTMIN to SIGRTMAX, as the C library counts them), each round
    res = e.collect(w, "all", [prog, "all"], interval=1,
                    stdout=said("all", ROUNDS * (signal.SIGRTMAX - signal.SIGRTMIN + 1)))
    summary = e.finalize(res, options=())
    check_work(res, "all", ["early_work"])
    rt_ns = known(res)["rt_work"]
    lost = res.db("SELECT sum(count), sum(weight) FROM lost WHERE reason = 'no-signal'")[0]
    interval = int(res.db("SELECT value FROM meta WHERE key = 'collect.interval_ns'")[0][0])
    e.check(lost[0] and e.cpu_close(lost[1] * interval, rt_ns, interval),
            "all: the CPU time after every real-time signal was taken is lost, reason "
            "no-signal: %.3f s (rt_work's %.3f s known, and the signals' own)" % (
                (lost[1] or 0) * interval / 1e9, rt_ns / 1e9))
    e.check("no-signal" in summary, "all: pfinalize's summary says why: " + " ".join(
        x.strip() for x in summary.splitlines() if "no-signal" in x))

    res = e.collect(w, "blanket", [prog, "blanket"], interval=1,
                    stdout="blanket: %d rounds\n" % ROUNDS)
    check_work(res, "blanket", ["rt_work"])
    e.check("took signal" not in res.agent_log(), "blanket: the agent kept its signal")

    for bad in ("70", "0", "33", "x"):
        r = e.pcollect([prog, "handler", "50"], options=["-knob", "sampling-signal=" + bad])
        e.check(r.returncode == 2 and "knob 'sampling-signal': '%s' is not a real-time signal"
                % bad in r.stderr, "-knob sampling-signal=%s refused (exit %d: %s)" % (
                    bad, r.returncode, r.stderr.strip().splitlines()[:1]))
