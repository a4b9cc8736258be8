#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Python threads: worker_a and worker_b take turns in threading.Thread threads, worker_a with
twice the work per turn, while the main thread waits, on one interpreter (the argument). Each
thread's samples must carry its own worker, and the CPU times must be 2:1 within 5 points."""
import json

import e2elib as e
import pylib

TOL = 5.0


def main():
    python = pylib.interpreter(pylib.label_arg())
    with e.Workdir("py-threads") as w:
        res, out = pylib.collect(w, "res", python, "threads.py", [200, 100000])
        tids = json.loads(out.strip().splitlines()[-1])
        e.check(set(tids) == {"a", "b"}, "threads.py reports its workers' tids %s" % tids)

        per = {}
        for r in pylib.rows(res, "-view", "hotspots", "-group-by", "thread,function"):
            per.setdefault(int(r["TID"]), {})[r["Function"]] = pylib.secs(r)
        ta, tb = (sum(per.get(tids[k], {}).values()) for k in "ab")
        print("thread a %.3f s, thread b %.3f s; by function: %s" % (ta, tb, per))
        sa, sb = pylib.shares([ta, tb])
        e.check(abs(sa - 200 / 3) <= TOL, "thread CPU split %.1f/%.1f (66.7/33.3 +- 5)" % (sa, sb))
        e.check(per[tids["a"]].get("spin", 0) >= 0.9 * ta and
                per[tids["b"]].get("spin", 0) >= 0.9 * tb,
                "each worker thread spends its time in spin")

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
