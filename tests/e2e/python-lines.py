#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Python line attribution: two_loops runs LOOP-A three times as often as LOOP-B (one-line
loops, same body), on one interpreter (the argument). Lines must split 75/25 within 5 points
in hotspots grouped by source line, in the source view and in the database."""
import e2elib as e
import pylib

TOL = 5.0


def main():
    python = pylib.interpreter(pylib.label_arg())
    src = pylib.program("lines.py")
    a, b = e.source_line(src, "# LOOP-A"), e.source_line(src, "# LOOP-B")
    with e.Workdir("py-lines") as w:
        res, _ = pylib.collect(w, "res", python, "lines.py", [75])

        hl = pylib.rows(res, "-view", "hotspots", "-group-by", "source-line")
        by_line = {}
        for r in hl:
            if r["Source File"] == src and r["Source Line"]:
                by_line[int(r["Source Line"])] = pylib.secs(r)
        mine = sum(by_line.values())
        allt = sum(pylib.secs(r) for r in hl)
        print("lines.py by line: %s (all %.3f s)" % (sorted(by_line.items()), allt))
        e.check(by_line.get(a, 0) + by_line.get(b, 0) >= 0.9 * mine and mine >= 0.8 * allt,
                "lines %d and %d hold the time of lines.py, which holds the run" % (a, b))
        sa, sb = pylib.shares([by_line.get(a, 0), by_line.get(b, 0)])
        e.check(abs(sa - 75) <= TOL, "hotspots -group-by source-line: LOOP-A %.1f%% (75 +- 5)"
                % sa)

        sv = pylib.rows(res, "-view", "source", "-source-object", "function=two_loops")
        sl = {int(r["Line"]): pylib.secs(r) for r in sv if r["Line"]}
        s2a, _ = pylib.shares([sl.get(a, 0), sl.get(b, 0)])
        e.check(abs(s2a - 75) <= TOL and any(src.endswith(r.get("Source File", "")) for r in sv),
                "source view of two_loops: LOOP-A %.1f%% (75 +- 5)" % s2a)
        e.check(any("LOOP-A" in r["Source"] for r in sv if r["Line"] and int(r["Line"]) == a),
                "the source view shows the text of lines.py")

        db = pylib.Db(res)
        na = nb = n = 0
        for _th, sid, count, _w, _t in db.samples:
            py = db.python_frames(sid)
            if py and py[-1]["name"] == "two_loops":
                n += count
                na += count if py[-1]["frame_line"] == a else 0
                nb += count if py[-1]["frame_line"] == b else 0
        e.check(n >= 100 and na + nb >= 0.95 * n,
                "database: %d of %d two_loops samples on the loop lines" % (na + nb, n))
        s3a, _ = pylib.shares([na, nb])
        e.check(abs(s3a - 75) <= TOL, "database: LOOP-A %.1f%% of the samples (75 +- 5)" % s3a)


if __name__ == "__main__":
    main()
