#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Python line attribution: two_loops runs LOOP-A three times as often as LOOP-B (one-line
loops, same body), on one interpreter (the argument). Lines must split 75/25 in hotspots
grouped by source line, in the source view and in the database, within the tolerance of
e2elib.Sampled (each loop runs once a round: ROUNDS stretches)."""
import e2elib as e
import pylib

ROUNDS = 4  # tests/progs/python/lines.py


def main():
    python = pylib.interpreter(pylib.label_arg())
    src = pylib.program("lines.py")
    a, b = e.source_line(src, "# LOOP-A"), e.source_line(src, "# LOOP-B")
    with e.Workdir("py-lines") as w:
        res = e.collect(w, "res", [python, src, 75], interval=1, finalize=True)

        hl = e.rows(res, "-view", "hotspots", "-group-by", "source-line")
        by_line = {}
        for r in hl:
            if r["Source File"] == src and r["Source Line"]:
                by_line[int(r["Source Line"])] = e.secs(r)
        mine = sum(by_line.values())
        allt = sum(e.secs(r) for r in hl)
        print("lines.py by line: %s (all %.3f s)" % (sorted(by_line.items()), allt))
        e.check(by_line.get(a, 0) + by_line.get(b, 0) >= 0.9 * mine and mine >= 0.8 * allt,
                "lines %d and %d hold the time of lines.py, which holds the run" % (a, b))
        stats = e.db_sampled(res)
        sa, _sb = e.shares([by_line.get(a, 0), by_line.get(b, 0)])
        e.check_share(stats, sa / 100, 0.75, "hotspots -group-by source-line: LOOP-A",
                      stretches=ROUNDS)

        sv = e.rows(res, "-view", "source", "-source-object", "function=two_loops")
        sl = {int(r["Line"]): e.secs(r) for r in sv if r["Line"]}
        s2a, _ = e.shares([sl.get(a, 0), sl.get(b, 0)])
        e.check(any(src.endswith(r.get("Source File", "")) for r in sv),
                "the source view is of lines.py")
        e.check_share(stats, s2a / 100, 0.75, "source view of two_loops: LOOP-A",
                      stretches=ROUNDS)
        e.check(any("LOOP-A" in r["Source"] for r in sv if r["Line"] and int(r["Line"]) == a),
                "the source view shows the text of lines.py")

        db = e.Db(res)
        na = nb = n = 0
        for _th, sid, _count, weight, _t in db.samples:
            py = db.python_frames(sid)
            if py and py[-1]["name"] == "two_loops":
                n += weight
                na += weight if py[-1]["frame_line"] == a else 0
                nb += weight if py[-1]["frame_line"] == b else 0
        e.check(n > 0 and na + nb >= 0.95 * n,
                "database: %d of %d two_loops samples on the loop lines" % (na + nb, n))
        s3a, _ = e.shares([na, nb])
        e.check_share(stats, s3a / 100, 0.75, "database: LOOP-A", stretches=ROUNDS)


if __name__ == "__main__":
    main()
