#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Issue 22, item 1: a process ends when its last thread does, under every analysis as
without the collector. pthread-exit-main: main ends with pthread_exit while 3 threads burn
20 ms each and print into stdio's buffer; the C library's exit(0) after the last one flushes
it. seccomp-strict: main enters seccomp's strict mode, writes a line and ends with the exit
system call (the line printf left in stdio's buffer is never flushed). Each run must end
(a hang is killed after 10 s and fails), with the program's exit code and stdout as without
us, and its result must finalize; the strict thread's stream is noted as stopped, saying why."""
import e2elib as e

TIMEOUT = 10  # s: each run takes well under 1 s here
# What each prints alone, stdout a pipe (pthread-exit-main.c, seccomp-strict.c: the line
# printf left in stdio's buffer is lost): known, so neither is run alone first.
ALONE = {"pthread-exit-main": ["main starts 3 threads", "thread 0 done", "thread 1 done",
                               "thread 2 done"],
         "seccomp-strict": ["strict mode: done"]}

with e.Workdir("thread-exit") as w:
    for prog in ("pthread-exit-main", "seccomp-strict"):
        for analysis in ("hotspots", "threading", "memory-consumption"):
            what = "%s under %s" % (prog, analysis)
            res = w.join("%s-%s" % (prog, analysis))
            r = e.run_bounded([e.tool("pcollect"), "-collect", analysis, "-r", res, "-quiet",
                               "-finalization-mode=none", "--", e.prog(prog)], TIMEOUT)
            e.check(r.returncode == 0, "%s: ends, exit 0 as alone (%d)\n%s"
                    % (what, r.returncode, r.stderr[-2000:]))
            # The threads' lines come in any order: the lines, not their order, are known.
            e.check(sorted(r.stdout.splitlines()) == sorted(ALONE[prog]),
                    "%s: stdout as alone (%r)" % (what, r.stdout))
            f = e.pfinalize(res)
            e.check(f.returncode == 0, "%s: the result finalizes\n%s" % (what, f.stderr))
            if prog == "seccomp-strict":
                notes = e.db_rows(res, "SELECT kind, detail FROM notes")
                e.check(any(k == "stream-stopped" and "seccomp's strict mode" in d
                            for k, d in notes),
                        "%s: the main thread's stream is noted as stopped at strict mode: %s"
                        % (what, notes))
