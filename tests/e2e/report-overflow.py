#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Issue 10: a forged or huge result.db never overflows a sum in preport.
The known three-metric result (report_synth.known3) with every sample's and timeline row's
value and count set near INT64_MAX, and a copy with them near INT64_MIN: every view (with
-group-by, -recursion-mode collapse, -time-filter, -threshold 0), and the difference of the
two, answers without a crash; sums saturate (common/sat.h), so no share passes 100% on the
huge result. Issue 22: every export of both (speedscope's sums, the HTML page's common
divisor of INT64_MIN), and the exports of a result whose samples all weigh 0 or that a filter
empties (speedscope sorted no array). In the sanitizer build (build-asan/) UBSan fails the
test on any signed overflow or NULL given to qsort (e2elib)."""
import csv
import io
import os
import sqlite3
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2elib  # noqa: E402
import report_synth  # noqa: E402
PREPORT = e2elib.tool("preport")

BIG = (1 << 63) - 1000
EXPORTS = ["speedscope", "html", "callgrind", "folded", "chrome", "pstats", "firefox"]
VIEWS = [
    ["-view", "summary"],
    ["-view", "hotspots", "-threshold", "0"],
    ["-view", "hotspots", "-group-by", "thread,function"],
    ["-view", "hotspots", "-group-by", "source-line"],
    ["-view", "hotspots", "-time-filter", "0:"],
    ["-view", "top-down", "-threshold", "0"],
    ["-view", "top-down", "-group-by", "thread", "-recursion-mode", "collapse"],
    ["-view", "bottom-up", "-threshold", "0"],
    ["-view", "caller-callee", "-threshold", "0"],
    ["-view", "caller-callee", "-function", "rec", "-recursion-mode", "collapse"],
    ["-view", "callstacks", "-threshold", "0"],
    ["-view", "source", "-source-object", "function=a"],
]


def forge(path, value):
    con = sqlite3.connect(path)
    con.execute("UPDATE samples SET value = ?, count = ?", (value, abs(value)))
    con.execute("UPDATE timeline SET value = ?", (value,))
    con.execute("UPDATE threads SET cpu_ns = ?, time_ns = ?", (abs(value), abs(value)))
    con.commit()
    con.close()


def percents(out):
    """Every percentage column of a CSV report, as floats."""
    got = []
    for row in csv.DictReader(io.StringIO(out)):
        for k, v in row.items():
            if k and (k.endswith("%") or k == "Percent") and v not in ("", None):
                got.append(float(v))
    return got


with e2elib.Workdir("report-overflow") as w:
    results = {}
    for tag, value in (("huge", BIG), ("negative", -BIG)):
        res = w.join(tag)
        report_synth.known3(res)
        forge(os.path.join(res, "result.db"), value)
        results[tag] = res
    for tag, res in results.items():
        for view in VIEWS:
            cp = e2elib.run([PREPORT, "-r", res, "-format", "csv"] + view)
            if tag == "huge":
                pct = percents(cp.stdout)
                e2elib.check(cp.returncode == 0 and all(0 <= p <= 100.0 for p in pct),
                             "%s %s: answers, no share over 100%% (%d shares)"
                             % (tag, " ".join(view), len(pct)))
            else:
                e2elib.check(cp.returncode in (0, 1) and "BUG" not in cp.stderr,
                             "%s %s: answers or refuses (%d)" % (tag, " ".join(view),
                                                               cp.returncode))
    for view in ("hotspots", "top-down", "bottom-up", "caller-callee"):
        cp = e2elib.run([PREPORT, "-r", results["negative"], "-r", results["huge"], "-view",
                         view, "-format", "csv", "-threshold", "0"])
        e2elib.check(cp.returncode in (0, 1), "difference %s of the two answers (%d)"
                     % (view, cp.returncode))
    for tag, res in results.items():
        for fmt in EXPORTS:
            out = os.path.join(w.path, "%s.%s" % (tag, fmt))
            cp = e2elib.run([PREPORT, "-r", res, "-format", fmt, "-report-output", out])
            e2elib.check(cp.returncode in (0, 1) and "BUG" not in cp.stderr,
                         "%s -format %s: answers or refuses (%d)" % (tag, fmt, cp.returncode))
    # Samples that weigh nothing: no entry to sort (qsort_r got NULL).
    zero = w.join("zero")
    report_synth.known3(zero)
    con = sqlite3.connect(os.path.join(zero, "result.db"))
    con.execute("UPDATE samples SET value = 0")
    con.commit()
    con.close()
    for res, extra in ((zero, []), (results["huge"], ["-filter", "thread=999999"]),
                       (results["huge"], ["-time-filter", "1000000:"])):
        for fmt in EXPORTS:
            out = w.join("empty." + fmt)
            cp = e2elib.run([PREPORT, "-r", res, "-format", fmt, "-report-output", out] + extra)
            e2elib.check(cp.returncode in (0, 1, 2) and "BUG" not in cp.stderr,
                         "%s %s -format %s: answers or refuses (%d)"
                         % (os.path.basename(res), " ".join(extra), fmt, cp.returncode))
