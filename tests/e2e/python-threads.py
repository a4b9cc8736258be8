#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Python threads: worker_a and worker_b take turns in threading.Thread threads, worker_a
burning twice the CPU time per turn, while the main thread waits, on one interpreter (the
argument). Each thread's samples must carry its own worker (and never the other one), and the
CPU time the profile gives each worker's spin_for calls must be what the worker measured
itself (time.thread_time around them), and the a:b split the measured one (2:1 by
construction), within the tolerances of e2elib.Sampled: a worker's spin_for time is made of
one stretch a turn."""
import json

import e2elib as e
import pylib

TURNS, UNIT_MS = 14, 10


def main():
    python = pylib.interpreter(pylib.label_arg())
    with e.Workdir("py-threads") as w:
        res = e.collect(w, "res", [python, pylib.program("threads.py"), TURNS, UNIT_MS],
                        interval=1, finalize=True)
        out = res.stdout
        ref = json.loads(out.strip().splitlines()[-1])
        tids, cpu = ref["tid"], ref["cpu"]
        e.check(set(tids) == {"a", "b"}, "threads.py reports its workers' tids %s" % tids)

        db = e.Db(res)
        spin = {"a": 0, "b": 0}  # ns under spin_for
        seen = {"a": [0, 0], "b": [0, 0]}  # weight under worker_k only, all weight
        for th, sid, _count, weight, t_ns in db.samples:
            tid = db.threads[th][0]
            for k in "ab":
                if tid != tids[k]:
                    continue
                names = {f["name"] for f in db.python_frames(sid)}
                seen[k][1] += weight
                if "worker_" + k in names and "worker_" + "ba"[k == "b"] not in names:
                    seen[k][0] += weight
                if "spin_for" in names:
                    spin[k] += t_ns
        stats = {k: e.db_sampled(res, "t.tid = ?", (tids[k],)) for k in "ab"}
        print("spin_for: profile %s ns, measured by the workers %s s" % (spin, cpu))
        for k in "ab":
            e.check_time(stats[k], spin[k], cpu[k] * 1e9, "worker %s: spin_for" % k,
                         stretches=TURNS)
        e.check_split(stats["a"], spin["a"], stats["b"], spin["b"],
                      cpu["a"] / (cpu["a"] + cpu["b"]), "a:b split against the measured one "
                      "(nominal 66.7/33.3)", stretches=TURNS)
        for k in "ab":
            share = spin[k] / max(stats[k].total_ns, 1)
            e.check(share >= 0.8 - stats[k].share_tolerance(0.8),
                    "worker %s: its thread spends %.0f%% of its time in spin_for (the rest: "
                    "starting, the semaphores; want 80%% or more; %s)"
                    % (k, 100 * share, stats[k]))
            share = seen[k][0] / max(seen[k][1], 1)
            e.check(share >= 0.95 - stats[k].share_tolerance(0.95),
                    "thread %s: %.1f%% of its samples under worker_%s only (want 95%% or more)"
                    % (k, 100 * share, k))


if __name__ == "__main__":
    main()
