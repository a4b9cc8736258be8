#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Views that do what they are asked, on synthetic results with known numbers: -group-by as
the top levels of top-down, bottom-up and callstacks (or refused), -function in hotspots,
-recursion-mode collapse, names as people type them (short names, ambiguity, -name-style),
options a view does not take, and text that is never cut into a pipe but fits a terminal."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2elib  # noqa: E402
import report_synth as synth  # noqa: E402
from e2elib import at_terminal, by, ms, preport, rows  # noqa: E402
PREPORT = e2elib.tool("preport")

K = synth.KNOWN


def tree_paths(rows_, col="Function Stack", value="CPU Time:Total"):
    """{'a/b/c': value} from a view's rows with Depth."""
    paths, stack = {}, []
    for r in rows_:
        d = int(r["Depth"])
        stack[d:] = [r[col]]
        paths["/".join(stack)] = ms(r[value])
    return paths


def check_groups(res, names):
    td = rows(res, "-view", "top-down", "-group-by", "thread", "-threshold", "0")
    p = tree_paths(td)
    e2elib.check(p.get("Total/app (TID 1001)") == 985 and p.get("Total/worker (TID 1002)") == 15
                 and p.get("Total/app (TID 1001)/main/work/a") == 600 and
                 p.get("Total/worker (TID 1002)/worker/c") == 15 and
                 "Total/main" not in p, "top-down -group-by thread: a call tree per thread")
    e2elib.check({r["Function Stack"]: r["Group"] for r in td if r["Group"]} ==
                 {"app (TID 1001)": "thread", "worker (TID 1002)": "thread"},
                 "top-down -group-by thread: the Group column names the level")
    p = tree_paths(rows(res, "-view", "top-down", "-group-by", "process,thread,function"))
    e2elib.check(p.get("Total/app (PID 1000)") == 1000 and
                 p.get("Total/app (PID 1000)/app (TID 1001)/main") == 980,
                 "top-down -group-by process,thread,function: two levels, then the tree")
    p = tree_paths(rows(names, "-view", "top-down", "-group-by", "module"))
    e2elib.check(p.get("Total/libm.so.6/main/sqrt") == 25 and
                 p.get("Total/[python]/main/Simulation.step") == 7 and
                 p.get("Total/app") == sum(v for _, m, v in synth.NAMES if m == "app"),
                 "top-down -group-by module: the module a sample was taken in")

    bu = rows(res, "-view", "bottom-up", "-group-by", "thread", "-threshold", "0")
    p = tree_paths(bu, value="CPU Time:Self")
    e2elib.check(p.get("app (TID 1001)") == 985 and p.get("app (TID 1001)/a") == 400 and
                 p.get("app (TID 1001)/c") == 30 and p.get("worker (TID 1002)/c") == 15 and
                 p.get("worker (TID 1002)/c/worker") == 15 and
                 p.get("app (TID 1001)/c/main") == 30,
                 "bottom-up -group-by thread: each thread's hotspots and their callers")
    cs = rows(res, "-view", "callstacks", "-group-by", "thread", "-threshold", "0")
    groups = [(r["Function"], ms(r["CPU Time:Self"])) for r in cs if r["Group"]]
    stacks = {r["Call Stack"]: ms(r["CPU Time:Self"]) for r in cs if not r["Group"]}
    e2elib.check(groups == [("app (TID 1001)", 985), ("worker (TID 1002)", 15)] and
                 stacks.get("worker;c") == 15 and stacks.get("main;c") == 30 and
                 sum(stacks.values()) == K["total"],
                 "callstacks -group-by thread: a row per thread, then its stacks")
    text = preport("-r", res, "-view", "callstacks", "-group-by", "thread").stdout
    e2elib.check(text.index("app (TID 1001)") < text.index("main") <
                 text.index("worker (TID 1002)"), "callstacks text: groups above their stacks")

    for args, want in [
            (["-view", "caller-callee", "-group-by", "thread"], "takes no -group-by"),
            (["-view", "summary", "-group-by", "thread"], "takes no -group-by"),
            (["-view", "source", "-source-object", "function=a", "-group-by", "thread"],
             "takes no -group-by"),
            (["-view", "top-down", "-group-by", "source-line"], "does not group by source-line"),
            (["-view", "top-down", "-group-by", "function,thread"], "function comes last"),
            (["-view", "bottom-up", "-group-by", "thraed"], "did you mean 'thread'"),
            (["-view", "top-down", "-function", "a"], "takes no -function"),
            (["-view", "hotspots", "-source-object", "function=a"], "for the source view"),
            (["-view", "hotspots", "-recursion-mode", "collapse"], "-recursion-mode"),
            (["-view", "hotspots", "-group-by", "module", "-function", "c"],
             "needs function in -group-by")]:
        cp = preport("-r", res, *args, code=2)
        e2elib.check(want in cp.stderr, "refused: %s: %s" % (" ".join(args),
                                                             cp.stderr.strip()))


def check_function_and_recursion(res):
    hs = rows(res, "-view", "hotspots", "-function", "c")
    e2elib.check([(r["Function"], ms(r["CPU Time:Self"])) for r in hs] == [("c", 45)],
                 "hotspots -function c: that function's row")
    hs = rows(res, "-view", "hotspots", "-group-by", "thread,function", "-function", "c")
    e2elib.check({(r["TID"], ms(r["CPU Time:Self"])) for r in hs} ==
                 {("1001", 30), ("1002", 15)}, "hotspots -function c per thread")

    p = tree_paths(rows(res, "-view", "top-down", "-recursion-mode", "collapse"))
    e2elib.check(p.get("Total/main/rec") == 50 and "Total/main/rec/rec" not in p and
                 p.get("Total/main") == 980, "top-down -recursion-mode collapse: one rec")
    td = rows(res, "-view", "top-down", "-recursion-mode", "collapse")
    rec = [r for r in td if r["Function Stack"] == "rec"][0]
    e2elib.check(ms(rec["CPU Time:Self"]) == 50, "collapse: the inner calls' self in the outer")
    cs = rows(res, "-view", "callstacks", "-recursion-mode", "collapse")
    e2elib.check(by(cs, "Call Stack", "CPU Time:Self").get("main;rec") == 50,
                 "callstacks -recursion-mode collapse: main;rec")
    cc = rows(res, "-view", "caller-callee", "-function", "rec", "-recursion-mode", "collapse")
    e2elib.check({(r["Relation"], r["Function"]) for r in cc} ==
                 {("caller", "main"), ("function", "rec")},
                 "caller-callee -recursion-mode collapse: no rec calling rec")
    cc = rows(res, "-view", "caller-callee", "-function", "rec")
    e2elib.check(("callee", "rec") in {(r["Relation"], r["Function"]) for r in cc},
                 "caller-callee without it: rec calls rec")
    bu = rows(res, "-view", "bottom-up", "-recursion-mode", "collapse", "-threshold", "0")
    i = [n for n, r in enumerate(bu) if r["Function Stack"] == "rec"][0]
    e2elib.check(bu[i + 1]["Function Stack"] == "main" and bu[i + 1]["Depth"] == "1",
                 "bottom-up -recursion-mode collapse: rec's caller is main")


def check_names(names):
    hs = rows(names, "-view", "hotspots", "-function", "Grid<double>::relax")
    e2elib.check([r["Function"] for r in hs] == ["physics::Grid<double>::relax(int)"],
                 "-function Grid<double>::relax names physics::Grid<double>::relax(int)")
    cp = preport("-r", names, "-view", "caller-callee", "-function", "relax", code=2)
    e2elib.check("ambiguous" in cp.stderr and "physics::Grid<double>::relax(int)" in cp.stderr
                 and "physics::Grid<float>::relax(int)" in cp.stderr,
                 "-function relax: ambiguous, the candidates listed")
    cp = preport("-r", names, "-view", "hotspots", "-function", "Grid::relax", code=2)
    e2elib.check("ambiguous" in cp.stderr, "-function Grid::relax (no template): ambiguous too")
    cp = preport("-r", names, "-view", "source", "-source-object", "function=step", code=2)
    e2elib.check("Simulation.step" in cp.stderr and "physics::Solver::step() const" in cp.stderr,
                 "-source-object function=step: C++ and Python candidates")
    cc = rows(names, "-view", "caller-callee", "-function", "Simulation.step")
    e2elib.check([r["Function"] for r in cc if r["Relation"] == "function"] ==
                 ["Simulation.step"], "-function Simulation.step")
    cc = rows(names, "-view", "caller-callee", "-function", "operator()")
    e2elib.check([ms(r["CPU Time:Total"]) for r in cc if r["Relation"] == "function"] == [40],
                 "-function operator() names ns::S::operator()(int)")
    src = rows(names, "-view", "source", "-source-object", "function=Solver::step")
    e2elib.check(sum(ms(r["CPU Time:Self"]) for r in src) == 30,
                 "-source-object function=Solver::step")
    hs = rows(names, "-view", "hotspots", "-filter", "function=relax")
    e2elib.check(sum(ms(r["CPU Time:Self"]) for r in hs) == 30,
                 "-filter function=relax keeps both relax functions")
    hs = rows(names, "-view", "hotspots", "-filter", "function!=step")
    e2elib.check(sum(ms(r["CPU Time:Self"]) for r in hs) ==
                 sum(v for _, _, v in synth.NAMES) - 37, "-filter function!=step drops both")
    cp = preport("-r", names, "-view", "hotspots", "-function", "relx", code=2)
    e2elib.check("did you mean 'relax'" in cp.stderr, "a typo: the nearest short name")
    hs = rows(names, "-view", "hotspots", "-name-style", "short")
    short = {r["Function"] for r in hs}
    e2elib.check({"physics::Grid<double>::relax", "physics::Solver::step",
                  "ns::S::operator()"} <= short,
                 "-name-style short: C++ names without parameter lists")
    e2elib.check({"step", "<listcomp>"} <= short and
                 not {"Simulation.step", "f.<locals>.<listcomp>"} & short,
                 "-name-style short: Python functions by the last component of their names")


def check_output(names, srcdir):
    text = preport("-r", names, "-view", "hotspots").stdout
    e2elib.check(synth.LONG in text, "into a pipe: a 200-character name whole")
    # A synthetic result was not made here by pcollect: its source is found where told.
    src = preport("-r", names, "-view", "source", "-source-object", "function=smooth_" +
                  "x" * 120, "-source-search-dir", srcdir).stdout
    e2elib.check(synth.LONG_LINE.strip() in src, "into a pipe: a long source line whole")
    out = preport("-r", names, "-view", "hotspots", "-width", "70").stdout
    e2elib.check(all(len(l) <= 70 for l in out.splitlines()), "-width 70 into a pipe: fits")
    for cols in (80, 60):
        out = at_terminal([PREPORT, "-r", names, "-view", "hotspots"], cols)
        lines = [l for l in out.splitlines() if l]
        e2elib.check(all(len(l) <= cols for l in lines),
                     "at a %d-column terminal: every line fits" % cols)
        e2elib.check(any(l.split()[0].endswith("Grid<double>::relax(int)") for l in lines) and
                     any(l.split()[0].endswith("Grid<float>::relax(int)") for l in lines),
                     "at a %d-column terminal: names keep their end, rows tell apart" % cols)
    out = at_terminal([PREPORT, "-r", names, "-view", "top-down"], 70)
    e2elib.check(all(len(l) <= 70 for l in out.splitlines()) and "relax(int)" in out,
                 "top-down at a terminal: fits, names keep their end")


def check_summary_layout(names, w):
    """The summary of a result whose top hotspot has a long C++ name (synth.LONG, 190
    characters): written to a file, the other labels' values stay aligned where they would
    be (not after the long one) and the long name is whole; at a 100-column terminal, every
    line fits."""
    only = ["-filter", "function=" + synth.LONG, "-filter", "function=sqrt"]
    out = w.join("summary.txt")
    preport("-r", names, "-view", "summary", "-report-output", out, *only)
    with open(out) as f:
        lines = f.read().splitlines()
    longest = [l for l in lines if synth.LONG in l]
    e2elib.check(len(longest) == 1 and longest[0].endswith("0.005s (16.7%)"),
                 "summary to a file: the long name whole, its value after it")
    # a value starts after "  LABEL: " padded to the alignment, at most 40 columns of label
    cols = [len(l) - len(l.split(": ", 1)[1].lstrip()) for l in lines
            if l.startswith("  ") and ": " in l and synth.LONG not in l]
    e2elib.check(cols and max(cols) <= 2 + 40 + 2 and
                 any(l.startswith("  sqrt:") and l.endswith("0.025s (83.3%)") for l in lines),
                 "summary to a file: the other values aligned as without the long name (at "
                 "columns %s)" % sorted(set(cols)))
    text = at_terminal([PREPORT, "-r", names, "-view", "summary"] + only, 100)
    e2elib.check(all(len(l) <= 100 for l in text.splitlines()) and
                 any("Multigrid" in l and "(int):" in l and "(16.7%)" in l
                     for l in text.splitlines()),
                 "summary at a 100-column terminal: every line fits, the long name shortened")


def main():
    with e2elib.Workdir("report-views") as w:
        res = synth.known(w.join("r1"))
        srcdir = w.join("src")
        os.makedirs(srcdir)
        names = synth.names(w.join("names"), srcdir)
        check_groups(res, names)
        check_function_and_recursion(res)
        check_names(names)
        check_summary_layout(names, w)
        check_output(names, srcdir)


if __name__ == "__main__":
    main()
