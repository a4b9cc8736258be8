#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""preport on real collections: the 60/30/10 programs profiled by pcollect, finalized by preport
itself; views agree with the known split and with each other; the source view finds the burning
lines; a difference report sees medium's work doubled. The known answers are CPU times
(report-split: 5 rounds of 0.31 s, heavy/medium/light 6:3:1 of each); tolerances from the
samples (e2elib.Sampled), which hold for any length of run."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2elib  # noqa: E402
from e2elib import preport, rows  # noqa: E402

# CPU seconds of a round of report-split (tests/progs/report-split.c; its default 0.62):
# half, as the tolerances come from the samples
ROUND_S = 0.31
ROUNDS = 5
SPLIT = [e2elib.prog("report-split"), "once", str(int(ROUND_S * 1000))]
TWICE = [e2elib.prog("report-split"), "twice", str(int(ROUND_S * 1000))]


def split(res, names, col="CPU Time:Self"):
    """col (Self) per function (s) and the shares of names among themselves (percent)."""
    hs = {r["Function"]: float(r[col]) for r in rows(res, "-view", "hotspots")}
    total = sum(hs.get(n, 0) for n in names)
    if total <= 0:
        e2elib.fail("no time in %s: %s" % (names, hs))
    return hs, [100 * hs.get(n, 0) / total for n in names]


def views_agree(res, names, expect, stretches):
    # The known shares are of each function's budget, its clock reads included: its Total.
    total, shares = split(res, names, "CPU Time:Total")
    print("shares %s: %s" % (names, ["%.1f" % s for s in shares]))
    stats = e2elib.db_sampled(res)
    for n, share in zip(names, expect):
        e2elib.check_share(stats, total.get(n, 0) * 1e9 / stats.total_ns, share / 100.0,
                           "hotspots: " + n, stretches=stretches)
    hs, _shares = split(res, names)
    allself = sum(float(r["CPU Time:Self"]) for r in rows(res, "-view", "hotspots"))
    td = rows(res, "-view", "top-down", "-threshold", "0")
    e2elib.check(abs(float(td[0]["CPU Time:Total"]) - allself) < 0.0015,
                 "top-down root equals the sum of self")
    # top-down: the total of each function's nodes (no recursion among them) equals its self
    tdself = {}
    for r in td[1:]:
        tdself[r["Function Stack"]] = tdself.get(r["Function Stack"], 0) + float(r["CPU Time:Self"])
    e2elib.check(all(abs(tdself.get(n, 0) - hs[n]) < 0.0015 * 20 for n in names),
                 "top-down self time agrees with hotspots")
    bu = rows(res, "-view", "bottom-up", "-threshold", "0")
    buroots = {r["Function Stack"]: float(r["CPU Time:Self"]) for r in bu if r["Depth"] == "0"}
    e2elib.check(all(abs(buroots.get(n, 0) - hs[n]) < 0.0015 for n in names),
                 "bottom-up hotspots agree with hotspots")
    text = preport("-r", res, "-view", "hotspots").stdout
    for n in names:
        line = [l for l in text.splitlines() if l.split()[:1] == [n]][0]
        e2elib.check("%.3fs" % hs[n] in line, "text and CSV agree for %s" % n)
    return hs


def main():
    e2elib.tool("pfinalize")
    with e2elib.Workdir("report-real") as w:
        res = e2elib.collect(w, "split", SPLIT)
        e2elib.check(not os.path.exists(os.path.join(res, "result.db")),
                     "the result is not finalized yet")
        cp = preport("-r", res, "-view", "summary")
        e2elib.check(os.path.exists(os.path.join(res, "result.db")) and "CPU Time" in cp.stdout,
                     "preport finalized the result first and printed the summary")
        # The summary's coverage: what the thread measured against what its samples hold.
        summ = {r["Metric"]: r for r in rows(res, "-view", "summary")}
        used = float(summ["CPU Time Measured by Threads"]["Value"])
        sampled = float(summ["CPU Time Sampled"]["Value"])
        cpu = float(summ["CPU Time"]["Value"])
        e2elib.check(used > 0.8 * ROUND_S * ROUNDS and 95 <= sampled <= 101 and
                     abs(cpu - used * sampled / 100) <= 0.01 * used,
                     "summary: CPU Time Sampled %.1f%% of %.3f s measured, CPU Time %.3f s"
                     % (sampled, used, cpu))
        names = ["heavy", "medium", "light"]
        hs = views_agree(res, names, [60, 30, 10], ROUNDS)

        # the source view puts each function's time on its burning line
        src_path = os.path.join(e2elib.SOURCE, "tests", "progs", "report-split.c")
        with open(src_path) as f:
            marks = {l.split("burn:")[1].split()[0]: i + 1 for i, l in enumerate(f)
                     if "/* burn:" in l}
        for n in names:
            lines = rows(res, "-view", "source", "-source-object", "function=" + n)
            selfs = {int(r["Line"]): float(r["CPU Time:Self"] or 0) for r in lines}
            on = selfs.get(marks[n], 0)
            e2elib.check(on >= 0.9 * hs[n] and "burn:" + n in
                         [r["Source"] for r in lines if int(r["Line"]) == marks[n]][0],
                         "source view: %.3fs of %s's %.3fs on line %d" % (on, n, hs[n], marks[n]))

        # difference report against twice the work in medium
        res2 = e2elib.collect(w, "twice", TWICE)
        d = {r["Function"]: r for r in rows(res, "-r", res2, "-view", "hotspots")}
        # the budgets, clock reads included: each function's Total
        m1 = float(d["medium"]["CPU Time:Total:Result 1"])
        m2 = float(d["medium"]["CPU Time:Total:Result 2"])
        h1 = float(d["heavy"]["CPU Time:Total:Result 1"])
        h2 = float(d["heavy"]["CPU Time:Total:Result 2"])
        print("medium %.3f -> %.3f, heavy %.3f -> %.3f" % (m1, m2, h1, h2))
        # Each function's budget is read on a clock that moves at ticks: a tick a round.
        s1, s2 = e2elib.db_sampled(res), e2elib.db_sampled(res2)
        tick = ROUNDS * e2elib.TICK_NS
        e2elib.check_time(s2, m2 * 1e9, 2 * 0.3 * ROUND_S * ROUNDS * 1e9,
                          "difference report: medium doubled", ROUNDS, tick)
        e2elib.check_time(s1, m1 * 1e9, 0.3 * ROUND_S * ROUNDS * 1e9,
                          "difference report: medium before", ROUNDS, tick)
        e2elib.check_time(s2, h2 * 1e9, 0.6 * ROUND_S * ROUNDS * 1e9,
                          "difference report: heavy unchanged", ROUNDS, tick)
        e2elib.check(abs(float(d["medium"]["CPU Time:Total:Difference"]) - (m2 - m1)) < 0.0015,
                     "difference column is Result 2 - Result 1")
        td = rows(res, "-r", res2, "-view", "top-down")
        e2elib.check(td[0]["Function Stack"] == "Total" and
                     float(td[0]["CPU Time:Total:Difference"]) > 0.5 * (m2 - m1),
                     "top-down difference report")

        # the collector's 60/30/10 program: 5 rounds of 20 ms units (1 s; its default 40 ms)
        res3 = e2elib.collect(w, "cpu-split", [e2elib.prog("cpu-split"), "5", "20"])
        views_agree(res3, ["work_sixty", "work_thirty", "work_ten"], [60, 30, 10], 5)


if __name__ == "__main__":
    main()
