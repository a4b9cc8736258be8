#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""asyncio tasks on one interpreter (the argument): tasks.py's "alpha", "beta" and "gamma" burn
CPU budgets 60/30/10, interleaved a slice at a time on the one thread, while "sleeper" awaits
asyncio.sleep(0.1) five times on one line. Checks: the program's output as without pcollect;
preport -group-by task splits the three tasks' CPU time 60/30/10 within e2elib.Sampled's
tolerance (each task a stretch per slice); the sleeper has no CPU time to speak of and its Task
Wait Time is what its awaits took (at least the 0.5 s it asked for, and from 2% + 5 ms over to 8% +
5 ms under the time the program measured around them), all of it at its await line, under the task in
the top-down tree; Task Wait Time is not Wait Time (no thread was blocked)."""
import os

import e2elib as e
import pylib

UNIT = 50      # gamma's CPU ms (tasks.py)
SLICE = 10     # CPU ms a slice (tasks.py)
NAP, NAPS = 0.1, 5
SHARES = {"alpha": 0.6, "beta": 0.3, "gamma": 0.1}


def main():
    label = pylib.label_arg()
    python = pylib.interpreter(label)
    src = pylib.program("tasks.py")
    with e.Workdir("py-tasks") as w:
        took_file = w.join("took")
        # Its output, known: the tasks' names, the naps, a task's repr (which names the
        # program's coroutine, not pcollect's driver) and the functions of a traceback out
        # of a task (none of pcollect's on 3.11+), as without pcollect.
        tb = "-" if label == "3.10" else "traceback_names,failing"
        res = e.collect(w, "res", [python, src, UNIT, took_file], interval=1,
                        stdout="alpha beta gamma sleeper 5 <Task finished name='alpha' %s\n"
                        % tb,
                        finalize=True)
        with open(took_file) as f:
            took_s = float(f.read())

        hs = {r["Task"]: r for r in e.rows(res, "-view", "hotspots", "-group-by", "task")}
        for n in list(SHARES) + ["sleeper"]:
            e.check("[task %s]" % n in hs, "-group-by task has [task %s] (%s)" % (n, sorted(hs)))
        cpu = {n: e.secs(hs["[task %s]" % n], "CPU Time:Total") for n in SHARES}
        spent = sum(cpu.values())
        stats = e.db_sampled(res)
        print("tasks' CPU %s s; %s" % (cpu, stats))
        for n, want in SHARES.items():
            e.check_share(stats, cpu[n] / spent, want, "-group-by task: " + n,
                          stretches=round(want * 10 * UNIT / SLICE))
        sleeper = hs["[task sleeper]"]
        e.check(e.secs(sleeper, "CPU Time:Total") <= 0.02,
                "the sleeper ran for almost no CPU time (%s s)" % sleeper.get("CPU Time:Total"))
        wait_s = e.secs(sleeper, "Task Wait Time:Total")
        print("sleeper: Task Wait Time %.4f s, its own clock %.4f s" % (wait_s, took_s))
        e.check(wait_s >= NAP * NAPS - 0.001,
                "the sleeper's Task Wait Time %.3f s is at least its %d naps of %.1f s"
                % (wait_s, NAPS, NAP))
        # The program's clock also runs from the driver's end-of-wait stamp to its own read
        # (the agent's call, and on a loaded machine the thread's waits for a core between
        # them: 5% seen at load 10); never less than the suspensions themselves.
        e.check(-0.02 * took_s - 0.005 <= took_s - wait_s <= 0.08 * took_s + 0.005,
                "the sleeper's Task Wait Time %.4f s is what its awaits took by its own "
                "clock, %.4f s (-8%% - 5 ms to +2%% + 5 ms)" % (wait_s, took_s))

        # alpha's suspensions (under 1 ms each on a quiet machine: told summed) hold at least
        # the CPU time beta and gamma ran meanwhile: they end before it (fewer slices).
        alpha_wait = e.secs(hs["[task alpha]"], "Task Wait Time:Total")
        others = cpu["beta"] + cpu["gamma"]
        tol = stats.time_tolerance_ns(others * 1e9) / 1e9
        e.check(alpha_wait >= others - tol,
                "alpha waited %.3f s, at least the %.3f s (+- %.3f) beta and gamma ran"
                % (alpha_wait, others, tol))
        one = e.rows(res, "-view", "hotspots", "-filter", "function=[task gamma]")
        got = sum(e.secs(r) for r in one)
        e.check(abs(got - cpu["gamma"]) <= 0.002,
                "-filter function=[task gamma] keeps gamma's %.3f s (%.3f s)"
                % (cpu["gamma"], got))

        # At the await line: the line's total over the whole run is the sleeper's.
        line = e.source_line(src, "await asyncio.sleep(NAP)")
        lines = e.rows(res, "-view", "hotspots", "-group-by", "task,source-line",
                       "-metric", "Task Wait Time")
        at = [r for r in lines if r["Task"] == "[task sleeper]" and
              r["Source File"] == src and int(r["Source Line"] or 0) == line]
        e.check(len(at) == 1 and abs(e.secs(at[0], "Task Wait Time:Total") - wait_s) <= 0.001,
                "the sleeper's Task Wait Time is all at its await line %s:%d (%s)"
                % (os.path.basename(src), line, at))

        # Top-down, grouped by task: [task sleeper] > ... > sleeper > sleep.
        td = e.rows(res, "-view", "top-down", "-group-by", "task", "-threshold", "0",
                    "-metric", "Task Wait Time")
        path, under = [], {}
        for r in td:
            d = int(r["Depth"])
            path[d:] = [r["Function Stack"]]
            under.setdefault(tuple(path[:2]), []).append(r["Function Stack"])
        chain = under.get(("Total", "[task sleeper]"), [])
        e.check("sleeper" in chain and chain.index("[task sleeper]", 1) < chain.index("sleeper"),
                "top-down -group-by task: the task's frame above the sleeper coroutine (%s)"
                % chain[:16])
        metrics = {r["Function"]: r for r in e.rows(res, "-view", "hotspots")}
        e.check(not any(e.secs(r, "Wait Time:Total") for r in metrics.values()),
                "no Wait Time: a task's suspension blocks no thread")


if __name__ == "__main__":
    main()
