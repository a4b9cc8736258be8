#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""pcollect -ring-buffer SEC (issue 26): a program burns phase A (1.5 s of CPU) then phase B
(2 s), each 10 ms step followed by a 1 ms sleep and four of 20 us, under -collect threading
-ring-buffer 1. The result keeps B's last second and at most one chunk of A (a chunk holds at
most 1 s of a thread's samples, and one interval more), CPU time and waits (long ones with
their own stacks, short ones summed per call site: -knob wait-threshold=500); a snapshot taken
during B (pcollect -r DIR -command snapshot) finalizes the window so far into
DIR/snapshots/N and shows B while the collection goes on, as SIGUSR2 to pcollect makes one
too (the two numbered 1 and 2 in the order they began); the final result is still right; the program's output and exit code are
unchanged; the raw data on disk stays within the bound docs/pcollect.md states;
memory-consumption refuses the option (exit 2).

The known answer is in the program's own log: its CPU time every 10 ms step, with the
CLOCK_MONOTONIC time, so the CPU time of each phase inside any stretch of wall time is known
(to a step); the times sampled are judged against it with e2elib's Sampled tolerances."""
import os
import signal
import subprocess
import time

import e2elib as e

SEC = 1.0
A_MS, B_MS = 1500, 2000
STEP_NS = 10e6  # the program's log step: a stretch's CPU time is known to one at each end
INTERVAL_NS = 10e6
# A chunk's CPU time: the agent ends a chunk at the first sample a second after it began.
CHUNK_CPU_NS = 1e9 + INTERVAL_NS + 2 * e.TICK_NS
OUT = "phase A %d ms, phase B %d ms\n" % (A_MS, B_MS)


def load_log(path):
    with open(path) as f:
        return [(p, int(m), int(c), int(s)) for p, m, c, s in (line.split() for line in f)]


def cpu_in(log, phase, t0, t1=float("inf"), col=2):
    """CPU ns (col 3: ns slept) the program's phase used between CLOCK_MONOTONIC t0 and t1
    (s), each step taken as uniform: within a step at each end."""
    t0, t1 = t0 * 1e9, t1 * 1e9
    total = 0.0
    for a, b in zip(log, log[1:]):
        m0, m1 = a[1], b[1]
        if b[0] != phase or m1 <= t0 or m0 >= t1:
            continue
        part = (min(m1, t1) - max(m0, t0)) / (m1 - m0) if m1 > m0 else 1.0
        total += part * (b[col] - a[col])
    return total


def slept_in(log, phase, t0, t1=float("inf")):
    return cpu_in(log, phase, t0, t1, col=3)


def chunk_wall(log):
    """The longest a chunk can last, s: a second, then the wall time until the thread used
    an interval and two ticks more of CPU (the next sample), at most three steps."""
    return 1.0 + max(b[1] - a[1] for a, b in zip(log, log[3:])) / 1e9


def waits_kept(res):
    """Wait Time ns under phase_a and phase_b in a result, and whether any wait or sample
    lost its stack (a chunk kept that named a stack of a dropped one)."""
    db = e.Db(res)
    w = {"phase_a": 0, "phase_b": 0}
    damaged = False
    for sid, v in e.db_rows(res, "SELECT s.stack_id, s.value FROM samples s JOIN metrics m "
                            "ON m.id = s.metric_id AND m.name = 'Wait Time'"):
        names = [f["name"] for f in db.stack(sid)]
        damaged |= any("damaged" in n for n in names)
        for n in reversed(names):
            if n in w:
                w[n] += v
                break
    return w["phase_a"], w["phase_b"], damaged


def waits_within(got, low, high, what):
    tol = 0.1 * high + 5e6  # the agent's clock reads around each sleep against the program's
    e.check(low - tol <= got <= high + tol,
            "%s: %.3f s of waits, known between %.3f and %.3f s (+- %.3f s)"
            % (what, got / 1e9, low / 1e9, high / 1e9, tol / 1e9))


def kept(res):
    db = e.Db(res)
    w, _total = db.under(["phase_a", "phase_b"])
    stats = e.db_sampled(res)
    return w["phase_a"] * INTERVAL_NS, w["phase_b"] * INTERVAL_NS, stats


def within(stats, got, low, high, what):
    tol = stats.time_tolerance_ns(got) + 2 * STEP_NS
    e.check(low - tol <= got <= high + tol,
            "%s: %.3f s sampled, known between %.3f and %.3f s (+- %.3f s; %s)"
            % (what, got / 1e9, low / 1e9, high / 1e9, tol / 1e9, stats))


def disk_bytes(res):
    """Bytes the raw streams take on disk (blocks allocated), and the thread streams."""
    d = os.path.join(res, "raw")
    total, threads = 0, 0
    for name in os.listdir(d):
        total += os.stat(os.path.join(d, name)).st_blocks * 512
        threads += name.endswith(".praw") and ".proc." not in name
    return total, threads


with e.Workdir("ring-buffer") as w:
    res, log, mark = w.join("res"), w.join("log"), w.join("mark")
    argv = [e.tool("pcollect"), "-collect", "threading", "-quiet", "-r", res,
            "-ring-buffer", str(SEC), "-knob", "sampling-interval=10",
            "-knob", "wait-threshold=500", "--",
            e.prog("ring-phases"), str(A_MS), str(B_MS), log, mark]
    p = subprocess.Popen(argv, env=e.tool_environ(), stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not os.path.exists(mark) and p.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    e.check(os.path.exists(mark), "the program reached the middle of phase B")
    # Two snapshots while B runs: one asked by signal (the launcher makes it), one from
    # another process.
    running = p.poll() is None
    e.check(running, "the program runs when the snapshots are asked")
    p.send_signal(signal.SIGUSR2)
    s0 = time.monotonic()
    snap = e.run([e.tool("pcollect"), "-r", res, "-command", "snapshot"], env=e.tool_env())
    s1 = time.monotonic()
    e.check(snap.returncode == 0 and "snapshots/" in snap.stderr,
            "-command snapshot exits 0, naming it (%d: %s)"
            % (snap.returncode, snap.stderr.strip()))
    snap1 = snap.stderr.strip().split("'")[-2]
    out, err = p.communicate(timeout=120)
    e.check(p.returncode == 0 and out == OUT,
            "the program's output and exit code are unchanged (exit %d, %r)%s"
            % (p.returncode, out, err[-2000:]))
    e.check(os.path.exists(os.path.join(res, "result.db")), "the result is finalized: " + err)
    lg = load_log(log)
    t_exit = lg[-1][1] / 1e9
    end_mono = int(e.read_meta(res)["end_monotonic_ns"]) / 1e9
    a_all, b_all = cpu_in(lg, "A", 0), cpu_in(lg, "B", 0)
    print("program: A %.3f s, B %.3f s of CPU; snapshot in %.2f s" % (
        a_all / 1e9, b_all / 1e9, s1 - s0))

    # The final result: the last SEC s before the end (the launcher drops after the program
    # ended, at end_mono at the latest), and at most one chunk of CPU time before them.
    a, b, stats = kept(res)
    print("kept: A %.3f s, B %.3f s (%s)" % (a / 1e9, b / 1e9, stats))
    within(stats, b, cpu_in(lg, "B", end_mono - SEC),
           cpu_in(lg, "B", t_exit - SEC) + CHUNK_CPU_NS, "final: phase B")
    within(stats, a, 0, min(a_all, cpu_in(lg, "A", t_exit - SEC) + CHUNK_CPU_NS),
           "final: phase A (at most one chunk)")
    e.check(a + 2 * stats.time_tolerance_ns(a) < a_all,
            "final: A's first part was dropped (%.3f of %.3f s kept)" % (a / 1e9, a_all / 1e9))
    wa, wb, damaged = waits_kept(res)
    cw = chunk_wall(lg)
    print("kept waits: A %.3f s, B %.3f s; the program slept A %.3f s, B %.3f s; a chunk "
          "lasts at most %.2f s" % (wa / 1e9, wb / 1e9, slept_in(lg, "A", 0) / 1e9,
                                    slept_in(lg, "B", 0) / 1e9, cw))
    waits_within(wb, slept_in(lg, "B", end_mono - SEC), slept_in(lg, "B", t_exit - SEC - cw),
                 "final: phase B's waits")
    waits_within(wa, 0, slept_in(lg, "A", t_exit - SEC - cw), "final: phase A's waits")
    e.check(not damaged, "final: every wait kept has its stack")

    # The snapshot: the window at an instant between s0 and s1.
    e.check(os.path.exists(os.path.join(snap1, "result.db")),
            "-command snapshot finalized " + snap1)
    sa, sb, sstats = kept(snap1)
    print("snapshot: A %.3f s, B %.3f s (%s)" % (sa / 1e9, sb / 1e9, sstats))
    e.check(sb > 0, "the snapshot shows phase B")
    within(sstats, sb, cpu_in(lg, "B", s1 - SEC, s0),
           cpu_in(lg, "B", s0 - SEC, s1) + CHUNK_CPU_NS, "snapshot: phase B")
    within(sstats, sa, 0, min(cpu_in(lg, "A", 0, s1),
                              cpu_in(lg, "A", s0 - SEC, s1) + CHUNK_CPU_NS),
           "snapshot: phase A (at most one chunk)")
    other = [os.path.join(res, "snapshots", n) for n in ("1", "2")
             if os.path.join(res, "snapshots", n) != snap1]
    e.check(len(other) == 1 and os.path.exists(os.path.join(other[0], "result.db")),
            "SIGUSR2 to pcollect made the other snapshot, finalized: %s" % other)
    e.check(kept(other[0])[1] > 0, "the signal's snapshot shows phase B")

    # Disk: per thread stream its window (256 KiB, reserved ahead) and the records of SEC s
    # and a chunk (a few KiB at 100 samples a second), the process stream's window.
    used, nthreads = disk_bytes(res)
    bound = nthreads * (256 << 10) + nthreads * 64 * 1024 + (64 << 10)
    print("raw data on disk: %d bytes, %d thread streams (bound %d)" % (used, nthreads, bound))
    e.check(used <= bound, "raw data on disk %d bytes, within %d" % (used, bound))

    # memory-consumption keeps the live heap, not chunks of time: refused, saying why.
    r = e.run([e.tool("pcollect"), "-collect", "memory-consumption", "-ring-buffer", "1",
               "-r", w.join("mem"), "--", e.prog("exit-code"), "0"])
    e.check(r.returncode == 2 and "-ring-buffer" in r.stderr and "memory-consumption" in
            r.stderr, "memory-consumption refuses -ring-buffer (exit %d: %s)"
            % (r.returncode, r.stderr.strip()))
    e.check(not os.path.exists(w.join("mem")), "nothing made for a refused collection")
