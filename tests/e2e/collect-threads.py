#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Four threads doing 1, 2, 3 and 4 units of work: each thread has its own stream, its name,
and sample weights (and THREAD_END CPU times) in ratio 1:2:3:4 within 5%."""
import e2elib as e

with e.Workdir("threads") as w:
    res = w.join("res")
    r = e.pcollect([e.prog("threads-work")], result=res,
                   options=["-knob", "sampling-interval=1"])
    e.check(r.returncode == 0, "pcollect exits 0 (%d: %s)" % (r.returncode, r.stderr.strip()))
    e.check(r.stdout == "threads=4\n", "the program's output is unchanged")
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
    total = sum(workers[k].weight() for k in workers)
    cpu_total = sum(workers[k].cpu_ns() for k in workers)
    for k in sorted(workers):
        s = workers[k]
        want = k / 10.0
        got = s.weight() / total
        print("worker-%d: weight %d (%.3f of all), cpu %.3f s" % (k, s.weight(), got,
                                                                  s.cpu_ns() / 1e9))
        e.check(abs(got - want) <= 0.05 * want,
                "worker-%d has %.3f of the weight (want %.1f within 5%%)" % (k, got, want))
        got_cpu = s.cpu_ns() / cpu_total
        e.check(abs(got_cpu - want) <= 0.05 * want,
                "worker-%d THREAD_END cpu share %.3f (want %.1f within 5%%)" % (k, got_cpu, want))
        e.check(abs(s.weight() * s.header["interval_ns"] - s.cpu_ns()) <= 0.05 * s.cpu_ns(),
                "worker-%d: weight x interval matches its CPU time within 5%%" % k)
        e.check(len(s.of_type("thread_start")) == 1 and len(s.of_type("thread_end")) == 1,
                "worker-%d: one THREAD_START and one THREAD_END" % k)
    samples = e.named_samples(list(workers.values()), e.Symbolizer(streams))
    leafs = sum(wt for _s, wt, st, _f in samples if st[0] == "thread_work")
    e.check(leafs >= 0.97 * total, "%.1f%% of the worker weight is in thread_work"
            % (100.0 * leafs / total))
