#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""preport on a synthetic result with three metrics whose every number is known
(report_synth.KNOWN3: CPU Time, Wait Time, Allocated Bytes): every view in text, CSV and JSON,
-metric, -sort-desc and -threshold by metric, -time-filter, a count and a peak metric, and the
difference reports."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2elib  # noqa: E402
import report_synth as synth  # noqa: E402
from e2elib import (at_terminal, by, json_rows, ms, num, preport, rows,  # noqa: E402
                    text_bytes)

PREPORT = e2elib.tool("preport")

K = synth.KNOWN
K3 = synth.KNOWN3
METRICS = ["CPU Time", "Wait Time", "Allocated Bytes"]


def value(metric, v):
    """A CSV value of metric in the unit KNOWN3 states: ms for times, bytes."""
    return ms(v) if metric != "Allocated Bytes" else int(num(v))


def want_self(metric):
    return K["self"] if metric == "CPU Time" else K3["self"][metric]


def want_total(metric):
    return K["total_by_function"] if metric == "CPU Time" else K3["total"][metric]


def nonzero(d):
    return {k: v for k, v in d.items() if v}


def same_as_csv(res, view, args, csv_rows):
    """JSON carries the CSV's rows, value for value."""
    js = json_rows(res, "-view", view, *args)
    ok = len(js) == len(csv_rows)
    for j, c in zip(js, csv_rows):
        for k, v in c.items():
            jv = j.get(k)
            if jv is None:
                ok &= v == ""
            elif isinstance(jv, str):
                ok &= jv == v
            else:
                ok &= abs(float(jv) - float(v)) < 1e-9
    e2elib.check(ok, "%s %s: JSON rows equal the CSV rows" % (view, " ".join(args)))


def text_cell(metric, v):
    """How text prints a CSV value of metric."""
    return text_bytes(v) if metric == "Allocated Bytes" else v + "s"


def check_views(res):
    # hotspots: self and total of each metric per function, in text, CSV and JSON
    hs = rows(res, "-view", "hotspots")
    for m in METRICS:
        e2elib.check(nonzero(by(hs, "Function", m + ":Self", lambda v: value(m, v))) ==
                     want_self(m), "hotspots: %s self per function" % m)
        e2elib.check(nonzero(by(hs, "Function", m + ":Total", lambda v: value(m, v))) ==
                     want_total(m), "hotspots: %s total per function (recursion once)" % m)
        e2elib.check(round(sum(num(r[m + ":Self %"]) for r in hs)) == 100,
                     "hotspots: %s self percentages sum to 100" % m)
    same_as_csv(res, "hotspots", [], hs)
    text = preport("-r", res, "-view", "hotspots").stdout
    ok = True
    for r in hs:
        line = [l for l in text.splitlines() if l.split()[:1] == [r["Function"]]][0]
        for m in METRICS:
            ok &= text_cell(m, r[m + ":Self"]) in line and text_cell(m, r[m + ":Total"]) in line
    e2elib.check(ok, "hotspots text: times in s, bytes in B/KiB/MiB, as the CSV says")
    e2elib.check("3.0 MiB" in text and "2.500s" in text and "4.0 KiB" in text,
                 "hotspots text: 3.0 MiB, 2.500s, 4.0 KiB where expected")

    # top-down: the root holds each metric's total; known paths
    td = rows(res, "-view", "top-down", "-threshold", "0")
    e2elib.check(all(value(m, td[0][m + ":Total"]) == K3["totals"][m] for m in METRICS),
                 "top-down: the root's total of each metric")
    paths, stack = {}, []
    for r in td[1:]:
        d = int(r["Depth"])
        stack[d - 1:] = [r["Function Stack"]]
        paths["/".join(stack)] = {m: value(m, r[m + ":Total"]) for m in METRICS}
    e2elib.check(paths["main/work/wait_io"]["Wait Time"] == 2000 and
                 paths["worker/wait_io"]["Wait Time"] == 500 and
                 paths["main/work/a"]["Allocated Bytes"] == 3145728 and
                 paths["main/work/a"]["CPU Time"] == 600 and
                 paths["main/rec/rec/rec"]["Allocated Bytes"] == 4096,
                 "top-down: Wait Time, Allocated Bytes and CPU Time on known paths")
    same_as_csv(res, "top-down", ["-threshold", "0"], td)
    text = preport("-r", res, "-view", "top-down", "-threshold", "0").stdout
    e2elib.check(any("wait_io" in l and "2.000s" in l for l in text.splitlines()),
                 "top-down text: wait_io's 2.000s of Wait Time")

    # bottom-up: each hotspot's self per metric; the paths of wait_io
    bu = rows(res, "-view", "bottom-up", "-threshold", "0")
    roots = [r for r in bu if r["Depth"] == "0"]
    e2elib.check(all(nonzero(by(roots, "Function Stack", m + ":Self",
                                lambda v, m=m: value(m, v))) == want_self(m)
                     for m in METRICS), "bottom-up: hotspots' self of each metric")
    i = [n for n, r in enumerate(bu) if r["Depth"] == "0" and r["Function Stack"] == "wait_io"][0]
    callers = {r["Function Stack"]: ms(r["Wait Time:Self"]) for r in bu[i + 1:i + 4]
               if r["Depth"] == "1"}
    e2elib.check(callers == {"work": 2000, "worker": 500},
                 "bottom-up: wait_io's Wait Time by caller")
    same_as_csv(res, "bottom-up", ["-threshold", "0"], bu)

    # caller-callee
    cc = rows(res, "-view", "caller-callee", "-function", "wait_io")
    e2elib.check({r["Function"]: ms(r["Wait Time:Total"]) for r in cc
                  if r["Relation"] == "caller"} == {"work": 2000, "worker": 500},
                 "caller-callee: callers of wait_io with their Wait Time")
    cc = rows(res, "-view", "caller-callee", "-function", "work")
    e2elib.check({r["Function"]: (ms(r["Wait Time:Total"]), int(r["Allocated Bytes:Total"]))
                  for r in cc if r["Relation"] == "callee"} ==
                 {"a": (0, 3145728), "wait_io": (2000, 0)},
                 "caller-callee: callees of work with Wait Time and Allocated Bytes")
    same_as_csv(res, "caller-callee", ["-function", "work"], cc)

    # callstacks
    cs = rows(res, "-view", "callstacks", "-metric", "Wait Time", "-threshold", "0")
    e2elib.check([(r["Call Stack"], ms(r["Wait Time:Self"]), r["Samples"]) for r in cs] ==
                 [("main;work;wait_io", 2000, "4"), ("worker;wait_io", 500, "1"),
                  ("main;b", 250, "5")],
                 "callstacks by Wait Time: each stack's wait and its events")
    cs = rows(res, "-view", "callstacks", "-threshold", "0")
    e2elib.check(sum(value("Allocated Bytes", r["Allocated Bytes:Self"]) for r in cs) ==
                 K3["totals"]["Allocated Bytes"],
                 "callstacks: Allocated Bytes of the stacks sum to the total")
    same_as_csv(res, "callstacks", ["-threshold", "0"], cs)

    # source
    src = rows(res, "-view", "source", "-source-object", "function=a")
    lines = {r["Line"]: r for r in src}
    e2elib.check(int(lines["31"]["Allocated Bytes:Self"]) == 3145728 and
                 ms(lines["31"]["CPU Time:Self"]) == 400 and
                 ms(lines["33"]["CPU Time:Total"]) == 200,
                 "source: Allocated Bytes and CPU Time per line of a")
    same_as_csv(res, "source", ["-source-object", "function=a"], src)

    # summary
    sm = {(r["Section"], r["Metric"]): (r["Value"], r["Unit"]) for r in
          rows(res, "-view", "summary")}
    e2elib.check(sm[("Time", "CPU Time")] == ("1.000", "s") and
                 sm[("Metrics", "Wait Time")] == ("2.750", "s") and
                 sm[("Metrics", "Allocated Bytes")] == ("3151872", "bytes"),
                 "summary: the total of every metric with its unit")
    e2elib.check(sm[("Top Hotspots", "a")][0] == "0.400",
                 "summary: top hotspots by the main metric")
    sm = {(r["Section"], r["Metric"]): r["Value"] for r in
          rows(res, "-view", "summary", "-sort-desc", "Wait Time")}
    e2elib.check(sm.get(("Top Hotspots", "wait_io")) == "2.500" and
                 ("Top Hotspots", "a") not in sm, "summary: top hotspots by -sort-desc metric")
    text = preport("-r", res).stdout
    e2elib.check("Wait Time:" in text and "3151872 bytes" in text, "summary text: metrics")


def check_selection(res):
    # -metric picks and orders the columns
    hs = rows(res, "-view", "hotspots", "-metric", "Allocated Bytes", "-metric", "wait time")
    cols = [c for c in hs[0] if ":" in c]
    e2elib.check(cols == ["Allocated Bytes:Self", "Allocated Bytes:Self %",
                          "Allocated Bytes:Total", "Allocated Bytes:Total %",
                          "Wait Time:Self", "Wait Time:Self %", "Wait Time:Total",
                          "Wait Time:Total %"], "-metric: those metrics, in that order")
    e2elib.check(hs[0]["Function"] == "a", "-metric: sorted by the first shown metric")
    # the first -metric given sorts even when the main metric (CPU Time) is shown after it
    hs = rows(res, "-view", "hotspots", "-metric", "Wait Time", "-metric", "CPU Time")
    waits = [e2elib.secs(r, "Wait Time:Self") for r in hs]
    e2elib.check(hs[0]["Function"] == "wait_io" and waits == sorted(waits, reverse=True),
                 "-metric 'Wait Time' -metric 'CPU Time': sorted by Wait Time (%s)"
                 % [r["Function"] for r in hs[:3]])
    top = [r["Metric"] for r in rows(res, "-view", "summary", "-metric", "Wait Time",
                                      "-metric", "CPU Time")
           if r["Section"] == "Top Hotspots"]
    e2elib.check(top[:1] == ["wait_io"],
                 "-metric 'Wait Time' -metric 'CPU Time': the summary's top hotspot by Wait "
                 "Time (%s)" % top)
    td = rows(res, "-view", "top-down", "-metric", "Wait Time")
    e2elib.check([r["Function Stack"] for r in td] ==
                 ["Total", "main", "work", "wait_io", "b", "worker", "wait_io"],
                 "-metric Wait Time: top-down shows and keeps only nodes with waits")
    cp = preport("-r", res, "-view", "hotspots", "-metric", "Wiat Time", code=2)
    e2elib.check("did you mean 'Wait Time'" in cp.stderr, "-metric: unknown name, nearest one")

    # -sort-desc by a metric, several spellings; today's spelling still works
    for spec in ["Wait Time", "Wait Time:Self", "wait time:self %"]:
        hs = rows(res, "-view", "hotspots", "-sort-desc", spec)
        e2elib.check([r["Function"] for r in hs][:2] == ["wait_io", "b"],
                     "-sort-desc '%s' in hotspots" % spec)
    hs = rows(res, "-view", "hotspots", "-sort-desc", "CPU Time:Total")
    e2elib.check(hs[0]["Function"] == "main", "-sort-desc 'CPU Time:Total' as before")
    td = rows(res, "-view", "top-down", "-sort-desc", "Allocated Bytes")
    e2elib.check([r["Function Stack"] for r in td[:3]] == ["Total", "main", "work"] and
                 td[3]["Function Stack"] == "a",
                 "-sort-desc 'Allocated Bytes' in top-down: children by its total")
    td = rows(res, "-view", "top-down", "-sort-desc", "Wait Time:Total")
    e2elib.check(td[3]["Function Stack"] == "wait_io", "-sort-desc 'Wait Time:Total' in top-down")
    for view, spec, want in [("bottom-up", "Wait Time:Total", "sorts by a metric's Self only"),
                             ("top-down", "Function", "sorts by a metric"),
                             ("callstacks", "Module", "sorts by a metric"),
                             ("source", "CPU Time", "not sorted")]:
        extra = ["-source-object", "function=a"] if view == "source" else []
        cp = preport("-r", res, "-view", view, "-sort-desc", spec, *extra, code=2)
        e2elib.check(want in cp.stderr, "-sort-desc '%s' refused by %s: %s" %
                     (spec, view, cp.stderr.strip()))

    # -threshold by a metric, and by every shown one
    td = rows(res, "-view", "top-down", "-threshold", "Wait Time:50")
    e2elib.check([r["Function Stack"] for r in td] == ["Total", "main", "work", "wait_io"],
                 "-threshold 'Wait Time:50': nodes with half the waits")
    td = rows(res, "-view", "top-down", "-threshold", "10")
    names = [r["Function Stack"] for r in td]
    e2elib.check("wait_io" in names and "a" in names and "rec" not in names and
                 names.count("wait_io") == 2,
                 "-threshold 10: a node shows when any metric reaches 10% of its total")
    cp = preport("-r", res, "-view", "top-down", "-threshold", "Wait:5", code=2)
    e2elib.check("no metric 'Wait'" in cp.stderr, "-threshold: an unknown metric is refused")

    # -time-filter keeps each metric's events in the window
    tw = rows(res, "-view", "hotspots", "-time-filter", "0:0.5")
    e2elib.check(nonzero(by(tw, "Function", "CPU Time:Self")) == {"a": 400, "helper": 100} and
                 nonzero(by(tw, "Function", "Wait Time:Self")) == {"wait_io": 2000} and
                 nonzero(by(tw, "Function", "Allocated Bytes:Self", lambda v: int(num(v)))) ==
                 {"a": 3145728}, "-time-filter 0:0.5: the events of each metric in it")


def check_extra(w):
    res = synth.known3(w.join("extra"), extra=True)
    hs = rows(res, "-view", "hotspots")
    e2elib.check(nonzero(by(hs, "Function", "Allocations:Self", lambda v: int(num(v)))) ==
                 synth.KNOWN3_EXTRA["Allocations"] and
                 nonzero(by(hs, "Function", "Peak Bytes:Self", lambda v: int(num(v)))) ==
                 synth.KNOWN3_EXTRA["Peak Bytes"], "a count and a peak metric per function")
    text = preport("-r", res, "-view", "hotspots", "-metric", "Allocations", "-metric",
                   "Peak Bytes").stdout
    a = [l for l in text.splitlines() if l.startswith("a ")][0].split()
    e2elib.check(a[1] == "3" and "2.0 MiB" in " ".join(a), "text: a count plain, bytes in MiB")
    tw = preport("-r", res, "-view", "hotspots", "-time-filter", "0:10", "-format", "csv")
    e2elib.check("Peak Bytes" not in tw.stdout.splitlines()[0],
                 "-time-filter leaves a peak metric out")
    js = preport("-r", res, "-view", "hotspots", "-time-filter", "0:10", "-format", "json")
    e2elib.check("'Peak Bytes' is not shown" in js.stdout, "-time-filter says why (a note)")
    cp = preport("-r", res, "-view", "hotspots", "-time-filter", "0:10", "-metric",
                 "Peak Bytes", code=2)
    e2elib.check("aggregates as a peak" in cp.stderr, "-time-filter with -metric of a peak: refused")


def check_diffs(w, res):
    twice = synth.known3(w.join("twice"), scale={"b": 2})
    d = rows(res, "-r", twice, "-view", "hotspots")
    b = [r for r in d if r["Function"] == "b"][0]
    e2elib.check((ms(b["CPU Time:Self:Result 1"]), ms(b["CPU Time:Self:Result 2"]),
                  ms(b["CPU Time:Self:Difference"])) == (300, 600, 300) and
                 ms(b["Wait Time:Self:Difference"]) == 0 and
                 int(b["Allocated Bytes:Total:Result 2"]) == 1024 and d[0]["Function"] == "b",
                 "hotspots difference: each metric of both results")
    d = rows(res, "-r", twice, "-view", "top-down")
    e2elib.check(ms(d[0]["CPU Time:Total:Difference"]) == 300 and
                 ms(d[0]["Wait Time:Total:Result 2"]) == 2750, "top-down difference per metric")
    d = rows(res, "-r", twice, "-view", "bottom-up", "-threshold", "0")
    rb = [n for n, r in enumerate(d) if r["Function Stack"] == "b" and r["Depth"] == "0"][0]
    e2elib.check((ms(d[rb]["CPU Time:Self:Result 1"]), ms(d[rb]["CPU Time:Self:Result 2"]),
                  ms(d[rb]["CPU Time:Self:Difference"])) == (300, 600, 300) and
                 d[rb + 1]["Function Stack"] == "main" and
                 ms(d[rb + 1]["CPU Time:Self:Difference"]) == 300 and
                 ms(d[rb + 1]["Wait Time:Self:Result 1"]) == 250,
                 "bottom-up difference: a hotspot and its caller, per metric")
    d = rows(res, "-r", twice, "-view", "caller-callee", "-function", "b")
    rel = {(r["Relation"], r["Function"]): (ms(r["CPU Time:Total:Result 1"]),
                                            ms(r["CPU Time:Total:Result 2"]),
                                            ms(r["CPU Time:Total:Difference"])) for r in d}
    e2elib.check(rel == {("caller", "main"): (300, 600, 300),
                         ("function", "b"): (300, 600, 300)},
                 "caller-callee difference of b: its row and its caller")
    d = rows(res, "-r", twice, "-view", "caller-callee", "-threshold", "0")
    e2elib.check({r["Function"] for r in d if r["Relation"] == "function"} >=
                 {"main", "work", "a", "b", "wait_io", "worker"},
                 "caller-callee difference: a block per function")
    cp = preport("-r", res, "-r", twice, "-view", "callstacks", code=2)
    e2elib.check("difference of two results" in cp.stderr, "callstacks has no difference")


def check_every_format(w, res):
    """Each view, and each difference, shows the three metrics in text, CSV and JSON."""
    twice = w.join("twice")
    for args in [["-view", "summary"], ["-view", "hotspots"], ["-view", "top-down"],
                 ["-view", "bottom-up"], ["-view", "caller-callee"], ["-view", "callstacks"],
                 ["-view", "source", "-source-object", "file=app.c"],
                 ["-r", twice, "-view", "hotspots"], ["-r", twice, "-view", "top-down"],
                 ["-r", twice, "-view", "bottom-up"], ["-r", twice, "-view", "caller-callee"]]:
        label = " ".join(a for a in args if a != twice)
        csv_rows = rows(res, "-threshold", "0", *args)
        js = json_rows(res, "-threshold", "0", *args)
        text = preport("-r", res, "-threshold", "0", *args).stdout
        if args[1] == "summary":
            have = {r["Metric"] for r in csv_rows}
            ok = all(m in have for m in METRICS) and all(m in text for m in METRICS)
        else:
            ok = all(any(c.startswith(m + ":") for c in csv_rows[0]) and
                     any(c.startswith(m + ":") for c in js[0]) for m in METRICS) and \
                all(m.split()[0] in text.splitlines()[0] + text.splitlines()[1]
                    for m in METRICS)
        e2elib.check(ok and len(js) == len(csv_rows),
                     "%s: every metric in text, CSV and JSON" % label)


def check_terminal(res):
    out = at_terminal([PREPORT, "-r", res, "-view", "top-down"], 80)
    lines = [l for l in out.splitlines() if l]
    e2elib.check(all(len(l) <= 80 for l in lines), "at an 80-column terminal: lines fit")
    e2elib.check(any("3.0 MiB" in l for l in lines) and any("2.000s" in l for l in lines),
                 "at a terminal: every metric's values are there")


def main():
    with e2elib.Workdir("report-metrics") as w:
        res = synth.known3(w.join("r3"))
        check_views(res)
        check_selection(res)
        check_extra(w)
        check_diffs(w, res)
        check_every_format(w, res)
        check_terminal(res)


if __name__ == "__main__":
    main()
