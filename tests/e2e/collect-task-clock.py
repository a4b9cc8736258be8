#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""-knob sampling-clock=task-clock: a perf task-clock event per thread instead of the CPU-time
timer. On cpu-split at 1 ms: a sample every interval (weight 1, the timer's one a 4 ms
tick weighs 4), weight x interval = the CPU time the program measured and the 60/30/10 split, within
the tolerances of e2elib.Sampled. On poll-clock (threads that read their CPU clock every 0.1
ms) beside two busy processes: every thread sampled for the CPU time it used, within the same
tolerance, and a task-clock event's clock may lag the thread's by what the thread's context
switches take (e2elib.SWITCH_NS); the timer on the same program may fall short
(docs/pcollect.md, LIMITS), and pfinalize's summary must then say so, thread by thread, with
the figures of the database. A misspelt clock is a usage error."""
import os
import re
import subprocess

import e2elib as e


def split(w):
    res = w.join("split")
    r = e.pcollect([e.prog("cpu-split"), "4"], result=res,
                   options=["-knob", "sampling-interval=1", "-knob", "sampling-clock=task-clock"])
    e.check(r.returncode == 0, "cpu-split under task-clock exits 0 (%s)" % r.stderr.strip())
    log = e.agent_log(res)
    if "no task-clock event" in log:
        e.skip("perf task-clock events are not available here: " + log.strip())
    e.check(e.read_meta(res).get("sampling_clock") == "task-clock",
            "the metadata records sampling_clock=task-clock")
    cpu_ns = int(re.search(r"cpu_ns=(\d+)", r.stderr).group(1))
    streams = e.load_streams(res)
    n = sum(len(s.samples()) for s in streams)
    samples = e.named_samples(streams)
    shares, total = e.under(samples, ["work_sixty", "work_thirty", "work_ten"])
    print("task-clock 1 ms: %d samples, weight %d, cpu %.3f s, shares %s"
          % (n, total, cpu_ns / 1e9, shares))
    # The timer's samples weigh about 4 intervals at 1 ms (one a tick); a busy machine may
    # delay a task-clock sample into the next interval now and then.
    e.check(total / n <= 1.5, "a sample every interval: %d samples for a weight of %d (want "
            "1.5 intervals a sample at most)" % (n, total))
    stats = e.sampled_of(samples, 1000000)
    end_cpu = sum(s.cpu_ns() for s in streams)
    spent = sum(int(x) for x in re.search(r"spent_ns=([\d,]+)", r.stderr).group(1).split(","))
    e.check(spent - e.TICK_NS <= end_cpu <= cpu_ns + e.TICK_NS,
            "THREAD_END cpu_ns %.3f s, the work took %.3f s, the process %.3f s"
            % (end_cpu / 1e9, spent / 1e9, cpu_ns / 1e9))
    # The event's clock stops around each of the thread's context switches (e2elib.SWITCH_NS).
    # The samples are judged against the work's own measure: THREAD_END also holds the
    # agent's start-up before the event is armed (its module scan: 10 ms and more under the
    # sanitizers).
    switches = int(re.search(r"switches=(\d+)", r.stderr).group(1))
    e.check_time(stats, total * 1e6, spent, "weight x interval against the CPU time of the "
                 "work (%d context switches)" % switches, extra_ns=switches * e.SWITCH_NS)
    for name, want in (("work_sixty", 60), ("work_thirty", 30), ("work_ten", 10)):
        e.check_share(stats, shares[name] / total, want / 100.0, name, stretches=4)


def poll(w, clock):
    res = w.join("poll-" + clock)
    r = e.pcollect([e.prog("poll-clock")], result=res, finalization="full", quiet=False,
                   options=["-knob", "sampling-interval=1", "-knob", "sampling-clock=" + clock])
    e.check(r.returncode == 0, "%s: poll-clock exits 0 (%s)" % (clock, r.stderr.strip()))
    measured = {int(t): (int(c), int(n)) for t, c, n in
                re.findall(r"tid=(\d+) cpu_ns=(\d+) switches=(\d+)", r.stdout)}
    e.check(len(measured) == 3, "%s: the program reports its three threads" % clock)
    rows = {t: (c, s) for t, c, s in e.db_rows(res, "SELECT tid, cpu_ns, time_ns FROM threads")}
    weights = {}
    for tid, wt in e.db_rows(res, "SELECT t.tid, tl.value / " + e.INTERVAL_NS +
                                  " FROM timeline tl JOIN threads t ON t.id = tl.thread_id"
                                  " WHERE tl.metric_id = " + e.CPU_METRIC):
        weights.setdefault(tid, []).append(wt)
    for tid, (used, switches) in sorted(measured.items()):
        cpu, sampled = rows[tid]
        print("%s: thread %d used %.3f s (%.3f s at its end), sampled %.3f s (%.1f%%)"
              % (clock, tid, used / 1e9, cpu / 1e9, sampled / 1e9, 100.0 * sampled / cpu))
        # Two readings of the thread's clock: the program's last one, the agent's at its end.
        e.check(abs(cpu - used) <= 2 * e.TICK_NS,
                "%s: thread %d's recorded CPU time is what it measured" % (clock, tid))
        if clock == "task-clock":
            e.check_time(e.Sampled(weights.get(tid, []), 1000000), sampled, cpu,
                         "task-clock: thread %d sampled for its CPU time (%d context "
                         "switches)" % (tid, switches), extra_ns=switches * e.SWITCH_NS)
    summ = e.run([e.tool("preport"), "-r", res, "-view", "summary", "-format", "csv"])
    e.check(summ.returncode == 0 and ("Collection,Sampling Clock,%s," % clock) in summ.stdout,
            "%s: preport's summary names the sampling clock" % clock)
    # The summary says what the database holds, and names each thread short by 10% and 50 ms
    # that neither its samples nor its lost samples cover.
    used = sum(c for c, _s in rows.values() if c > 0)
    sampled = sum(s for c, s in rows.values() if c > 0)
    line = "cpu time:  %.3f s sampled of %.3f s the threads used" % (sampled / 1e9, used / 1e9)
    e.check(line in r.stderr, "%s: the summary has '%s'" % (clock, line))
    # Lost samples (counted by the agent, with their reason) cover their time too.
    lost = dict(e.db_rows(res, "SELECT t.tid, coalesce(sum(l.weight), 0) FROM threads t LEFT"
                               " JOIN lost l ON l.thread_id = t.id GROUP BY t.id"))
    interval_ns = 1000000
    for tid, (cpu, s) in rows.items():
        covered = s + lost.get(tid, 0) * interval_ns
        short = cpu > 0 and cpu - covered >= cpu / 10 and cpu - covered >= 50000000
        named = ("undersampled: thread %d " % tid) in r.stderr
        e.check(short == named, "%s: thread %d %s named undersampled" % (
            clock, tid, "is" if short else "is not"))


with e.Workdir("task-clock") as w:
    bad = w.join("bad")
    r = e.pcollect(["true"], result=bad, options=["-knob", "sampling-clock=tsc"])
    e.check(r.returncode == 2 and "'tsc' is not one of: timer, task-clock" in r.stderr and
            not os.path.exists(bad), "a misspelt clock is refused with exit 2 (%d: %s)"
            % (r.returncode, r.stderr.strip()))
    split(w)
    hogs = [subprocess.Popen(["sh", "-c", "while :; do :; done"]) for _ in range(2)]
    try:
        poll(w, "task-clock")
        poll(w, "timer")
    finally:
        for h in hogs:
            h.kill()
            h.wait()
