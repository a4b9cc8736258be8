#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""asyncio tasks without pcollect's task driver, on one interpreter (the argument): 3.14+
publish the running task (Py_AsyncioModuleDebugOffsets), which the agent reads per sample
(docs/python.md, asyncio tasks). Skipped before 3.14: the interpreter publishes no running
task there. Checks, each against tasks' known CPU budgets 60/30/10 ("alpha", "beta",
"gamma") within e2elib.Sampled's tolerance, each task a stretch per slice:
- tasks.py started by pcollect with PCOLLECT_ASYNCIO=0 (no driver): -group-by task splits
  the three so, each under "[task NAME]" above its coroutine (worker), the program's output
  as expected;
- tasks-attach.py (turns of 6, 3 and 1 pieces of 5 ms) attached to with pcollect -target-pid (no start-up
  hook at all: the user-visible gain): the same split, the program's output and exit intact;
- with the driver (the default): no sample has two "[task" frames."""
import os
import subprocess

import e2elib as e
import pylib

UNIT = 50   # gamma's CPU ms (tasks.py)
SLICE = 10  # CPU ms a slice (tasks.py)
SHARES = {"alpha": 0.6, "beta": 0.3, "gamma": 0.1}


def task_frames(res):
    """{task name: CPU ns} over the samples, the most "[task" frames one stack has, and the
    samples with a frame of pcollect's task driver (api/python/pcollect/_tasks.py, its
    wrapper coroutine below the driver); each task frame the agent adds must sit right above
    the task's worker coroutine."""
    db = e.Db(res)
    cpu, most, misplaced, driven = {}, 0, [], 0
    for _th, sid, _count, _w, ns in db.samples:
        frames = db.python_frames(sid)
        names = [f["name"] for f in frames]
        ours = any((f["file"] or "").endswith("pcollect/_tasks.py") for f in frames)
        driven += ours
        marks = [i for i, n in enumerate(names) if n.startswith("[task ")]
        most = max(most, len(marks))
        if marks:
            i = marks[-1]
            cpu[names[i]] = cpu.get(names[i], 0) + ns
            # (the driver's frame may be innermost: its own bookkeeping between steps)
            if not ours and names[i][6:-1] in SHARES and names[i + 1:i + 2] != ["worker"]:
                misplaced.append(names)
    e.check(not misplaced, "each task frame sits above its worker coroutine (%s)"
            % misplaced[:2])
    return cpu, most, driven


def check_split(res, what, turns):
    _cpu, _most, driven = task_frames(res)
    e.check(driven == 0, "%s: no sample has a frame of pcollect's task driver (%d do)"
            % (what, driven))
    hs = {r["Task"]: e.secs(r, "CPU Time:Total")
          for r in e.rows(res, "-view", "hotspots", "-group-by", "task")}
    for n in SHARES:
        e.check("[task %s]" % n in hs, "%s: -group-by task has [task %s] (%s)"
                % (what, n, sorted(hs)))
    spent = sum(hs["[task %s]" % n] for n in SHARES)
    stats = e.db_sampled(res)
    print("%s: tasks' CPU %s s; %s" % (what, {n: hs["[task %s]" % n] for n in SHARES}, stats))
    for n, want in SHARES.items():
        e.check_share(stats, hs["[task %s]" % n] / spent, want,
                      "%s: -group-by task: %s" % (what, n), stretches=turns(want, spent))


def main():
    label = pylib.label_arg()
    python = pylib.interpreter(label)
    minor = int(subprocess.run([python, "-c", "import sys; print(sys.version_info[1])"],
                               capture_output=True, text=True, check=True).stdout)
    if minor < 14:
        e.skip("before 3.14 the interpreter publishes no running task (%s is 3.%d)"
               % (label, minor))
    with e.Workdir("py-tasks-debug") as w:
        # 1. started by pcollect, the driver off
        src = pylib.program("tasks.py")
        res = e.collect(w, "off", [python, src, UNIT], interval=1, finalize=True,
                        env=dict(os.environ, PCOLLECT_ASYNCIO="0"),
                        stdout="alpha beta gamma sleeper 5 <Task finished name='alpha' "
                        "traceback_names,failing\n")
        check_split(res, "no driver", lambda want, _s: round(want * 10 * UNIT / SLICE))

        # 2. attached to: no start-up hook at all
        att = e.Result(w.join("attach"))
        out, err, code, _pid, _window = pylib.attach_go(
            w, [python, pylib.program("tasks-attach.py"), pylib.GO], att, 1.5, 0.2,
            options=["-knob", "sampling-interval=1"])
        e.check(code == 0 and out == "tasks done\n",
                "the program's output and exit code intact (%d: %r %s)"
                % (code, out, err.strip()))
        e.finalize(att)
        # a turn each per 50 ms round
        check_split(att, "attached", lambda want, spent: max(1, round(spent / 0.050)))

        # 3. the driver on (the default): its frame alone names the task
        drv = e.collect(w, "driver", [python, src, 20], interval=1, finalize=True)
        _cpu, most, driven = task_frames(drv)
        e.check(driven > 0, "with the driver on, %d samples have its frames" % driven)
        e.check(most == 1, "with the driver, a sample has one [task frame (at most %d)" % most)


if __name__ == "__main__":
    main()
