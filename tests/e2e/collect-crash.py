#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Issue 10, items 4 and 5: a killed, aborted or crashing program keeps its samples.
abort() and SIGSEGV (with and without the program's own handler) after 0.3 s of CPU: the exit
status and stdout are those of a run without the collector, the program's handler still runs,
and the samples cover the CPU time the program used before dying (within tolerance). kill -9
while the main thread waits in pthread_join() and two workers have burnt 2:1: the result
resolves like a finished run (functions named, nothing [unknown]) and the workers' CPU splits
2:1 within tolerance."""
import re
import signal
import subprocess
import time

import e2elib as e


def crash(w, mode):
    nat = e.run([e.prog("crash"), mode, "300"])
    # A shell's exit status: 128 + the signal the program died of.
    native = 128 - nat.returncode if nat.returncode < 0 else nat.returncode
    res = w.join("res-" + mode)
    r = e.pcollect([e.prog("crash"), mode, "300"], result=res)
    e.check(r.returncode == native and r.returncode in (128 + 6, 128 + 11),
            "%s: exit status as without the collector (%d, native %d)"
            % (mode, r.returncode, native))
    e.check(r.stdout == nat.stdout, "%s: stdout as without the collector (%r)" % (mode, r.stdout))
    m = re.search(r"cpu_ns=(\d+)", r.stderr)
    e.check(m, "%s: the program said how much CPU it used" % mode)
    cpu = int(m.group(1))
    threads = e.thread_streams(e.load_streams(res))
    got = e.sampled_ns(threads)
    e.check(e.cpu_close(got, cpu, threads[0].header["interval_ns"]),
            "%s: samples cover %.3f s of the %.3f s of CPU used before dying"
            % (mode, got / 1e9, cpu / 1e9))
    f = e.pfinalize(res)
    names = e.db_leaf_weights(res)
    total = sum(names.values())
    e.check(f.returncode == 0 and names.get("work", 0) >= 0.9 * total,
            "%s: finalized, the work function has the samples (%s)" % (mode, names))


def kill_in_join(w):
    res = w.join("res-join")
    p = subprocess.Popen([e.tool("pcollect"), "-collect", "hotspots", "-r", res, "-quiet",
                          "-finalization-mode=none", "--", e.prog("crash"), "join", "400"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    cpu = {}
    deadline = time.time() + 60
    while len(cpu) < 2 and time.time() < deadline:
        line = p.stderr.readline()
        m = re.match(r"(one|two)=(\d+)", line)
        if m:
            cpu[m.group(1)] = int(m.group(2))
    e.check(len(cpu) == 2, "both workers burnt their CPU (%s)" % cpu)
    child = int(e.run(["pgrep", "-P", str(p.pid)]).stdout.split()[0])
    import os
    os.kill(child, signal.SIGKILL)
    p.communicate(timeout=60)
    e.check(p.returncode == 128 + 9, "pcollect exits 137 like the killed program (%d)"
            % p.returncode)
    f = e.pfinalize(res)
    e.check(f.returncode == 0, "pfinalize of the killed job exits 0 (%s)" % f.stderr.strip())
    rows = e.db_leaf_weights(res)
    total = sum(rows.values())
    unknown = rows.get("[unknown]", 0)
    e.check(total > 0 and unknown <= 0.02 * total,
            "the killed job resolves: %.1f%% [unknown] (%s)" % (100.0 * unknown / total, rows))
    interval = e.db_rows(res, "SELECT value FROM meta WHERE key = 'interval_ns'")[0][0]
    two, one = rows.get("worker_two", 0) * int(interval), rows.get("worker_one", 0) * int(interval)
    e.check(e.cpu_close(two, cpu["two"], int(interval)) and
            e.cpu_close(one, cpu["one"], int(interval)),
            "the workers' CPU is sampled: %.0f of %.0f ms and %.0f of %.0f ms"
            % (two / 1e6, cpu["two"] / 1e6, one / 1e6, cpu["one"] / 1e6))


with e.Workdir("crash") as w:
    for mode in ("abort", "segv", "segv-handler"):
        crash(w, mode)
    kill_in_join(w)
