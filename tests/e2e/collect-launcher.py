#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The launcher: exit codes and deaths by signal passed through; refusals (static, setuid,
missing, not executable, directory) with exit 2, one line and no directory left; an existing
result refused; r000hs naming; -duration; -data-limit; a SIGKILLed target's streams; metadata."""
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

    # -duration: sampling stops, the program runs to its end.
    res = w.join("res-duration")
    r = e.pcollect([ec, "burn", "2"], result=res, options=["-duration", "0.5"])
    streams = e.load_streams(res)
    wt = sum(s.weight() for s in streams) * streams[0].header["interval_ns"] / 1e9
    cpu = sum(s.cpu_ns() for s in streams) / 1e9
    e.check(r.returncode == 0 and cpu > 1.5, "-duration 0.5: the program ran to its end "
            "(%.2f s of CPU)" % cpu)
    e.check(wt <= 0.5 + 0.05, "-duration 0.5: samples cover %.2f s of CPU (at most 0.5 s of "
            "wall time)" % wt)
    e.check(wt >= 0.2, "-duration 0.5: and there are samples (%.2f s)" % wt)

    # -data-limit: a tiny limit is hit, announced and recorded.
    res = w.join("res-limit")
    r = e.pcollect([ec, "burn", "2.5"], result=res, quiet=False,
                   options=["-data-limit", "0.002", "-knob", "sampling-interval=1"])
    e.check(r.returncode == 0, "-data-limit: the program runs to its end")
    e.check("data limit" in r.stderr, "-data-limit: announced on stderr: "
            + r.stderr.strip().splitlines()[-2] if r.stderr.strip() else "nothing")
    e.check(e.read_meta(res).get("data_limit_hit") == "1", "-data-limit: metadata says so")
    streams = e.load_streams(res)
    wt = sum(s.weight() for s in streams) * 1e-3
    cpu = sum(s.cpu_ns() for s in streams) / 1e9
    e.check(wt < 0.7 * cpu, "-data-limit: sampling stopped early (%.2f of %.2f s)" % (wt, cpu))

    # A SIGKILLed target: its streams still read, with at most about 1 s of samples lost.
    res = w.join("res-kill")
    p = subprocess.Popen([e.tool("pcollect"), "-collect", "hotspots", "-r", res, "-quiet",
                          "-finalization-mode=none", "--", ec, "burn", "8"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    time.sleep(0.5)
    cp = e.run(["pgrep", "-P", str(p.pid)])
    child = int(cp.stdout.split()[0])
    time.sleep(2.5)
    with open("/proc/%d/stat" % child) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    cpu = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    os.kill(child, signal.SIGKILL)
    p.communicate(timeout=60)
    e.check(p.returncode == 128 + 9, "SIGKILLed target: pcollect exits 137 (%d)" % p.returncode)
    streams = e.load_streams(res)
    wt = sum(s.weight() for s in streams) * streams[0].header["interval_ns"] / 1e9
    skipped = sum(s.stats["bytes_skipped"] for s in streams)
    print("killed after %.2f s of CPU: %.2f s sampled, %d bytes skipped" % (cpu, wt, skipped))
    e.check(wt >= cpu - 1.1, "SIGKILL loses at most about 1 s of samples (%.2f of %.2f s)"
            % (wt, cpu))
