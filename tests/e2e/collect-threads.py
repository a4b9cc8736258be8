#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Four threads burning 1, 2, 3 and 4 units of CPU time (200 ms each): each thread has its own
stream and its name; its THREAD_END CPU time is its budget, and its samples (weight x
interval) are that CPU time, within the tolerances of e2elib.Sampled. Almost all of it is in
thread_work (the rest: reading the clock between chunks)."""
import re

import e2elib as e

UNIT_NS = 200000000  # tests/progs/threads-work.c

with e.Workdir("threads") as w:
    res = w.join("res")
    r = e.pcollect([e.prog("threads-work")], result=res,
                   options=["-knob", "sampling-interval=1"])
    e.check(r.returncode == 0, "pcollect exits 0 (%d: %s)" % (r.returncode, r.stderr.strip()))
    e.check(r.stdout == "threads=4\n", "the program's output is unchanged")
    used = {int(m.group(1)): int(m.group(2))
            for m in re.finditer(r"^worker-(\d) cpu_ns=(\d+)$", r.stderr, re.M)}
    e.check(sorted(used) == [1, 2, 3, 4], "each worker said the CPU time it used (%s)" % used)
    streams = e.load_streams(res)
    threads = e.thread_streams(streams)
    e.check(len(threads) == 5, "one stream per thread: main and 4 workers (%d)" % len(threads))
    e.check(all(s.stats["bytes_skipped"] == 0 for s in streams), "all streams read cleanly")
    names = {}
    for s in streams:
        for rec in s.of_type("thread_name"):
            names[rec["tid"]] = rec["name"]
    workers = {}
    for s in threads:
        n = names.get(s.tid, "")
        if n.startswith("worker-"):
            workers[int(n[7:])] = s
    e.check(sorted(workers) == [1, 2, 3, 4], "pthread_setname_np names recorded: %s"
            % sorted(names.values()))
    for k in sorted(workers):
        s = workers[k]
        interval = s.header["interval_ns"]
        stats = e.sampled_of(s.samples(), interval)
        print("worker-%d: weight %d, cpu %.3f s" % (k, s.weight(), s.cpu_ns() / 1e9))
        # The budget is read on a clock that moves at ticks (a tick late at most), and in a
        # VM the host may hold the CPU past its end: the thread read the kernel's exact count
        # once its work was done, and THREAD_END says that (within two ticks: its exit, and
        # the agent's own reading of the clock).
        e.check(used[k] >= k * UNIT_NS - e.TICK_NS,
                "worker-%d: burned its budget %.1f s (%.3f s)" % (k, k * UNIT_NS / 1e9,
                                                                  used[k] / 1e9))
        e.check(abs(s.cpu_ns() - used[k]) <= 2 * e.TICK_NS,
                "worker-%d: THREAD_END cpu %.3f s is what it used, %.3f s (budget %.1f s)" % (
                    k, s.cpu_ns() / 1e9, used[k] / 1e9, k * UNIT_NS / 1e9))
        e.check_time(stats, s.weight() * interval, s.cpu_ns(),
                     "worker-%d: its samples against its CPU time" % k)
        e.check(len(s.of_type("thread_start")) == 1 and len(s.of_type("thread_end")) == 1,
                "worker-%d: one THREAD_START and one THREAD_END" % k)
    worker_streams = list(workers.values())
    samples = e.named_samples(worker_streams, e.Symbolizer(streams))
    stats = e.sampled_of(samples, streams[0].header["interval_ns"], threads=4)
    leafs = sum(wt for _s, wt, st, _f in samples if st[0] == "thread_work")
    share = leafs / stats.weight
    e.check(share >= 0.99 - stats.share_tolerance(0.99),
            "%.1f%% of the worker weight is in thread_work (want 99%% or more, less %.1f; %s)"
            % (100.0 * share, 100 * stats.share_tolerance(0.99), stats))
