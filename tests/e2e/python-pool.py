#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A spawn Pool ended by its context manager (issue 23, item 12): Pool.terminate() kills its
workers with SIGTERM, which they do not handle, so no code of ours runs at their end and their
threads write no THREAD_END. Their CPU time must still be measured, not left out: the agent
looks at each sampled thread's CPU clock every 0.1 s (THREAD_CPU), and pfinalize takes the last
look and the samples after it. Known answer: each task burns 300 ms of its worker's CPU time
and returns the CPU time its worker's process had used at its end (time.process_time); the
worker uses a few ms more before it is killed. So each worker's measured figure (its threads'
cpu_ns) is that process time within 10% and three intervals (e2elib.cpu_close), the summary's
CPU Time Measured by Threads agrees with its CPU Time by as much, and a note says how many
threads ended by a signal. Output and exit code as without the collector."""
import json
import os

import e2elib as e
import pylib

BUDGET_MS = 300


def main():
    python = pylib.interpreter(pylib.label_arg())
    with e.Workdir("py-pool") as w:
        out = w.join("tasks.json")
        # What pool.py prints alone is known: it is not run alone first (its workers' burn).
        res = e.collect(w, "res", [python, pylib.program("pool.py"), out, BUDGET_MS],
                        stdout="pool: 2 tasks done\n", code=0, finalize=True)
        e.check(os.path.getsize(out) > 0, "pool.py wrote its figures under the collector")
        with open(out) as f:
            tasks = json.load(f)["tasks"]
        interval = int(e.db_rows(res, "SELECT value FROM meta WHERE key = "
                                 "'collect.interval_ns'")[0][0])
        used = {}  # worker pid -> its process's CPU time at its last task's end, ns
        for pid, secs in tasks:
            used[pid] = max(used.get(pid, 0), int(secs * 1e9))
        for pid, want in sorted(used.items()):
            rows = e.db_rows(res, "SELECT t.cpu_ns, t.end_ns IS NULL FROM threads t JOIN "
                             "processes p ON p.id = t.process_id WHERE p.pid = ?", (pid,))
            e.check(rows and all(killed for _cpu, killed in rows),
                    "worker %d: its threads (%d) have no end of their own: the pool killed it"
                    % (pid, len(rows)))
            got = sum(cpu or 0 for cpu, _killed in rows)
            e.check(got >= BUDGET_MS * 1e6 and e.cpu_close(got, want, interval),
                    "worker %d: its threads measured %.3f s of CPU time, its process had used "
                    "%.3f s at its task's end (budget %d ms a task; within 10%% and 3 intervals)"
                    % (pid, got / 1e9, want / 1e9, BUDGET_MS))
        text = e.preport("-r", res, "-report", "summary").stdout
        cpu = float(e.summary_value(text, "CPU Time").rstrip("s")) * 1e9
        measured = float(e.summary_value(text, "CPU Time Measured by Threads").rstrip("s")) * 1e9
        e.check(measured >= 2 * BUDGET_MS * 1e6 and
                e.cpu_close(cpu, measured, interval, intervals=3 * 4),
                "summary: CPU Time %.3f s, CPU Time Measured by Threads %.3f s: they agree "
                "(within 10%% and 3 intervals a process) and hold the 2 tasks' %.1f s"
                % (cpu / 1e9, measured / 1e9, 2 * BUDGET_MS / 1e3))
        e.check("ended by a signal" in text,
                "summary: a note says which threads' figure is the agent's last look")


if __name__ == "__main__":
    main()
