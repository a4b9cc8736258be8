#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Python threads: worker_a and worker_b take turns in threading.Thread threads, worker_a with
twice the work per turn, while the main thread waits, on one interpreter (the argument). Each
thread's samples must carry its own worker (and never the other one), and the CPU time the
profile gives each worker's spin calls must be what the worker measured itself
(time.thread_time around them): within 5 % plus three 4 ms ticks, and the a:b shares within
3 points of the measured ones (which are 2:1 on a quiet machine; on a loaded one, the CPU
time a unit of work takes drifts, which is why the reference is measured, not assumed)."""
import json

import e2elib as e
import pylib

TOL = 3.0


def main():
    python = pylib.interpreter(pylib.label_arg())
    with e.Workdir("py-threads") as w:
        res, out = pylib.collect(w, "res", python, "threads.py", [60, 300000])
        ref = json.loads(out.strip().splitlines()[-1])
        tids, cpu = ref["tid"], ref["cpu"]
        e.check(set(tids) == {"a", "b"}, "threads.py reports its workers' tids %s" % tids)

        per = {}
        for r in pylib.rows(res, "-view", "hotspots", "-group-by", "thread,function"):
            per.setdefault(int(r["TID"]), {})[r["Function"]] = pylib.secs(r)
        spin = {k: per.get(tids[k], {}).get("spin", 0) for k in "ab"}
        print("spin: profile %s, measured by the workers %s" % (spin, cpu))
        for k in "ab":
            e.check(abs(spin[k] - cpu[k]) <= 0.05 * cpu[k] + 0.012,
                    "worker %s: spin %.3f s in the profile, %.3f s measured" % (k, spin[k],
                                                                              cpu[k]))
        got, want = pylib.shares([spin["a"], spin["b"]]), pylib.shares([cpu["a"], cpu["b"]])
        e.check(abs(got[0] - want[0]) <= TOL,
                "a:b split %.1f/%.1f, measured %.1f/%.1f (nominal 66.7/33.3)"
                % (got[0], got[1], want[0], want[1]))
        ta, tb = (sum(per.get(tids[k], {}).values()) for k in "ab")
        fa, fb = spin["a"] / max(ta, 1e-9), spin["b"] / max(tb, 1e-9)
        e.check(fa >= 0.8 and fb >= 0.8, "each worker thread spends its time in spin (%.0f%%, "
                "%.0f%%; the rest is the semaphores)" % (100 * fa, 100 * fb))

        db = pylib.Db(res)
        seen = {"a": [0, 0], "b": [0, 0]}
        for th, sid, count, _w, _t in db.samples:
            tid = db.threads[th][0]
            for k in "ab":
                if tid == tids[k]:
                    names = {f["name"] for f in db.python_frames(sid)}
                    seen[k][1] += count
                    if "worker_" + k in names and "worker_" + "ba"[k == "b"] not in names:
                        seen[k][0] += count
        for k in "ab":
            e.check(seen[k][1] >= 30 and seen[k][0] >= 0.95 * seen[k][1],
                    "thread %s: %d of %d samples under worker_%s only" % (k, seen[k][0],
                                                                        seen[k][1], k))


if __name__ == "__main__":
    main()
