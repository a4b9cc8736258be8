#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A job ended by a signal during a wait (issue 22, item 5): tests/progs/term-wait (20 short
reads of a pipe a forked child fills, then a 5 s nanosleep in wait_here(), or 5 s on the
CPU) and a Python time.sleep(2.4) under -collect threading are ended during the sleep by
TERM sent to the program, by `timeout -s TERM 3 pcollect ...` (TERM to pcollect, then to
its group) and by KILL. Each time the result is finalized by pcollect, the wait in
progress is counted under its function from its start (the program prints it) to the kill,
within 10% + 80 ms (pfinalize ends it when pcollect saw the program end), the short reads
before it are all counted (-knob wait-threshold=1000000, 1 s, makes them short: summed,
even when a busy machine makes a fork slow), and pcollect exits as the program did: by
TERM (-15 to Python, 143 to a shell), 137 after KILL; the program's output is the same as
alone, killed the same way.

Usage: collect-term.py PART: 'signals' (TERM and KILL to the C program) or 'timeout'
(timeout -s TERM 3 pcollect, TERM on the CPU, and Python's time.sleep)."""
import os
import signal
import subprocess
import sys
import time

import e2elib as e

# The agent's control thread puts a wait in progress on record once it has lasted 200 ms
# (AGENT_WAIT_OPEN_NS): after KILL nothing else can. 0.6 s left it too little once, starved
# under the sanitizers on a loaded machine (no record: 0 ms of 615).
KILL_AFTER = 1.2
REL, ABS_NS = 0.10, 80000000
PY = """import sys, time
sys.stdout.write("waiting\\n"); sys.stdout.flush()
sys.stderr.write("start_ns=%d\\n" % time.monotonic_ns()); sys.stderr.flush()
time.sleep(2.4)
print("done")
"""


def child_of(pid):
    """The one child of pid (the program pcollect started), waited for."""
    for _ in range(500):
        try:
            with open("/proc/%d/task/%d/children" % (pid, pid)) as f:
                kids = f.read().split()
            if kids:
                return int(kids[0])
        except OSError:
            pass
        time.sleep(0.01)
    e.fail("no child of %d" % pid)


def run_killed(argv, sig, prefix=(), collector=True):
    """Run argv (under pcollect -r res when collector), send sig to the program KILL_AFTER s
    after it printed 'waiting' (prefix: timeout sends it itself). Returns (returncode,
    stdout, stderr, start_ns of the wait, kill time in ns)."""
    t0 = time.monotonic_ns()
    p = subprocess.Popen(list(prefix) + [str(a) for a in argv], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=e.tool_environ())
    line = p.stdout.readline()
    e.check(line == "waiting\n", "the program started its wait (%r)" % line)
    killed = None
    if sig:
        prog = child_of(child_of(p.pid) if prefix else p.pid) if collector else p.pid
        time.sleep(KILL_AFTER)
        os.kill(prog, sig)
        killed = time.monotonic_ns()
    out, err = p.communicate(timeout=60)
    if killed is None:
        killed = t0 + int(float(prefix[-1]) * 1e9)  # timeout's own time, from its start
    start = [int(x.split("=")[1]) for x in err.split() if x.startswith("start_ns=")]
    e.check(len(start) == 1, "the program told its wait's start (%s)" % err[-500:])
    return p.returncode, line + out, err, start[0], killed


def check_wait(res, func, kind, start, end, what):
    """The result finalized, and its wait of kind under func as long as start to end."""
    e.check(os.path.exists(os.path.join(res, "result.db")), "%s: the result is finalized" % what)
    rows = e.rows(res, "-view", "hotspots", "-group-by", "wait-kind,function", "-metric",
                  "Wait Time", "-threshold", "0")
    got = sum(e.ns(x["Wait Time:Total"]) for x in rows
              if x["Function"] == func and x["Wait Kind"] == kind)
    want = end - start
    e.check(abs(got - want) <= REL * want + ABS_NS,
            "%s: the %s wait in progress counted under %s: %.0f ms, it lasted %.0f ms to the "
            "kill" % (what, kind, func, got / 1e6, want / 1e6))


def check_short_reads(res, what):
    """The 20 short reads of short_waits() before the kill, each counted (summed)."""
    counts = e.rows(res, "-view", "hotspots", "-group-by", "wait-kind,function", "-metric",
                    "Wait Count", "-threshold", "0")
    reads = sum(e.num(x["Wait Count:Total"]) for x in counts
                if x["Function"] == "short_waits" and x["Wait Kind"] == "read")
    e.check(reads == 20, "%s: the 20 short reads before counted (%d)" % (what, reads))


def pcollect(res):
    return [e.tool("pcollect"), "-collect", "threading", "-quiet", "-knob",
            "wait-threshold=1000000", "-r", res, "--"]


part = sys.argv[1] if len(sys.argv) > 1 else "signals"


def signals(w, prog):
    alone = run_killed([prog], signal.SIGTERM, collector=False)

    # TERM to the program (Slurm's scancel, a kill from a script).
    res = w.join("c-term")
    code, out, err, start, killed = run_killed(pcollect(res) + [prog], signal.SIGTERM)
    e.check(code == -signal.SIGTERM and code == alone[0] and out == alone[1],
            "TERM: pcollect ends by TERM as the program alone (%d, %r; alone %d, %r)"
            % (code, out, alone[0], alone[1]))
    check_wait(res, "wait_here", "sleep", start, killed, "TERM")
    check_short_reads(res, "TERM")

    # KILL: no code of ours runs in the program, nor would any of its own.
    res = w.join("c-kill")
    code, out, err, start, killed = run_killed(pcollect(res) + [prog], signal.SIGKILL)
    e.check(code == 128 + signal.SIGKILL and out == alone[1],
            "KILL: pcollect exits 137 (%d), the output as alone (%r)" % (code, out))
    check_wait(res, "wait_here", "sleep", start, killed, "KILL")


def timeout(w, prog):
    # timeout(1): TERM to pcollect, which passes it on, then to the whole group again.
    res = w.join("c-timeout")
    code, out, err, start, killed = run_killed(
        pcollect(res) + [prog], None, prefix=("timeout", "--preserve-status", "-s", "TERM", "3"))
    e.check(code == 128 + signal.SIGTERM and out == "waiting\n",
            "timeout -s TERM: exit %d as the program's (143), its output %r" % (code, out))
    check_wait(res, "wait_here", "sleep", start, killed, "timeout -s TERM")

    # The short reads of a thread that then runs: written by its sampling, not at its end.
    res = w.join("c-burn")
    code, out, err, start, killed = run_killed(pcollect(res) + [prog, "burn"], signal.SIGTERM)
    e.check(code == -signal.SIGTERM, "TERM while on the CPU: pcollect ends by TERM (%d)" % code)
    check_short_reads(res, "TERM while on the CPU")

    # Python's time.sleep.
    script = w.join("sleeper.py")
    with open(script, "w") as f:
        f.write(PY)
    res = w.join("py-term")
    code, out, err, start, killed = run_killed(pcollect(res) + [sys.executable, script],
                                               signal.SIGTERM)
    e.check(code == -signal.SIGTERM and out == "waiting\n",
            "Python, TERM: pcollect ends by TERM (%d), its output %r" % (code, out))
    check_wait(res, "<module>", "sleep", start, killed, "Python, TERM")


with e.Workdir("collect-term") as w:
    {"signals": signals, "timeout": timeout}[part](w, e.prog("term-wait"))
