#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""pcollect -command pause|resume|stop from another shell, and -resume-after (issue 18),
on programs pcollect started (tests/progs/attach-target; read from the raw streams):

- steps: a program and its child (forked: followed) burn in phase_one_until until the test has
  run "pcollect -r RES -command pause" (it returns once every process obeyed), then 0.3 s
  each in phase_two while paused, then, after "-command resume", 0.3 s each in phase_three:
  no sample in phase_two, phase_three's CPU time in full in each process, both processes
  sampled before the pause; then "-command stop" on a running one: no sample after it;
- -resume-after 0.5 on 1 s of phase_one then 0.5 s of phase_two: no sample earlier than
  0.5 s after the collection began, phase_two (which cannot start before 1 s) in full;
- -collect threading -start-paused: waits while paused (a sleep, a mutex, a join) are not
  recorded, the one sleep between the program's resume and pause is;
- -command on a result with no collection running, or an unknown command: the cause, exit
  1 or 2.
The program's output and exit code are its own throughout. No wall time is judged."""
import os
import subprocess
import time

import e2elib as e

MS = 300


def command(res, cmd):
    """pcollect -r RES -command CMD from another shell, until every process has obeyed:
    pcollect waits 5 s for them, then returns naming those that have not (their control
    thread has not run yet, on a busy machine); asked again, it waits again. A minute without
    an answer fails (a forked child's control thread that never ran, under the sanitizers:
    agent-control.c)."""
    for _ in range(12):
        r = e.run([e.tool("pcollect"), "-r", res, "-command", cmd])
        e.check(r.returncode == 0, "-command %s from another shell (exit %d: %s)"
                % (cmd, r.returncode, r.stderr.strip()))
        if "did not answer" not in r.stderr:
            return
    e.fail("-command %s: a process of the collection has not obeyed in a minute" % cmd)


def launch(w, res, argv, options=()):
    """pcollect started on argv; the program prints its pid first."""
    p = subprocess.Popen([e.tool("pcollect"), "-collect", "hotspots", "-r", res, "-quiet",
                          "-finalization-mode=none"] + list(options) + ["--"] + argv,
                         cwd=w.path, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, env=e.tool_environ())
    line = p.stdout.readline()
    if not line.startswith("pid="):
        e.fail("%s did not start: %r %s" % (argv, line, p.stderr.read()))
    return p, int(line[4:])


def signals_alone():
    """The handlers and pending signals attach-target finds when run alone (a sanitizer's
    runtime installs handlers of its own)."""
    r = e.run([e.prog("attach-target"), "phases", "1", "1"], env=e.tool_env())
    if r.returncode != 3:
        e.fail("attach-target alone: exit %d: %s" % (r.returncode, r.stderr.strip()))
    return r.stdout.strip().splitlines()[-1].rsplit(" ", 1)[0]


def finished(p, what):
    """The program's exit code 3, and its handlers and pending signals as when alone (its
    thread count has the agent's control thread)."""
    out, err = p.communicate(timeout=240)
    last = (out.strip().splitlines() or [""])[-1]
    e.check(p.returncode == 3 and last.rsplit(" ", 1)[0] == ALONE,
            "%s: the program's exit code 3 and its own report (%d: %r, alone %r; %s)"
            % (what, p.returncode, last, ALONE, err.strip()))


def in_fn(samples, fn):
    """The samples with fn on their stack (the leaf may be the burn loop's getrusage)."""
    return [x for x in samples if fn in x[2]]


def by_process(res):
    """{pid: ({leaf function: weight}, samples, interval_ns, [sample times, monotonic ns])}"""
    streams = e.load_streams(res)
    out = {}
    for s, weight, names, _flags in e.named_samples(streams):
        by, samples, _i, _t = out.setdefault(s.pid, ({}, [], s.header["interval_ns"], []))
        by[names[0]] = by.get(names[0], 0) + weight
        samples.append((s, weight, names, _flags))
    for s in e.thread_streams(streams):
        if s.pid in out:
            out[s.pid][3].extend(s.header["origin_ns"] + r["time"] for r in s.samples())
    return out


def steps(w):
    res = w.join("res-steps")
    p, pid = launch(w, res, [e.prog("attach-target"), "steps", w.path, str(MS)])
    # Both processes burn in phase_one until told: let them gather samples first.
    while e.stat_cpu_ns(pid) < 0.15e9 and p.poll() is None:
        time.sleep(0.05)
    command(res, "pause")
    open(w.join("paused"), "w").close()
    while not os.path.exists(w.join("b-done")):
        if p.poll() is not None:
            e.fail("steps: the program ended early: " + p.stderr.read())
        time.sleep(0.02)
    command(res, "resume")
    open(w.join("resumed"), "w").close()
    finished(p, "steps")
    procs = by_process(res)
    e.check(len(procs) == 2 and pid in procs,
            "steps: the program and its child have samples (%s)" % sorted(procs))
    for q, (by, samples, interval, _t) in sorted(procs.items()):
        who = "steps, process %d (%s)" % (q, "the program" if q == pid else "its child")
        e.check(in_fn(samples, "phase_one_until"), "%s: sampled before the pause (%s)"
                % (who, by))
        e.check(not in_fn(samples, "phase_two"),
                "%s: no sample in phase_two, run while paused (%s)" % (who, by))
        stats = e.sampled_of(in_fn(samples, "phase_three"), interval)
        e.check_time(stats, stats.total_ns, MS * 1e6,
                     "%s: phase_three, after the resume, in full" % who,
                     extra_ns=e.TICK_NS)


def stopped(w):
    res = w.join("res-stop")
    go = w.join("stop-go")
    p, pid = launch(w, res, [e.prog("attach-target"), "until", go, "300"])
    while e.stat_cpu_ns(pid) < 0.1e9 and p.poll() is None:
        time.sleep(0.05)
    command(res, "stop")
    cpu_at_stop = e.stat_cpu_ns(pid)
    open(go, "w").close()
    finished(p, "stop")
    by, samples, interval, _t = by_process(res).get(pid, ({}, [], 0, []))
    stats = e.sampled_of(samples, interval) if samples else None
    e.check(stats is not None and stats.total_ns <= cpu_at_stop + e.TICK_NS + interval and
            not in_fn(samples, "phase_two"),
            "stop: samples only before -command stop (%.3f s sampled, %.3f s of CPU used by "
            "then; %s)" % (stats.total_ns / 1e9 if stats else 0, cpu_at_stop / 1e9, by))
    r = e.run([e.tool("pcollect"), "-r", res, "-command", "resume"])
    e.check(r.returncode == 1 and "no collection is running" in r.stderr and
            len(r.stderr.strip().splitlines()) == 1,
            "-command on a result whose collection ended: exit 1, the cause (%d: %s)"
            % (r.returncode, r.stderr.strip()))
    r = e.run([e.tool("pcollect"), "-r", res, "-command", "halt"])
    e.check(r.returncode == 2 and "'-command'" in r.stderr and
            "pause, resume, stop or snapshot" in r.stderr, "-command halt: exit 2, the commands there are (%d: %s)"
            % (r.returncode, r.stderr.strip()))


def paused_waits(w):
    """-collect threading -start-paused: waits while paused are not recorded either."""
    res = w.join("res-waits")
    r = e.pcollect([e.prog("regions"), "waits"], result=res, options=["-start-paused"],
                   analysis="threading")
    e.check(r.returncode == 0 and r.stdout.strip() == "waits done",
            "waits: the program's output and exit code (%d: %r %s)"
            % (r.returncode, r.stdout, r.stderr.strip()))
    waits = [(x["type"], x.get("kind"), x.get("duration", x.get("total")))
             for s in e.load_streams(res) for x in s.records
             if x["type"] in ("wait", "wait_sum")]
    e.check(len(waits) == 1 and waits[0][:2] == ("wait", "sleep") and
            100e6 <= waits[0][2] < 200e6,
            "waits: only the 100 ms sleep between resume and pause is recorded, none of the "
            "sleeps, the mutex wait and the join while paused (%s)" % waits)


def resume_after(w):
    res = w.join("res-after")
    r = e.pcollect([e.prog("attach-target"), "phases", "1000", "500"], result=res,
                   options=["-resume-after", "0.5"])
    e.check(r.returncode == 3, "-resume-after: the program's exit code (%d: %s)"
            % (r.returncode, r.stderr.strip()))
    meta = e.read_meta(res)
    begin = int(meta["start_monotonic_ns"])
    by, samples, interval, times = list(by_process(res).values())[0]
    e.check(meta.get("resume_after_ns") == "500000000" and times and
            min(times) >= begin + 500000000,
            "-resume-after 0.5: the first sample %.3f s after the collection began"
            % ((min(times) - begin) / 1e9 if times else -1))
    stats = e.sampled_of(in_fn(samples, "phase_two"), interval)
    e.check_time(stats, stats.total_ns, 500e6, "-resume-after: phase_two in full",
                 extra_ns=e.TICK_NS)
    one = e.sampled_of(in_fn(samples, "phase_one"), interval)
    e.check(one.total_ns < 1000e6, "-resume-after: phase_one only in part (%.3f s of 1 s)"
            % (one.total_ns / 1e9))


with e.Workdir("command") as w:
    ALONE = signals_alone()
    steps(w)
    stopped(w)
    paused_waits(w)
    resume_after(w)
