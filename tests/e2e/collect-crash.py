#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Issue 10, items 4 and 5: a killed, aborted or crashing program keeps its samples.
abort() and SIGSEGV (with and without the program's own handler) after 0.3 s of CPU: the exit
status and stdout are those of a run without the collector, the program's handler still runs,
and the samples cover the CPU time main used before dying (within tolerance). kill -9
while the main thread waits in pthread_join() and two workers have burnt 2:1: the result
resolves like a finished run (functions named, nothing [unknown]) and the workers' CPU splits
2:1 within tolerance."""
import os
import re
import signal
import subprocess
import time

import e2elib as e

# The program's own SIGSEGV and abort() are what this test is about: AddressSanitizer's
# handler would turn them into a report and exit status 1.
if e.SANITIZE:
    os.environ["ASAN_OPTIONS"] += ":handle_segv=0:handle_sigbus=0:handle_abort=0"


# How each mode ends without the collector (crash.c): the signal it dies of (pcollect exits
# 128 + its number) and its stdout; known, so the program is not run alone first to learn it.
ENDS = {"abort": (signal.SIGABRT, "worked\n"), "segv": (signal.SIGSEGV, "worked\n"),
        "segv-handler": (signal.SIGSEGV, "worked\nhandler ran\n")}


def crash(w, mode):
    sig, out = ENDS[mode]
    res = e.collect(w, "res-" + mode, [e.prog("crash"), mode, "300"], code=128 + sig,
                    stdout=out)
    m = re.search(r"cpu_ns=(\d+)", res.stderr)
    e.check(m, "%s: the program said how much CPU it used" % mode)
    cpu = int(m.group(1))
    threads = e.thread_streams(e.load_streams(res))
    stats = e.sampled_of([x for s in threads for x in s.samples()],
                         threads[0].header["interval_ns"], threads=len(threads))
    # Death may also take the timer's signal that was pending then: one more interval.
    e.check_time(stats, e.sampled_ns(threads), cpu,
                 "%s: the samples against the CPU time used before dying" % mode,
                 extra_ns=threads[0].header["interval_ns"])
    e.finalize(res)
    work, total = e.Db(res).under(["work"])
    e.check(work["work"] >= 0.9 * total,
            "%s: finalized, the work function has the samples (%s of %d, leaves %s)"
            % (mode, work, total, e.db_leaf_weights(res)))


def kill_in_join(w):
    res = w.join("res-join")
    p = subprocess.Popen([e.tool("pcollect"), "-collect", "hotspots", "-r", res, "-quiet",
                          "-finalization-mode=none", "--", e.prog("crash"), "join", "400"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=e.tool_environ())
    cpu = {}
    deadline = time.time() + 60
    while len(cpu) < 2 and time.time() < deadline:
        line = p.stderr.readline()
        m = re.match(r"(one|two)=(\d+)", line)
        if m:
            cpu[m.group(1)] = int(m.group(2))
    e.check(len(cpu) == 2, "both workers burnt their CPU (%s)" % cpu)
    child = int(e.run(["pgrep", "-P", str(p.pid)]).stdout.split()[0])
    os.kill(child, signal.SIGKILL)
    p.communicate(timeout=60)
    e.check(p.returncode == 128 + 9, "pcollect exits 137 like the killed program (%d)"
            % p.returncode)
    e.finalize(res)
    rows = e.db_leaf_weights(res)
    total = sum(rows.values())
    unknown = rows.get("[unknown]", 0)
    e.check(total > 0 and unknown <= 0.02 * total,
            "the killed job resolves: %.1f%% [unknown] (%s)" % (100.0 * unknown / total, rows))
    # A worker's budget holds its clock reads (getrusage): its samples are those under it.
    workers, _total = e.Db(res).under(["worker_one", "worker_two"])
    interval = int(e.db_rows(res, "SELECT value FROM meta WHERE key = 'interval_ns'")[0][0])
    # Each worker is one stretch of CPU time, sampled in its own thread.
    for name in ("two", "one"):
        stats = e.db_sampled(res, "t.tid IN (SELECT th.tid FROM threads th JOIN samples s ON "
                             "s.thread_id = th.id JOIN stacks st ON st.id = s.stack_id JOIN "
                             "frames fr ON fr.id = st.frame_id JOIN functions f ON f.id = "
                             "fr.function_id WHERE f.name = ?)", ("worker_" + name,))
        e.check_time(stats, workers["worker_" + name] * interval, cpu[name],
                     "worker_%s: its samples against the CPU time it printed" % name,
                     stretches=1)


with e.Workdir("crash") as w:
    for mode in ("abort", "segv", "segv-handler"):
        crash(w, mode)
    kill_in_join(w)
