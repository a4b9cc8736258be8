#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Python multiprocessing: proc_a and proc_b in fork()ed workers, proc_c in a spawned
interpreter (fork + exec), proc_d in a child of the interpreter's default start method (fork up
to 3.13, forkserver from 3.14), taking turns with 2:1:1:1 of CPU time per turn, on one
interpreter (the argument). Each process's samples must carry its own worker function (and no
other), and the CPU time the profile gives each worker's spin_for calls must be what the worker
measured itself (time.thread_time around them), and the a:b split the measured one (2:1 by
construction), within the tolerances of e2elib.Sampled: a worker's spin_for time is made of
one stretch a turn."""
import json

import e2elib as e
import pylib

TURNS, UNIT_MS = 14, 10
WORKERS = "abcd"


def main():
    python = pylib.interpreter(pylib.label_arg())
    with e.Workdir("py-mp") as w:
        res = e.collect(w, "res", [python, pylib.program("mp.py"), TURNS, UNIT_MS], interval=1,
                        finalize=True)
        out = res.stdout
        ref = json.loads(out.strip().splitlines()[-1])
        pids, cpu = ref["pid"], ref["cpu"]
        e.check(set(pids) == set(WORKERS), "mp.py reports its workers' pids %s" % pids)
        how = {"a": "forked", "b": "forked", "c": "spawned",
               "d": "default start method, %s" % ref["default"]}

        db = e.Db(res)
        spin = {k: 0 for k in WORKERS}  # ns under spin_for
        mine = {k: 0 for k in WORKERS}  # weight under spin_for and proc_k
        other = {k: 0 for k in WORKERS}  # weight under spin_for and not proc_k
        for th, sid, _count, weight, t_ns in db.samples:
            for k in WORKERS:
                if db.threads[th][1] != pids[k]:
                    continue
                names = {f["name"] for f in db.python_frames(sid)}
                if "spin_for" in names:
                    spin[k] += t_ns
                    if "proc_" + k in names:
                        mine[k] += weight
                    else:
                        other[k] += weight
        stats = {k: e.db_sampled(res, "p.pid = ?", (pids[k],)) for k in WORKERS}
        print("spin_for: profile %s ns, measured by the workers %s s" % (spin, cpu))
        for k in WORKERS:
            e.check_time(stats[k], spin[k], cpu[k] * 1e9, "worker %s (%s): spin_for"
                         % (k, how[k]), stretches=TURNS)
        e.check_split(stats["a"], spin["a"], stats["b"], spin["b"],
                      cpu["a"] / (cpu["a"] + cpu["b"]), "a:b split against the measured one "
                      "(nominal 66.7/33.3)", stretches=TURNS)
        for k in WORKERS:
            share = mine[k] / max(stats[k].weight, 1)
            e.check(other[k] == 0 and share >= 0.6 - stats[k].share_tolerance(0.6),
                    "worker %s (pid %d): %.0f%% of its weight in spin_for under proc_%s, none "
                    "under another (want 60%% or more: the rest is starting the worker; %s)"
                    % (k, pids[k], 100 * share, k, stats[k]))
        cmd = e.db_rows(res, "SELECT command_line FROM processes WHERE pid = ?", (pids["c"],))
        e.check(any("multiprocessing" in c for (c,) in cmd),
                "the spawned worker's command line is the new interpreter's")


if __name__ == "__main__":
    main()
