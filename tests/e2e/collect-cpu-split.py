#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""pcollect on a known CPU split: leaf shares 60/30/10 at 10 ms and 1 ms, every stack reaches
main through the 20-level chain, sample weights add up to the CPU time the program measured
itself, and a repeated stack costs a few bytes. Tolerances from the samples (e2elib.Sampled):
each work function runs once a round, so its time is made of ROUNDS stretches."""
import re

import e2elib as e

ROUNDS = "4"  # 1.6 s of CPU: 40 ms units, 10 a round


def check_thread_end(end_cpu, stderr, cpu_ns, what):
    """THREAD_END's CPU time (since the agent began sampling) lies between what the program's
    work functions measured and its whole CPU time at the end of main (a tick later: the
    clocks move at ticks)."""
    spent = sum(int(x) for x in re.search(r"spent_ns=([\d,]+)", stderr).group(1).split(","))
    e.check(spent - e.TICK_NS <= end_cpu <= cpu_ns + e.TICK_NS,
            "%s: THREAD_END cpu_ns %.3f s, the work took %.3f s, the process %.3f s"
            % (what, end_cpu / 1e9, spent / 1e9, cpu_ns / 1e9))


def one(w, interval):
    res = w.join("res-%s" % interval)
    r = e.pcollect([e.prog("cpu-split"), ROUNDS], result=res,
                   options=["-knob", "sampling-interval=%s" % interval])
    e.check(r.returncode == 0, "%s ms: pcollect exits with the program's code 0 (got %d: %s)"
            % (interval, r.returncode, r.stderr.strip()))
    e.check(r.stdout == "rounds=%s\n" % ROUNDS, "%s ms: the program's output is unchanged" % interval)
    m = re.search(r"cpu_ns=(\d+)", r.stderr)
    if not m:
        e.fail("the program did not report its CPU time: " + r.stderr)
    cpu_ns = int(m.group(1))
    streams = e.load_streams(res)
    threads = e.thread_streams(streams)
    e.check(len(threads) == 1 and len(streams) == 2,
            "%s ms: one stream for one thread, one for the process" % interval)
    s = threads[0]
    e.check(s.stats["bytes_skipped"] == 0, "%s ms: stream reads cleanly" % interval)
    samples = e.named_samples(streams)
    shares, total = e.under(samples, ["work_sixty", "work_thirty", "work_ten"])
    interval_ns = s.header["interval_ns"]
    e.check(interval_ns == int(float(interval) * 1e6), "%s ms: header interval" % interval)
    print("%s ms: %d samples, weight %d, shares %s, cpu %.3f s, sampled %.3f s" % (
        interval, len(samples), total, shares, cpu_ns / 1e9, total * interval_ns / 1e9))
    stats = e.sampled_of(samples, interval_ns)
    for name, want in (("work_sixty", 60), ("work_thirty", 30), ("work_ten", 10)):
        e.check_share(stats, shares[name] / total, want / 100.0, "%s ms: %s" % (interval, name),
                      stretches=int(ROUNDS))
    # The agent's own work (a library's scan) is its own root: Collector Overhead;
    # a tick may come before main too, in the program's start-up code (leaf first: the root
    # is last).
    def before_main(st):
        return st and st[-1] in ("_start", "_dl_start_user") and not any(
            f.startswith(("work_", "chain")) for f in st)
    bad = [st for _s, _w, st, f in samples
           if "main" not in st and not f & e.STACK_AGENT and not before_main(st)]
    e.check(not bad, "%s ms: every stack reaches main but the agent's own and the start-up "
            "code's (%d do not; first: %s)" % (interval, len(bad), bad[0] if bad else ""))
    deep = [st for _s, _w, st, _f in samples if st and st[0].startswith("work_")]
    e.check(all(st.count("chain") == 21 for st in deep),
            "%s ms: the 21 chain frames are all there below the work functions" % interval)
    end_cpu = s.cpu_ns()
    check_thread_end(end_cpu, r.stderr, cpu_ns, "%s ms" % interval)
    lost = sum(x["weight"] for x in s.of_type("lost"))
    print("%s ms: %d intervals lost (%s)" % (interval, lost, s.of_type("lost")))
    e.check_time(stats, total * interval_ns, end_cpu,
                 "%s ms: weight x interval against the CPU time sampling covered" % interval)
    n_stacks = len(s.stacks)
    bps = s.stats["bytes_total"] / len(samples)
    print("%s ms: %d distinct stacks, %.1f bytes/sample overall" % (interval, n_stacks, bps))
    e.check(n_stacks <= 40, "%s ms: stacks are deduplicated (%d distinct)" % (interval, n_stacks))


with e.Workdir("cpu-split") as w:
    one(w, "10")
    one(w, "1")
