#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Python multiprocessing: proc_a and proc_b in fork()ed workers, proc_c in a spawned
interpreter (fork + exec), taking turns with 2:1:1 work per turn, on one interpreter (the
argument). Each process's samples must carry its own worker function; a:b must be 2:1 within 8
points (the CPU time one unit of work takes varies more between processes than within one on
a loaded machine), and c (same work as b, in a new interpreter process) within 50% of b."""
import json

import e2elib as e
import pylib

TOL = 8.0


def main():
    python = pylib.interpreter(pylib.label_arg())
    with e.Workdir("py-mp") as w:
        res, out = pylib.collect(w, "res", python, "mp.py", [50, 300000])
        pids = json.loads(out.strip().splitlines()[-1])
        e.check(set(pids) == {"a", "b", "c"}, "mp.py reports its workers' pids %s" % pids)

        per = {}
        for r in pylib.rows(res, "-view", "hotspots", "-group-by", "process,function"):
            per.setdefault(int(r["PID"]), {})[r["Function"]] = pylib.secs(r)
        spin = {k: per.get(pids[k], {}).get("spin", 0) for k in "abc"}
        print("spin per worker: %s" % spin)
        sa, sb = pylib.shares([spin["a"], spin["b"]])
        e.check(abs(sa - 200 / 3) <= TOL, "fork workers a:b split %.1f/%.1f (66.7/33.3 +- %.0f)"
                % (sa, sb, TOL))
        e.check(spin["b"] > 0 and 2 / 3 <= spin["c"] / spin["b"] <= 1.5,
                "spawned worker c: %.3f s for b's %.3f s (within 50%%)" % (spin["c"], spin["b"]))

        db = pylib.Db(res)
        for k in "abc":
            mine = other = total = 0
            for th, sid, count, _w, _t in db.samples:
                if db.threads[th][1] != pids[k]:
                    continue
                names = {f["name"] for f in db.python_frames(sid)}
                total += count
                if "spin" in names:
                    if "proc_" + k in names:
                        mine += count
                    else:
                        other += count
            e.check(total >= 30 and other == 0 and mine >= 0.6 * total,
                    "worker %s (pid %d): %d of %d samples in spin under proc_%s, %d elsewhere"
                    % (k, pids[k], mine, total, k, other))
        cmd = e.db_rows(res, "SELECT command_line FROM processes WHERE pid = ?", (pids["c"],))
        e.check(any("multiprocessing" in c for (c,) in cmd),
                "the spawned worker's command line is the new interpreter's")


if __name__ == "__main__":
    main()
