#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Programs keep their own signals: a SIGPROF handler with its own CPU-time timer gets a signal
per interval of the CPU time it used, as without the collector, and is still sampled;
blocking every signal does not stop sampling; blocking calls (pipe read, poll, nanosleep,
accept) give the same output as without us. own-signals burns 1 s of CPU time in own_work.

A POSIX CPU-time timer counts its intervals exactly (1 + si_overrun a signal): the count is
the CPU time / 10 ms, within one interval at each end, with us as alone (known: the program
is not run alone first, 1 s of CPU time a mode). setitimer's
ITIMER_PROF runs on the kernel's tick-sampled account of the process's time (a tick that finds
the process running charges it a whole tick) and sends at most one signal a tick, so on a
busy machine its count strays far either way from the CPU time, with or without us (57 and
116 for 1 s seen here): it is checked only for signals arriving at all. own_work's samples are
those with it on their stack: its budget holds the burn loop's clock reads (getrusage, 1 to
4% of the samples here), which are its callees' leaves."""
import re
import signal

import e2elib as e

WORK_NS = 1000000000  # own_work's CPU time (tests/progs/own-signals.c)
TIMER_NS = 10000000  # the program's own timer


def own(w, mode):
    """Run own-signals MODE under pcollect at 1 ms: (count, cpu_ns, result)."""
    res = w.join("res-" + mode)
    r = e.pcollect([e.prog("own-signals"), mode], result=res,
                   options=["-knob", "sampling-interval=1"])
    m, c = re.search(r"sigprof_count=(\d+)", r.stdout), re.search(r"cpu_ns=(\d+)", r.stderr)
    e.check(r.returncode == 0 and m and c, "own-signals %s runs under pcollect" % mode)
    return int(m.group(1)), int(c.group(1)), res


def check_own_work(res, what):
    """own_work's samples (those with it on their stack) against its 1 s of CPU time."""
    streams = e.load_streams(res)
    samples = e.named_samples(streams)
    wt = e.under(samples, ["own_work"])[0]["own_work"]
    interval = streams[0].header["interval_ns"]
    e.check_time(e.sampled_of(samples, interval), wt * interval, WORK_NS, what, stretches=1,
                 extra_ns=e.TICK_NS)


with e.Workdir("signals") as w:
    for mode in ("sigprof-timer", "sigprof"):
        count, cpu, res = own(w, mode)
        want = cpu / TIMER_NS
        if mode == "sigprof-timer":
            e.check(abs(count - want) <= 2, "%s with pcollect: %d intervals signalled for "
                    "%.3f s of CPU (want %.0f +- 2)" % (mode, count, cpu / 1e9, want))
        else:
            e.check(count >= 1, "%s with pcollect: %d signals for %.3f s of CPU (about %.0f, "
                    "at least one)" % (mode, count, cpu / 1e9, want))
        check_own_work(res, "%s: and own_work is sampled" % mode)

    res = w.join("res-block")
    r = e.pcollect([e.prog("own-signals"), "block-all"], result=res)
    e.check(r.returncode == 0 and r.stdout == "blocked work done\n", "block-all runs")
    check_own_work(res, "sigprocmask(SIG_BLOCK, all) does not stop sampling: own_work")

    bio = e.prog("blocking-io")
    # What it prints alone is known (blocking-io.c: every call done, none interrupted): it
    # is not run alone first to learn it.
    io_out = "pipe_bytes=200 polls=10 sleeps=10 accepted=5 eintr=0\n"
    for interval in ("10", "1"):
        r = e.pcollect([bio], result=w.join("res-io-" + interval),
                       options=["-knob", "sampling-interval=" + interval])
        e.check(r.returncode == 0 and r.stdout == io_out,
                "blocking-io under pcollect at %s ms prints the same: %s"
                % (interval, r.stdout.strip()))

    # Dispositions the program inherits: a signal its caller ignores (nohup ignores HUP, a
    # shell's background job INT and QUIT) is ignored in the program as without us.
    show = ["/bin/sh", "-c", "grep SigIgn /proc/self/status"]

    def ignoring():
        for sig in (signal.SIGHUP, signal.SIGINT, signal.SIGTERM, signal.SIGQUIT):
            signal.signal(sig, signal.SIG_IGN)
    for pre, what in ((ignoring, "ignored by the caller"), (None, "the caller's default")):
        plain = e.run(show, preexec_fn=pre)
        r = e.pcollect(show, result=w.join("res-ign-%d" % (pre is None)), preexec_fn=pre)
        e.check(r.returncode == 0 and r.stdout == plain.stdout,
                "HUP, INT, TERM, QUIT %s: the program's ignored signals as without us (%s, "
                "alone %s)" % (what, r.stdout.strip(), plain.stdout.strip()))
