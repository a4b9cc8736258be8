#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Issue 10, item 11: stacks cut at stack-depth are marked, never cut silently.
cpu-split burns 60/30/10 in three leaf functions under a 20-level call chain (26 frames to
_start). Collected with -knob stack-depth=8, every sample's stack is cut: each is stored
under one root "[truncated stack]" (the top-down view's only child of Total, the end of every
bottom-up path, the start of every folded call stack), counted in meta.samples_truncated,
in pfinalize's summary and in preport's with the knob to use; the known split still holds.
With the default depth nothing is cut and nothing is marked. The program's stdout and exit
code are those of a run without the collector."""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2elib as e  # noqa: E402
from e2elib import preport, rows  # noqa: E402

MARK = "[truncated stack]"
ROUNDS = 4
SHARES = {"work_sixty": 0.6, "work_thirty": 0.3, "work_ten": 0.1}


ARGV = [e.prog("cpu-split"), ROUNDS, 20]
OUT = "rounds=%d\n" % ROUNDS  # the program's output, as without the collector

with e.Workdir("truncated") as w:
    res = e.collect(w, "depth-8", ARGV, options=["-knob", "stack-depth=8"],
                    finalization="full", quiet=False, stdout=OUT)
    total, cut = [int(e.db_rows(res, "SELECT value FROM meta WHERE key = ?", (k,))[0][0])
                  for k in ("samples_total", "samples_truncated")]
    # All but the agent's own, if any (a module scan: a root of its own, never cut).
    own = e.db_rows(res, "SELECT COALESCE(SUM(s.count), 0) FROM samples s "
                    "JOIN metrics m ON m.id = s.metric_id AND m.name = 'CPU Time' "
                    "JOIN stacks k ON k.id = s.stack_id JOIN frames fr ON fr.id = k.frame_id "
                    "JOIN functions f ON f.id = fr.function_id "
                    "WHERE k.parent_id IS NULL AND f.name = '[pcollect agent]'")[0][0]
    e.check(total > 0 and cut == total - own,
            "depth 8: every sample is counted as cut (%d of %d, %d the agent's own)"
            % (cut, total, own))
    tops = e.db_rows(res, "SELECT DISTINCT f.name FROM stacks st JOIN frames fr ON "
                          "fr.id = st.frame_id JOIN functions f ON f.id = fr.function_id "
                          "WHERE st.parent_id IS NULL")
    e.check(tops == [(MARK,)], "depth 8: the one root of the stacks is %s (%s)" % (MARK, tops))
    e.check("truncated: %d samples (100.0%%) have stacks cut at 8 frames (stack-depth)" % total
            in res.stderr and "-knob stack-depth=N" in res.stderr,
            "depth 8: pfinalize's summary counts them and names the knob: %s"
            % [l for l in res.stderr.splitlines() if "truncated" in l])

    summary = preport("-r", res).stdout
    e.check(re.search(r"Samples With Truncated Stacks: +%d \(100\.0%%\)" % total, summary) and
            "-knob stack-depth=N" in summary,
            "depth 8: preport's summary counts them and names the knob: %s"
            % [l for l in summary.splitlines() if "runcated" in l])
    td = rows(res, "-view", "top-down", "-threshold", "0")
    first = [x for x in td if x["Depth"] == "1"]
    e.check([x["Function Stack"] for x in first] == [MARK],
            "top-down: the only child of Total is %s (%s)"
            % (MARK, [x["Function Stack"] for x in first]))
    cs = rows(res, "-view", "callstacks", "-threshold", "0")
    e.check(cs and all(x["Call Stack"].startswith(MARK + ";") for x in cs if x["Call Stack"]),
            "callstacks: every folded stack starts with %s" % MARK)
    bu = rows(res, "-view", "bottom-up", "-threshold", "0")
    ends, leaf = {}, None
    for x in bu:
        d = int(x["Depth"])
        if d == 0:
            leaf = x["Function Stack"]
        ends.setdefault(leaf, set()).add(x["Function Stack"])
    e.check(all(MARK in ends[f] for f in SHARES),
            "bottom-up: each hotspot's callers end in %s" % MARK)
    hs = rows(res, "-view", "hotspots", "-threshold", "0")
    self_ns = {x["Function"]: float(x["CPU Time:Self"]) * 1e9 for x in hs}
    work = sum(self_ns.get(f, 0) for f in SHARES)
    stats = e.db_sampled(res)
    for f, share in SHARES.items():
        e.check_share(stats, self_ns.get(f, 0) / work, share, "depth 8: %s" % f,
                      stretches=ROUNDS)

    res = e.collect(w, "default", ARGV, finalization="full", quiet=False, stdout=OUT)
    cut = int(e.db_rows(res, "SELECT value FROM meta WHERE key = 'samples_truncated'")[0][0])
    names = {n for (n,) in e.db_rows(res, "SELECT name FROM functions")}
    e.check(cut == 0 and MARK not in names and "truncated:" not in res.stderr,
            "default depth: nothing cut, nothing marked (%d)" % cut)
    summary = preport("-r", res).stdout
    e.check(re.search(r"Samples With Truncated Stacks: +0 \(0\.0%\)\n", summary) and
            "stack-depth" not in summary,
            "default depth: preport's summary says 0 and gives no advice")
    td = rows(res, "-view", "top-down", "-threshold", "0")
    e.check([x["Function Stack"] for x in td if x["Depth"] == "1"] == ["main"],
            "default depth: main is the root of the user's tree")
