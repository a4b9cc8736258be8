#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Programs keep their own signals: a SIGPROF handler with setitimer gets as many signals as
without the collector and is still sampled; blocking every signal does not stop sampling;
blocking calls (pipe read, poll, nanosleep, accept) give the same output as without us."""
import re

import e2elib as e

with e.Workdir("signals") as w:
    own = e.prog("own-signals")
    plain = e.run([own, "sigprof"])
    m0 = re.search(r"sigprof_count=(\d+)", plain.stdout)
    res = w.join("res")
    r = e.pcollect([own, "sigprof"], result=res, options=["-knob", "sampling-interval=1"])
    m1 = re.search(r"sigprof_count=(\d+)", r.stdout)
    e.check(r.returncode == 0 and m0 and m1, "own-signals runs with and without pcollect")
    c0, c1 = int(m0.group(1)), int(m1.group(1))
    e.check(c0 > 50 and abs(c1 - c0) <= 0.15 * c0 + 3,
            "the program's SIGPROF count is kept: %d with pcollect, %d without" % (c1, c0))
    samples = e.named_samples(e.load_streams(res))
    wt = sum(x[1] for x in samples if x[2][0] == "own_work")
    e.check(wt >= 0.8 * c0 * 10,
            "and it is sampled: own_work weight %d at 1 ms (~%d ms of CPU)" % (wt, c0 * 10))

    res = w.join("res-block")
    r = e.pcollect([own, "block-all"], result=res)
    e.check(r.returncode == 0 and r.stdout == "blocked work done\n", "block-all runs")
    streams = e.load_streams(res)
    samples = e.named_samples(streams)
    wt = sum(x[1] for x in samples if x[2][0] == "own_work")
    cpu = sum(s.cpu_ns() for s in streams)
    e.check(wt * 10e6 >= 0.9 * cpu and wt > 50,
            "sigprocmask(SIG_BLOCK, all) does not stop sampling: weight %d for %.2f s of CPU"
            % (wt, cpu / 1e9))

    bio = e.prog("blocking-io")
    plain = e.run([bio])
    e.check(plain.returncode == 0 and "eintr=0" in plain.stdout, "blocking-io alone: "
            + plain.stdout.strip())
    for interval in ("10", "1"):
        r = e.pcollect([bio], result=w.join("res-io-" + interval),
                       options=["-knob", "sampling-interval=" + interval])
        e.check(r.returncode == 0 and r.stdout == plain.stdout,
                "blocking-io under pcollect at %s ms prints the same: %s"
                % (interval, r.stdout.strip()))
