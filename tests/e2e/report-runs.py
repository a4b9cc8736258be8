#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Issue 26, item 3: preport -r PATTERN reads the runs the pattern matches as one result.

Known answer: runs/r1..r3 are the known synthetic result (report_synth.KNOWN) at 1, 2 and 3
times its weights, so every figure of the merged result is 6 times the known one, exactly,
and each run's (-group-by run, -filter run=) its own multiple; a file among them is left out;
a pattern that matches nothing is a usage error (exit 2) naming the pattern; two -r compare
sets of runs. Then two real runs of tests/progs/report-split (60/30/10, output and exit
code as without the collector): the merged figures are the sums of the runs', to the ns,
and the split stays 60/30/10."""
import csv
import io
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2elib  # noqa: E402
import report_synth as synth  # noqa: E402
from e2elib import by, ms, ns, preport, rows  # noqa: E402

K = synth.KNOWN


def synthetic(w):
    runs = w.join("runs")
    for k in (1, 2, 3):
        synth.known(os.path.join(runs, "r%d" % k), scale=k)
    with open(os.path.join(runs, "notes.txt"), "w") as f:
        f.write("not a result\n")
    pat = os.path.join(runs, "*")

    hs = rows(pat, "-view", "hotspots", "-threshold", "0")
    got = by(hs, "Function", "CPU Time:Self")
    want = {f: 6 * v for f, v in K["self"].items()}
    e2elib.check(all(got.get(f) == v for f, v in want.items()),
                 "merged self times are 6x the known ones: %s, want %s" % (got, want))
    e2elib.check(sum(got.values()) == 6 * K["total"], "merged total %d ms, want %d"
                 % (sum(got.values()), 6 * K["total"]))

    g = rows(pat, "-view", "hotspots", "-group-by", "run,function", "-threshold", "0")
    per = {(os.path.basename(r["Run"]), r["Function"]): ms(r["CPU Time:Self"]) for r in g}
    for k in (1, 2, 3):
        for f, v in K["self"].items():
            e2elib.check(per.get(("r%d" % k, f)) == k * v, "-group-by run: r%d %s %s ms, want "
                         "%d" % (k, f, per.get(("r%d" % k, f)), k * v))

    for k in (1, 2, 3):
        only = by(rows(pat, "-view", "hotspots", "-filter", "run=r%d" % k), "Function",
                  "CPU Time:Self")
        e2elib.check(sum(only.values()) == k * K["total"], "-filter run=r%d: %d ms, want %d"
                     % (k, sum(only.values()), k * K["total"]))
    rest = by(rows(pat, "-view", "hotspots", "-filter", "run!=r3"), "Function", "CPU Time:Self")
    e2elib.check(sum(rest.values()) == 3 * K["total"], "-filter run!=r3 keeps r1 and r2")

    td = rows(pat, "-view", "top-down", "-group-by", "run")
    tops = {os.path.basename(r["Function Stack"]): ms(r["CPU Time:Total"])
            for r in td if r["Group"] == "run"}
    e2elib.check(tops == {"r1": 1000, "r2": 2000, "r3": 3000},
                 "top-down -group-by run: a tree per run (%s)" % tops)

    s = preport("-r", pat).stdout
    e2elib.check(e2elib.summary_value(s, "CPU Time") == "6.000s" and
                 e2elib.summary_value(s, "Processes") == "3",
                 "summary of the runs: CPU Time 6.000s over 3 processes\n" + s)

    cp = preport("-r", os.path.join(runs, "r1"), "-r", os.path.join(runs, "r[23]"), "-view",
                 "hotspots", "-format", "csv")
    diff = {r["Function"]: ms(r["CPU Time:Self:Difference"]) for r in
            csv.DictReader(io.StringIO(cp.stdout))}
    e2elib.check(diff.get("a") == 2000 - 400 and diff.get("b") == 1500 - 300,
                 "-r r1 -r 'r[23]' compares one run with two: %s" % diff)

    db = os.path.join(runs, "r2", "result.db")
    cp = preport("-r", pat, "-format", "html", "-report-output", db, code=2)
    e2elib.check("will not write the report to '%s'" % db in cp.stderr,
                 "-report-output never overwrites a file of a run of the pattern: " + cp.stderr)

    none = os.path.join(runs, "nothing-*")
    cp = preport("-r", none, code=2)
    e2elib.check("no result matches '%s'" % none in cp.stderr,
                 "a pattern that matches nothing is a usage error naming it: " + cp.stderr)
    cp = preport("-r", os.path.join(runs, "*.txt"), code=2)
    e2elib.check("no result matches" in cp.stderr and "left out" in cp.stderr,
                 "a pattern that matches only other files: " + cp.stderr)


def real(w):
    prog = e2elib.prog("report-split")
    argv = [prog, "x", "40"]  # 5 rounds of 40 ms: 0.2 s of CPU
    os.makedirs(w.join("real"))
    for k in (1, 2):
        # report-split prints nothing and exits 0, as alone
        e2elib.collect(w, os.path.join("real", "r%d" % k), argv, interval=2, stdout="",
                       finalize=True)
    pat = w.join("real", "r*")
    merged = {r["Function"]: ns(r["CPU Time:Self"]) for r in
              rows(pat, "-view", "hotspots", "-threshold", "0")}
    sums = {}
    for k in (1, 2):
        one = rows(w.join("real", "r%d" % k), "-view", "hotspots", "-threshold", "0")
        for r in one:
            sums[r["Function"]] = sums.get(r["Function"], 0) + ns(r["CPU Time:Self"])
        alone = {r["Function"]: ns(r["CPU Time:Self"]) for r in one}
        only = {r["Function"]: ns(r["CPU Time:Self"]) for r in
                rows(pat, "-view", "hotspots", "-threshold", "0", "-filter", "run=r%d" % k)}
        e2elib.check(only == alone, "-filter run=r%d is run r%d alone: %s vs %s"
                     % (k, k, only, alone))
    e2elib.check(merged == sums, "merged self times are the runs' sums, exactly: %s vs %s"
                 % (merged, sums))
    # The split on the samples with each function on the stack (burn.h's clock reads too).
    under = {r["Function"]: ns(r["CPU Time:Total"]) for r in
             rows(pat, "-view", "hotspots", "-threshold", "0")}
    total = sum(under[f] for f in ("heavy", "medium", "light"))
    weights = []
    for k in (1, 2):
        weights += [x for (x,) in e2elib.db_rows(
            w.join("real", "r%d" % k), "SELECT value / %s FROM timeline WHERE metric_id = %s"
            % (e2elib.INTERVAL_NS, e2elib.CPU_METRIC))]
    stats = e2elib.Sampled(weights, 2000000, 2)
    for f, share in (("heavy", 0.6), ("medium", 0.3), ("light", 0.1)):
        e2elib.check_share(stats, under[f] / total, share, "merged runs: " + f, stretches=10)


def main():
    with e2elib.Workdir("report-runs") as w:
        synthetic(w)
        real(w)
    print("report-runs: ok")


if __name__ == "__main__":
    main()
