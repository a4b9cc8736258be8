#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The launcher: exit codes and deaths by signal passed through; refusals (static, setuid,
missing, not executable, directory) with exit 2, one line and no directory left; an existing
result refused; r000hs naming; -duration; -data-limit; a SIGKILLed target's streams; metadata.
The programs burn budgets of CPU time; the checks on samples use e2elib.Sampled."""
import os
import shutil
import signal
import subprocess
import time

import e2elib as e


def one_line_refusal(w, target, what):
    res = w.join("refused")
    r = e.pcollect(target, result=res, quiet=False)
    lines = r.stderr.strip().splitlines()
    e.check(r.returncode == 2, "%s: exit 2 (got %d)" % (what, r.returncode))
    e.check(len(lines) == 1 and lines[0].startswith("pcollect: "),
            "%s: one line: %s" % (what, r.stderr.strip()))
    e.check(not os.path.exists(res), "%s: no result directory left" % what)
    return lines[0]


with e.Workdir("launcher") as w:
    ec = e.prog("exit-code")
    for args, want in ((["3"], 3), (["0"], 0), (["signal", "6"], 128 + 6),
                       (["signal", "9"], 128 + 9)):
        res = w.join("res-exit-" + "-".join(args))
        r = e.pcollect([ec] + args, result=res)
        e.check(r.returncode == want, "exit-code %s: pcollect exits %d (got %d)"
                % (" ".join(args), want, r.returncode))
        meta = e.read_meta(res)
        if args[0] == "signal":
            e.check(meta.get("exit_signal") == args[1], "metadata exit_signal=%s" % args[1])
        else:
            e.check(meta.get("exit_code") == args[0], "metadata exit_code=%s" % args[0])
    for key in ("command_line", "cwd", "host", "user", "kernel", "cpu_count",
                "start_realtime_ns", "start_monotonic_ns", "end_realtime_ns",
                "end_monotonic_ns", "elapsed_ns", "analysis", "interval_ns", "stack_depth",
                "collector_version", "data_limit_mb", "data_limit_hit", "rank",
                "finalization_mode", "follow_child"):
        e.check(key in meta, "metadata has %s (%s)" % (key, meta.get(key)))
    e.check(int(meta["end_monotonic_ns"]) - int(meta["start_monotonic_ns"]) ==
            int(meta["elapsed_ns"]) > 0, "elapsed_ns = end - start")

    # Refusals, each before any directory exists.
    static = os.path.join(e.BUILD, "tests", "progs", "static-hello")
    if os.path.exists(static):
        msg = one_line_refusal(w, [static], "static binary")
        e.check("statically linked" in msg, "the reason names static linking")
    else:
        print("note: static binary refusal not tested: no static libc to build one")
    suid = w.join("suid-exit-code")
    shutil.copy(ec, suid)
    os.chmod(suid, 0o4755)
    msg = one_line_refusal(w, [suid], "setuid binary")
    e.check("setuid" in msg, "the reason names setuid")
    msg = one_line_refusal(w, ["no-such-command-pcollect"], "missing command")
    e.check("command not found" in msg, "the reason says command not found")
    noexec = w.join("not-executable")
    shutil.copy(ec, noexec)
    os.chmod(noexec, 0o644)
    msg = one_line_refusal(w, [noexec], "non-executable file")
    e.check("Permission denied" in msg, "the reason says Permission denied")
    one_line_refusal(w, [w.path], "directory")

    # An existing result is refused and left alone.
    res = w.join("res-exit-3")
    before = sorted(os.listdir(os.path.join(res, "raw")))
    r = e.pcollect([ec, "0"], result=res, quiet=False)
    e.check(r.returncode != 0 and "res-exit-3" in r.stderr,
            "an existing result is refused (%d): %s" % (r.returncode, r.stderr.strip()))
    e.check(sorted(os.listdir(os.path.join(res, "raw"))) == before, "and left unchanged")

    # Default names.
    cwd = w.join("auto")
    os.mkdir(cwd)
    for want in ("r000hs", "r001hs"):
        r = e.pcollect([ec, "0"], cwd=cwd)
        e.check(r.returncode == 0 and os.path.isdir(os.path.join(cwd, want, "raw")),
                "without -r the result is %s" % want)

    # -duration: sampling stops after 0.5 s (of wall time), the program runs to its end (1 s
    # of CPU time: half of it after the deadline). One
    # thread uses at most 0.5 s of CPU time in 0.5 s: its samples hold no more, within a
    # sample's quantum, and none is taken after the deadline (give or take a handler that
    # a busy machine preempts between its look at the clock and its time stamp).
    res = w.join("res-duration")
    r = e.pcollect([ec, "burn", "1"], result=res,
                   options=["-duration", "0.5", "-knob", "sampling-interval=1"])
    streams = e.load_streams(res)
    interval = streams[0].header["interval_ns"]
    stats = e.sampled_of([x for s in streams for x in s.samples()], interval)
    cpu = sum(s.cpu_ns() for s in streams)
    e.check(r.returncode == 0 and cpu >= 1e9 - e.TICK_NS,
            "-duration 0.5: the program ran to its end (%.3f s of CPU, its budget 1 s)"
            % (cpu / 1e9))
    e.check(0 < stats.total_ns <= 0.5e9 + stats.quantum_ns,
            "-duration 0.5: samples hold %.3f s of CPU (some, and at most 0.5 s + %.3f s)"
            % (stats.total_ns / 1e9, stats.quantum_ns / 1e9))
    start = int(e.read_meta(res)["start_monotonic_ns"])
    last = max(s.header["origin_ns"] + x["time"] for s in streams for x in s.samples())
    e.check(last - start <= 0.5e9 + 0.25e9, "-duration 0.5: the last sample %.3f s after the "
            "start" % ((last - start) / 1e9))

    # -data-limit: the smallest limit (one chunk) is hit by a program whose every sample has
    # a new deep stack, announced and recorded: reached after about 80 samples (0.33 s of CPU
    # time at 1 ms on a quiet machine), well before 0.7 of the program's 1.2 s.
    res = w.join("res-limit")
    r = e.pcollect([e.prog("fsize-work"), w.join("fsize.out"), "1200"], result=res,
                   quiet=False, options=["-data-limit", "0.03125", "-knob",
                                         "sampling-interval=1"])
    e.check(r.returncode == 0, "-data-limit: the program runs to its end")
    e.check("data limit" in r.stderr, "-data-limit: announced on stderr: "
            + r.stderr.strip().splitlines()[-2] if r.stderr.strip() else "nothing")
    e.check(e.read_meta(res).get("data_limit_hit") == "1", "-data-limit: metadata says so")
    streams = e.load_streams(res)
    wt = sum(s.weight() for s in streams) * 1e-3
    cpu = sum(s.cpu_ns() for s in streams) / 1e9
    e.check(cpu >= 1.2 - e.TICK_NS / 1e9 and wt < 0.7 * cpu,
            "-data-limit: sampling stopped early (%.2f of %.2f s)" % (wt, cpu))

    # A SIGKILLed target: its streams still read, and they hold all but the last second of
    # samples (the handler writes them out at least once a second): killed once it has used
    # 2.5 s of CPU time, so that the check needs 1.5 s of samples written.
    res = w.join("res-kill")
    p = subprocess.Popen([e.tool("pcollect"), "-collect", "hotspots", "-r", res, "-quiet",
                          "-finalization-mode=none", "--", ec, "burn", "30"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         env=dict(os.environ, **e.tool_env()))
    try:
        child, cpu, deadline = None, 0.0, time.monotonic() + 120
        while time.monotonic() < deadline and cpu < 2.5:
            time.sleep(0.05)
            if child is None:
                kids = e.run(["pgrep", "-P", str(p.pid)]).stdout.split()
                child = int(kids[0]) if kids else None
                continue
            with open("/proc/%d/stat" % child) as f:
                fields = f.read().rsplit(")", 1)[1].split()
            cpu = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        e.check(child is not None and cpu >= 2.5, "the target ran 2.5 s of CPU time (%.2f s)"
                % cpu)
        os.kill(child, signal.SIGKILL)
        p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    e.check(p.returncode == 128 + 9, "SIGKILLed target: pcollect exits 137 (%d)" % p.returncode)
    streams = e.load_streams(res)
    interval = streams[0].header["interval_ns"]
    stats = e.sampled_of([x for s in streams for x in s.samples()], interval)
    skipped = sum(s.stats["bytes_skipped"] for s in streams)
    print("killed after %.2f s of CPU: %.2f s sampled, %d bytes skipped" % (
        cpu, stats.total_ns / 1e9, skipped))
    e.check(stats.total_ns >= cpu * 1e9 - 1e9 - stats.quantum_ns,
            "SIGKILL loses at most the last second of samples (%.2f s of %.2f s kept)"
            % (stats.total_ns / 1e9, cpu))
