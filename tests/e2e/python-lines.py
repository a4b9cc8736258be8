#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Python line attribution: two_loops runs LOOP-A three times as often as LOOP-B (one-line
loops, same body), on one interpreter (the argument). Lines must split 75/25 in hotspots
grouped by source line, in the source view and in the database, within the tolerance of
e2elib.Sampled (each loop runs once a round: ROUNDS stretches). native_line's LOOP-C calls
zlib (native code) as long as LOOP-B runs: grouped by source line, the native time counts in
the Python line that called it (issue 24: 60/20/20 of the three lines, at most 5% of the
run [unknown]), and -call-stack-mode all gives the native frames their own lines. The three
lines' shares, and LOOP-A's of two_loops, are judged against the CPU time the program
measured each line take (a zlib call can overrun LOOP-C's budget on a loaded machine: once
110 ms over its 160 ms, most of it in brk), and that must be near 60/20/20."""
import e2elib as e
import pylib

ROUNDS = 4  # tests/progs/python/lines.py
UNIT_MS = 30  # LOOP-B's CPU time a round (tests/progs/python/lines.py)


def main():
    python = pylib.interpreter(pylib.label_arg())
    src = pylib.program("lines.py")
    a, b = e.source_line(src, "# LOOP-A"), e.source_line(src, "# LOOP-B")
    c = e.source_line(src, "# LOOP-C")
    with e.Workdir("py-lines") as w:
        res = e.collect(w, "res", [python, src, UNIT_MS], interval=1, finalize=True)

        hl = e.rows(res, "-view", "hotspots", "-group-by", "source-line")
        by_line = {}
        for r in hl:
            if r["Source File"] == src and r["Source Line"]:
                by_line[int(r["Source Line"])] = e.secs(r)
        mine = sum(by_line.values())
        allt = sum(e.secs(r) for r in hl)
        print("lines.py by line: %s (all %.3f s)" % (sorted(by_line.items()), allt))
        abc = [by_line.get(x, 0) for x in (a, b, c)]
        e.check(sum(abc) >= 0.9 * mine and mine >= 0.8 * allt,
                "lines %d, %d and %d hold the time of lines.py, which holds the run" % (a, b, c))
        stats = e.db_sampled(res)
        spent = [int(v) for v in res.stdout.split("\n")[1].split()]
        print("the program measured LOOP-A, -B and -C: %s s" % [v / 1e9 for v in spent])
        e.check(all(abs(v / sum(spent) - want) < 0.15 for v, want in zip(spent, (0.6, 0.2, 0.2))),
                "the program's lines took about 60/20/20 of their CPU time")
        a_of_ab = spent[0] / (spent[0] + spent[1])  # 0.75 by its budgets
        sa, _sb = e.shares(abc[:2])
        e.check_share(stats, sa / 100, a_of_ab, "hotspots -group-by source-line: LOOP-A",
                      stretches=ROUNDS)
        for x, n, v in zip(abc, "ABC", spent):
            e.check_share(stats, x / sum(abc), v / sum(spent), "hotspots -group-by source-line: "
                          "LOOP-%s of the three lines (LOOP-C: zlib's time under it)" % n,
                          stretches=ROUNDS)
        unknown = sum(e.secs(r) for r in hl if r["Source File"] == "[unknown]")
        e.check(unknown <= 0.05 * allt, "[unknown] holds %.1f%% of the run (at most 5%%: only "
                "samples without Python frames, starting the interpreter)" % (100 * unknown / allt))
        native = e.rows(res, "-view", "hotspots", "-group-by", "source-line", "-call-stack-mode",
                        "all")
        own_c = sum(e.secs(r) for r in native if r["Source File"] == src and r["Source Line"]
                    and int(r["Source Line"]) == c)
        e.check(own_c < 0.3 * abc[2], "-call-stack-mode all: LOOP-C's own line keeps %.3f s of "
                "its %.3f s, the native frames the rest on their own lines" % (own_c, abc[2]))

        sv = e.rows(res, "-view", "source", "-source-object", "function=two_loops")
        sl = {int(r["Line"]): e.secs(r) for r in sv if r["Line"]}
        s2a, _ = e.shares([sl.get(a, 0), sl.get(b, 0)])
        e.check(any(src.endswith(r.get("Source File", "")) for r in sv),
                "the source view is of lines.py")
        e.check_share(stats, s2a / 100, a_of_ab, "source view of two_loops: LOOP-A",
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
        e.check_share(stats, s3a / 100, a_of_ab, "database: LOOP-A", stretches=ROUNDS)


if __name__ == "__main__":
    main()
