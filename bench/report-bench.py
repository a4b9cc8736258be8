#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Time every preport view on a synthetic result of 1M samples and 100k distinct stacks.

Usage: bench/report-bench.py [BUILD_DIR] [--stacks N] [--samples N] [--runs N] [--worst]
                             [--keep DIR] [--baseline PREPORT] [--baseline-schema N]
The database follows docs/schema.md (tests/e2e/report_synth.py writes it from
finalizer/schema.sql). Each view runs --runs times; the median wall and CPU times are printed
beside the budget (200 ms) and beside the reference: the self-time-per-function SQL query of
docs/schema.md run by sqlite3 alone. --baseline runs another preport binary (or build
directory) on the same views, alternating with this one run by run, and prints its medians
and the ratios; a baseline older than metrics reads schema 1 only, so it gets the same result
written in schema 1 (--baseline-schema 1, the default; 2 for a baseline that reads schema 2).
"""
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "e2e"))
import report_synth  # noqa: E402

sys.path.insert(0, HERE)
import benchlib  # noqa: E402

VIEWS = [
    ("summary", []),
    ("hotspots", []),
    ("hotspots", ["-group-by", "thread,function"]),
    ("hotspots", ["-group-by", "source-line"]),
    ("top-down", []),
    ("bottom-up", []),
    ("caller-callee", []),
    ("caller-callee", ["-function", "fn_7"]),
    ("callstacks", ["-limit", "50"]),
    ("source", ["-source-object", "function=fn_7"]),
    ("hotspots", ["-format", "csv"]),
    ("top-down", ["-inline-mode", "off", "-call-stack-mode", "all"]),
    ("hotspots", ["-time-filter", "10:60"]),
]

SELF_SQL = """SELECT f.name, SUM(s.value) / 1e9 AS self_s
FROM samples s JOIN metrics m ON m.id = s.metric_id AND m.name = 'CPU Time'
JOIN stacks st ON st.id = s.stack_id
JOIN frames fr ON fr.id = st.frame_id JOIN functions f ON f.id = fr.function_id
GROUP BY f.id ORDER BY self_s DESC LIMIT 10"""


def timed(fn, runs):
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def timed_cpu(argvs, runs):
    """Median wall and CPU (user + sys, from wait4's rusage: microseconds) seconds of each
    command, run in turns."""
    walls, cpus = [[] for _ in argvs], [[] for _ in argvs]
    for _ in range(runs):
        for i, argv in enumerate(argvs):
            wall, cpu = benchlib.run(argv, "report-bench")
            walls[i].append(wall)
            cpus[i].append(cpu)
    return [(statistics.median(w), statistics.median(c)) for w, c in zip(walls, cpus)]


def main():
    ap = benchlib.synth_parser("reuse or keep the result directory here")
    ap.add_argument("--worst", action="store_true",
                    help="every frame of every stack random (about 15 tree nodes per stack)")
    ap.add_argument("--baseline", help="another preport (binary or build directory) to compare")
    ap.add_argument("--baseline-schema", type=int, default=1, choices=[1, 2],
                    help="the database schema the baseline reads (default 1)")
    a = ap.parse_args()
    preport = os.path.join(a.build, "report", "preport")
    base = a.baseline
    if base and os.path.isdir(base):
        base = os.path.join(base, "report", "preport")
    res = a.keep or tempfile.mkdtemp(prefix="report-bench.")
    db = os.path.join(res, "result.db")
    if not os.path.exists(db):
        t0 = time.perf_counter()
        report_synth.large(res, a.stacks, a.samples, worst=a.worst)
        print("generated %s in %.1f s" % (db, time.perf_counter() - t0))
    base_res = res
    if base and a.baseline_schema != 2:
        base_res = res + ".schema%d" % a.baseline_schema
        if not os.path.exists(os.path.join(base_res, "result.db")):
            report_synth.large(base_res, a.stacks, a.samples, worst=a.worst,
                               schema=a.baseline_schema)
    con = sqlite3.connect(db)
    nodes = con.execute("SELECT count(*) FROM stacks").fetchone()[0]
    rows = con.execute("SELECT count(*) FROM samples").fetchone()[0]
    tl = con.execute("SELECT count(*) FROM timeline").fetchone()[0]
    print("result: %d stack nodes, %d sample rows, %d timeline samples, %.0f MB" %
          (nodes, rows, tl, os.path.getsize(db) / 1e6))
    ref = timed(lambda: sqlite3.connect(db).execute(SELF_SQL).fetchall(), a.runs)
    print("reference: sqlite3 self-time query of docs/schema.md: %.0f ms" % (ref * 1000))
    print("%-46s %8s %8s %7s %7s" % ("view", "wall ms", "CPU ms", "budget", "vs SQL") +
          ("  %8s %8s %8s %8s" % ("base ms", "base CPU", "wall x", "CPU x") if base else ""))
    worst = 0
    for view, extra in VIEWS:
        argvs = [[p, "-r", r, "-view", view, "-q"] + extra
                 for p, r in [(preport, res), (base, base_res)] if p]
        for argv in argvs:
            cp = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                text=True)
            if cp.returncode:
                print("FAILED: %s\n%s" % (" ".join(argv), cp.stderr))
                return 1
        times = timed_cpu(argvs, a.runs)
        t, cpu = times[0]
        worst = max(worst, t)
        line = "%-46s %8.0f %8.0f %7s %6.2fx" % (" ".join([view] + extra)[:46], t * 1000,
                                                 cpu * 1000, "ok" if t < 0.2 else "OVER",
                                                 t / ref)
        if base:
            line += "  %8.0f %8.0f %7.2fx %7.2fx" % (times[1][0] * 1000, times[1][1] * 1000,
                                                   t / times[1][0], cpu / times[1][1])
        print(line)
    print("slowest view: %.0f ms wall (budget 200 ms); load average %.2f" %
          (worst * 1000, os.getloadavg()[0]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
