#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Two threads dlopen/dlclose a library in a loop while a third burns CPU, sampled at 1 ms,
each thread for a budget of CPU time: no hang, no crash, every stream reads cleanly, the
library's loads and unloads are recorded, and every thread's CPU time is accounted for by its
samples plus the samples skipped inside the loader (counted as lost, reason busy), within the
tolerance of e2elib.Sampled.
The suite runs 3 x 0.6 s of CPU a thread (three starts and ends, hundreds of dlopen/dlclose
cycles each); bench/collector-dlopen-stress.sh runs 20 x 5 s.
Environment: STRESS_RUNS, STRESS_SECONDS (CPU seconds a thread) override the defaults."""
import os
import re
import subprocess

import e2elib as e

RUNS = int(os.environ.get("STRESS_RUNS", "3"))
SECONDS = float(os.environ.get("STRESS_SECONDS", "0.6"))
TIMEOUT = SECONDS * 3 * 20 + 60  # 3 threads' CPU time, on a machine 20 times too busy

with e.Workdir("dlopen-stress") as w:
    lib = os.path.join(e.BUILD, "tests", "progs", "libdl-work-lib.so")
    for i in range(RUNS):
        res = w.join("res%d" % i)
        try:
            r = e.pcollect([e.prog("dlopen-stress"), lib, str(SECONDS)], result=res,
                           options=["-knob", "sampling-interval=1"], timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            e.fail("run %d: hung (no exit within %d s)" % (i, TIMEOUT))
        e.check(r.returncode == 0 and r.stdout == "dlopen_cycles=1\n",
                "run %d: exit 0 and the program's output (%d, %r, %s)"
                % (i, r.returncode, r.stdout, r.stderr.strip()))
        threads = {int(t): (int(c), int(n)) for t, c, n in
                   re.findall(r"tid=(\d+) cpu_ns=(\d+) cycles=(\d+)", r.stderr)}
        streams = e.load_streams(res)
        e.check(all(s.stats["bytes_skipped"] == 0 for s in streams),
                "run %d: %d streams read cleanly" % (i, len(streams)))
        loads = sum(len(s.of_type("module_load")) for s in streams)
        unloads = sum(len(s.of_type("module_unload")) for s in streams)
        cycles = sum(n for _c, n in threads.values())
        print("run %d: %d dlopen/dlclose cycles, %d module loads, %d unloads" % (
            i, cycles, loads, unloads))
        e.check(unloads >= 10 and loads > unloads,
                "run %d: dlopen/dlclose cycles recorded as module loads and unloads" % i)
        by_tid = {s.tid: s for s in streams}
        e.check(len(threads) == 3 and set(threads) <= set(by_tid),
                "run %d: the three threads have streams" % i)
        for tid, (cpu, n) in sorted(threads.items()):
            s = by_tid[tid]
            interval = s.header["interval_ns"]
            lost = [x for x in s.of_type("lost") if x["reason"] == e.LOST_BUSY]
            other = [x for x in s.of_type("lost") if x["reason"] != e.LOST_BUSY]
            e.check(not other, "run %d: thread %d lost no sample but inside the loader (%s)"
                    % (i, tid, other))
            busy = sum(x["weight"] for x in lost)
            # A lost record counts several skipped samples: each weighs its mean.
            skipped = [x["weight"] / x["count"] for x in lost for _ in range(x["count"])]
            stats = e.Sampled([x["weight"] for x in s.samples()] + skipped, interval)
            e.check_time(stats, (s.weight() + busy) * interval, cpu,
                         "run %d: thread %d (%s), samples and %d skipped in the loader, against "
                         "its CPU time" % (i, tid, "loader" if n else "burner", busy),
                         extra_ns=e.TICK_NS)
