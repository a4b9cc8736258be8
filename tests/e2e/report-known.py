#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""preport on a synthetic result whose every number is known (report_synth.KNOWN): all views,
their invariants, CSV/JSON against text, filters, modes, difference reports and errors."""
import collections
import csv
import json
import os
import shutil
import sqlite3
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2elib  # noqa: E402
import report_synth as synth  # noqa: E402

from e2elib import by, ms, preport, rows  # noqa: E402

K = synth.KNOWN


def large_paths(db):
    """Per stack id of a synthetic large result: its frames' (function, file, line), root first."""
    con = sqlite3.connect(db)
    frames = {fid: (name, path, line) for fid, name, path, line in con.execute(
        "SELECT fr.id, f.name, sf.path, fr.line FROM frames fr JOIN functions f ON "
        "f.id = fr.function_id LEFT JOIN source_files sf ON sf.id = fr.source_file_id")}
    parent, frame = {}, {}
    for sid, par, fid in con.execute("SELECT id, parent_id, frame_id FROM stacks"):
        parent[sid], frame[sid] = par, fid
    paths = {}
    for sid in parent:
        path, s = [], sid
        while s is not None:
            path.append(frames[frame[s]])
            s = parent[s]
        paths[sid] = path[::-1]
    tids = dict(con.execute("SELECT id, tid FROM threads"))
    return con, paths, tids


def expected(rows_, paths, tids, key):
    """Self and total per key(frame, tid) over (thread, stack, ms) rows; total once per sample."""
    self_, total = collections.Counter(), collections.Counter()
    for thread, stack, ms_ in rows_:
        path = paths[stack]
        self_[key(path[-1], tids[thread])] += ms_
        for k in {key(f, tids[thread]) for f in path}:
            total[k] += ms_
    return self_, total


def renumber(src, dst):
    """A copy of result src whose ids have gaps, in the same order: ids need not be dense."""
    os.makedirs(dst)
    shutil.copy(os.path.join(src, "result.db"), dst)
    con = sqlite3.connect(os.path.join(dst, "result.db"))

    def remap(table, col, expr):
        # Through negative values: an id may not take another row's id on the way.
        con.execute("UPDATE %s SET %s = -(%s)" % (table, col, expr))
        con.execute("UPDATE %s SET %s = -%s" % (table, col, col))

    remap("stacks", "id", "id * 3 + 7")
    con.execute("UPDATE stacks SET parent_id = parent_id * 3 + 7")
    remap("samples", "stack_id", "stack_id * 3 + 7")
    con.execute("UPDATE timeline SET stack_id = stack_id * 3 + 7")
    remap("frames", "id", "id * 1000003 + 11")
    con.execute("UPDATE stacks SET frame_id = frame_id * 1000003 + 11")
    remap("functions", "id", "id + 5")
    con.execute("UPDATE frames SET function_id = function_id + 5")
    remap("threads", "id", "id * 10")
    remap("samples", "thread_id", "thread_id * 10")
    con.execute("UPDATE timeline SET thread_id = thread_id * 10")
    con.commit()
    con.close()
    return dst


def check_large(w, npaths):
    """A result of thousands of stacks and threads: every number against the database itself,
    so the loading (two threads), both ways of summing paths (a walk per leaf for wide trees,
    one pass over the tree when few paths share many leaves), the radix sorts and the
    timeline scan are checked where hand-made known answers cannot reach. A thousand leaf
    stacks are far beyond those; which way of summing a view takes depends on the tree's
    shape (the leaves' depths against its nodes: cct_walk_add), which npaths sets at any
    size (npaths/nstacks 4/3: a walk per leaf; 1/10: one pass)."""
    res = w.join("large-%d" % npaths)
    synth.large(res, 1000, 8000, nfunctions=400, nthreads=6, npaths=npaths)
    con, paths, tids = large_paths(os.path.join(res, "result.db"))
    ms_per = synth.INTERVAL_NS // 1000000
    all_rows = [(t, s, v // 1000000) for t, s, v in
                con.execute("SELECT thread_id, stack_id, value FROM samples")]
    # 8000 samples 0.25 ms apart: 2 s, half of it in the window
    lo, hi = 500 * 1000000, 1500 * 1000000
    win_rows = [(t, s, ms_per) for t, s in con.execute(
        "SELECT thread_id, stack_id FROM timeline WHERE time_ns >= ? AND time_ns < ?", (lo, hi))]
    cases = [
        ([], all_rows, lambda f, tid: f[0], ("Function",)),
        (["-group-by", "thread,function"], all_rows, lambda f, tid: (str(tid), f[0]),
         ("TID", "Function")),
        (["-group-by", "source-line"], all_rows, lambda f, tid: (f[1], str(f[2])),
         ("Source File", "Source Line")),
        (["-time-filter", "%g:%g" % (lo / 1e9, hi / 1e9)], win_rows, lambda f, tid: f[0],
         ("Function",)),
        (["-time-filter", "%g:%g" % (lo / 1e9, hi / 1e9), "-group-by", "thread"], win_rows,
         lambda f, tid: str(tid), ("TID",)),
    ]
    for args, rows_, key, cols in cases:
        want_self, want_total = expected(rows_, paths, tids, key)
        got = rows(res, "-view", "hotspots", *args)
        name = lambda r: r[cols[0]] if len(cols) == 1 else tuple(r[c] for c in cols)
        got_self = {name(r): ms(r["CPU Time:Self"]) for r in got if ms(r["CPU Time:Self"])}
        got_total = {name(r): ms(r["CPU Time:Total"]) for r in got}
        label = "%d paths, %s" % (npaths, " ".join(args) or "default")
        e2elib.check(got_self == {k: v for k, v in want_self.items() if v},
                     "large result, hotspots %s: self per group equals the database's" % label)
        e2elib.check(got_total == dict(want_total),
                     "large result, hotspots %s: total per group (once per sample)" % label)
        selfs = [ms(r["CPU Time:Self"]) for r in got]
        e2elib.check(selfs == sorted(selfs, reverse=True),
                     "large result, hotspots %s: sorted by self time" % label)
    td = rows(res, "-view", "top-down", "-threshold", "0")
    e2elib.check(ms(td[0]["CPU Time:Total"]) == sum(r[2] for r in all_rows) and
                 sum(ms(r["CPU Time:Self"]) for r in td) == sum(r[2] for r in all_rows),
                 "large result, %d paths, top-down: the root and the sum of self are the total"
                 % npaths)
    nsamples = con.execute("SELECT sum(count) FROM samples").fetchone()[0]
    for args, n in [([], nsamples),
                    (["-time-filter", "%g:%g" % (lo / 1e9, hi / 1e9)], len(win_rows))]:
        sm = {(r["Section"], r["Metric"]): r["Value"] for r in rows(res, "-view", "summary",
                                                                     *args)}
        cs = rows(res, "-view", "callstacks", "-threshold", "0", *args)
        e2elib.check(sm[("Collection", "Samples Shown")] == str(n) and
                     sum(int(r["Samples"]) for r in cs) == n,
                     "large result, %d paths, %s: samples counted in summary and callstacks"
                     % (npaths, " ".join(args) or "default"))
    gaps = renumber(res, w.join("large-%d-gaps" % npaths))
    for args in [["-view", "hotspots", "-group-by", "thread,source-line"],
                 ["-view", "top-down", "-threshold", "0"],
                 ["-view", "hotspots", "-time-filter", "%g:%g" % (lo / 1e9, hi / 1e9)]]:
        e2elib.check(rows(res, *args) == rows(gaps, *args),
                     "large result, %d paths, ids with gaps: the same %s" % (npaths,
                                                                             " ".join(args)))
    text = preport("-r", res, "-view", "hotspots", "-group-by", "source-line", "-width",
                   "100").stdout
    e2elib.check(len(text.splitlines()) >= len(rows(res, "-view", "hotspots", "-group-by",
                                                        "source-line")) and
                 all(len(l) <= 100 and not l.endswith(" ") for l in text.splitlines()),
                 "large result, %d paths, text: a line per row, 100 columns, no trailing blanks"
                 % npaths)


def check_pstats_counts(w, res):
    """pstats counts that add up (issue 24): a sampler counts no calls, so a function's nc is
    the samples through its callers (each call edge once a sample) and cc the samples with
    it on the stack, each once (recursion left out). rec recurses under main in 50 samples:
    cc 50, nc 100, callers main 50 and rec 50; no function's callers outweigh its nc, which
    gprof2dot divides them by."""
    import pstats
    out = w.join("known.pstats")
    preport("-r", res, "-format", "pstats", "-report-output", out)
    st = pstats.Stats(out).stats
    got = {k[2]: (cc, nc, {c[2]: v[0] for c, v in callers.items()})
           for k, (cc, nc, tt, ct, callers) in st.items()}
    e2elib.check(got["rec"] == (50, 100, {"main": 50, "rec": 50}),
                 "pstats: rec's cc 50 (samples, recursion once) and nc 100 (through main and "
                 "through itself): %s" % (got["rec"],))
    e2elib.check(got["c"] == (45, 45, {"main": 30, "worker": 15}) and got["main"][:2] ==
                 (980, 980), "pstats: without recursion cc = nc = the samples, the callers' "
                 "sum for a called function: c %s, main %s" % (got["c"], got["main"]))
    e2elib.check(all(sum(cal.values()) <= nc and cc <= nc for cc, nc, cal in got.values()),
                 "pstats: no function's callers outweigh its nc, and cc <= nc")


def main():
    with e2elib.Workdir("report-known") as w:
        srcdir = w.join("moved-src")
        os.makedirs(srcdir)
        with open(os.path.join(srcdir, "app.c"), "w") as f:
            for i in range(1, 91):
                f.write("line %d of app.c\n" % i)
        res = synth.known(w.join("r1"))
        twice = synth.known(w.join("r2"), scale={"b": 2})

        # hotspots: self and total of every function
        hs = rows(res, "-view", "hotspots")
        e2elib.check({k: v for k, v in by(hs, "Function", "CPU Time:Self").items() if v} ==
                     K["self"], "hotspots self per function")
        e2elib.check(by(hs, "Function", "CPU Time:Total") == K["total_by_function"],
                     "hotspots total per function (recursion counted once)")
        e2elib.check(sum(ms(r["CPU Time:Self"]) for r in hs) == K["total"],
                     "sum of self equals the total")
        e2elib.check([r["Function"] for r in hs][:3] == ["a", "b", "helper"],
                     "hotspots sorted by self time")
        a = [r for r in hs if r["Function"] == "a"][0]
        e2elib.check(a["Module"] == "app" and a["Source File"] == synth.APP and
                     a["Source Line"] == "30", "module and source position of a function")
        e2elib.check(abs(float(a["CPU Time:Self %"]) - 40.0) < 0.05, "self percentage")

        # CSV and text carry the same numbers
        text = preport("-r", res, "-view", "hotspots", "-width", "100").stdout
        for r in hs:
            line = [l for l in text.splitlines() if l.split()[:1] == [r["Function"]]][0]
            e2elib.check(r["CPU Time:Self"] + "s" in line and r["CPU Time:Total"] + "s" in line,
                         "text row of %s matches CSV" % r["Function"])
        e2elib.check(all(len(l) <= 100 for l in text.splitlines()), "text fits 100 columns")
        j = json.loads(preport("-r", res, "-view", "hotspots", "-format", "json").stdout)
        e2elib.check({r["Function"]: round(r["CPU Time:Self"] * 1000) for r in j["rows"]} ==
                     by(hs, "Function", "CPU Time:Self"), "JSON matches CSV")

        # top-down: root is the total, children sum to parents, known tree
        td = rows(res, "-view", "top-down", "-threshold", "0")
        e2elib.check(td[0]["Function Stack"] == "Total" and ms(td[0]["CPU Time:Total"]) ==
                     K["total"], "top-down root equals the total")
        ok = True
        for i, r in enumerate(td):
            d = int(r["Depth"])
            kids = []
            for s in td[i + 1:]:
                if int(s["Depth"]) <= d:
                    break
                if int(s["Depth"]) == d + 1:
                    kids.append(ms(s["CPU Time:Total"]))
            if ms(r["CPU Time:Total"]) != ms(r["CPU Time:Self"]) + sum(kids):
                ok = False
        e2elib.check(ok, "top-down: each total is self plus the children's totals")
        paths, stack = {}, []
        for r in td[1:]:
            d = int(r["Depth"])
            stack[d - 1:] = [r["Function Stack"]]
            paths["/".join(stack)] = ms(r["CPU Time:Total"])
        e2elib.check(paths.get("main/work/a/helper") == 200 and paths.get("main/rec/rec/rec") == 50
                     and paths.get("worker/c") == 15 and paths.get("main") == 980,
                     "top-down paths (inlined helper under a, recursion, second thread)")
        # caller-callee agrees with top-down
        cc = rows(res, "-view", "caller-callee", "-function", "c")
        callers = {r["Function"]: ms(r["CPU Time:Total"]) for r in cc if r["Relation"] == "caller"}
        e2elib.check(callers == {"main": paths["main/c"], "worker": paths["worker/c"]},
                     "caller-callee callers of c agree with top-down")
        cc = rows(res, "-view", "caller-callee", "-function", "work")
        callees = {r["Function"]: ms(r["CPU Time:Total"]) for r in cc if r["Relation"] == "callee"}
        e2elib.check(callees == {"a": paths["main/work/a"]}, "caller-callee callees of work")
        allcc = rows(res, "-view", "caller-callee", "-threshold", "0")
        fn = {r["Function"]: ms(r["CPU Time:Total"]) for r in allcc if r["Relation"] == "function"}
        e2elib.check(fn == K["total_by_function"], "gprof-style listing: every function's total")

        # bottom-up: paths sum to their hotspot's self
        bu = rows(res, "-view", "bottom-up", "-threshold", "0")
        ok = True
        roots = {}
        for i, r in enumerate(bu):
            if r["Depth"] != "0":
                continue
            roots[r["Function Stack"]] = ms(r["CPU Time:Self"])
            leaves = 0
            for j in range(i + 1, len(bu) + 1):
                if j == len(bu) or bu[j]["Depth"] == "0":
                    break
                nxt = bu[j + 1]["Depth"] if j + 1 < len(bu) else "0"
                if int(nxt) <= int(bu[j]["Depth"]):
                    leaves += ms(bu[j]["CPU Time:Self"])
            if leaves and leaves != roots[r["Function Stack"]]:
                ok = False
        e2elib.check(roots == K["self"], "bottom-up hotspots equal hotspots self")
        e2elib.check(ok, "bottom-up caller paths sum to their hotspot's self")
        cpaths = [(r["Function Stack"], r["Depth"], ms(r["CPU Time:Self"])) for r in bu]
        e2elib.check(("main", "1", 30) in cpaths and ("worker", "1", 15) in cpaths,
                     "bottom-up callers of c with the time of each path")

        # callstacks
        cs = rows(res, "-view", "callstacks", "-threshold", "0")
        e2elib.check(cs[0]["Call Stack"] == "main;work;a" and ms(cs[0]["CPU Time:Self"]) == 400
                     and sum(ms(r["CPU Time:Self"]) for r in cs) == K["total"],
                     "callstacks heaviest first, folded, summing to the total")

        # modes
        off = rows(res, "-view", "hotspots", "-inline-mode", "off")
        e2elib.check({k: v for k, v in by(off, "Function", "CPU Time:Self").items() if v} ==
                     K["self_inline_off"], "-inline-mode off merges helper into a")
        allf = by(rows(res, "-view", "hotspots", "-call-stack-mode", "all"), "Function",
                  "CPU Time:Total")
        e2elib.check(all(allf.get(k) == v for k, v in K["total_all_frames"].items()),
                     "-call-stack-mode all keeps start-up and thread frames")

        # grouping and filters
        th = rows(res, "-view", "hotspots", "-group-by", "thread")
        e2elib.check({int(r["TID"]): ms(r["CPU Time:Self"]) for r in th} == K["threads"],
                     "-group-by thread")
        tf = rows(res, "-view", "hotspots", "-group-by", "thread,function")
        e2elib.check({(r["TID"], r["Function"]): ms(r["CPU Time:Self"]) for r in tf
                      if r["Function"] == "c"} == {("1001", "c"): 30, ("1002", "c"): 15},
                     "-group-by thread,function")
        md = rows(res, "-view", "hotspots", "-group-by", "module")
        e2elib.check(by(md, "Module", "CPU Time:Self") == {"app": 1000}, "-group-by module")
        sl = rows(res, "-view", "hotspots", "-group-by", "source-line")
        e2elib.check({r["Source Line"]: ms(r["CPU Time:Self"]) for r in sl}.get("31") == 400,
                     "-group-by source-line")
        f1 = by(rows(res, "-view", "hotspots", "-filter", "thread=1002"), "Function",
                "CPU Time:Self")
        e2elib.check({k: v for k, v in f1.items() if v} == {"c": 15}, "-filter thread=TID")
        f2 = rows(res, "-view", "hotspots", "-filter", "function=work")
        e2elib.check(sum(ms(r["CPU Time:Self"]) for r in f2) == 600,
                     "-filter function= keeps stacks through the function")
        f3 = rows(res, "-view", "hotspots", "-filter", "function!=work", "-filter",
                  "thread!=worker")
        e2elib.check(sum(ms(r["CPU Time:Self"]) for r in f3) == 385, "exclusion filters")
        tw = rows(res, "-view", "hotspots", "-time-filter", "0:0.4")
        e2elib.check({k: v for k, v in by(tw, "Function", "CPU Time:Self").items() if v} ==
                     {"a": 400}, "-time-filter uses the timeline")
        lim = rows(res, "-view", "hotspots", "-limit", "2", "-sort-desc", "CPU Time:Total")
        e2elib.check([r["Function"] for r in lim] == ["main", "work"] or
                     [r["Function"] for r in lim] == ["main", "a"], "-limit and -sort-desc")
        # c's time a hundredfold: worker (1,500 ms, no self time) outweighs work (600 ms,
        # none either), though work's id comes first.
        heavy_c = synth.known(w.join("r-heavy-c"), scale={"c": 100})
        order = [r["Function"] for r in rows(heavy_c, "-view", "hotspots")
                 if not ms(r["CPU Time:Self"])]
        e2elib.check(order[:3] == ["main", "worker", "work"], "hotspots: by self time, equal "
                     "self times by total (%s)" % order)

        # source view, with the source moved
        src = rows(res, "-view", "source", "-source-object", "function=a",
                   "-source-search-dir", srcdir)
        lines = {r["Line"]: (ms(r["CPU Time:Self"] or 0), ms(r["CPU Time:Total"] or 0), r["Source"])
                 for r in src}
        e2elib.check(lines["31"][:2] == (400, 400) and lines["33"][:2] == (0, 200),
                     "source view: self and total per line of a")
        e2elib.check(lines["31"][2] == "line 31 of app.c", "source read through -source-search-dir")
        src = rows(res, "-view", "source", "-source-object", "function=a", "-inline-mode", "off")
        lines = {r["Line"]: ms(r["CPU Time:Self"] or 0) for r in src}
        e2elib.check(lines.get("33") == 200, "source view with inlining off: call site line")
        nosrc = preport("-r", res, "-view", "source", "-source-object", "file=app.c")
        e2elib.check("-source-search-dir" in nosrc.stdout, "missing source says how to find it")

        # summary
        sm = rows(res, "-view", "summary")
        get = {(r["Section"], r["Metric"]): r["Value"] for r in sm}
        e2elib.check(get[("Time", "CPU Time")] == "1.000" and get[("Time", "Elapsed Time")] ==
                     "1.250" and get[("Time", "Threads")] == "2" and
                     get[("Collection", "Lost Samples")] == "3" and
                     get[("Top Hotspots", "a")] == "0.400", "summary figures")
        e2elib.check(all(len(l) <= 100 for l in preport("-r", res, "-width", "100")
                         .stdout.splitlines()), "summary text fits -width 100")

        # difference reports
        d = rows(res, "-r", twice, "-view", "hotspots")
        dd = {r["Function"]: (ms(r["CPU Time:Self:Result 1"]), ms(r["CPU Time:Self:Result 2"]),
                              ms(r["CPU Time:Self:Difference"])) for r in d}
        e2elib.check(dd["b"] == (300, 600, 300) and dd["a"] == (400, 400, 0) and
                     d[0]["Function"] == "b", "difference report of hotspots")
        d = rows(res, "-r", twice, "-view", "top-down")
        e2elib.check(ms(d[0]["CPU Time:Total:Difference"]) == 300 and
                     [ms(r["CPU Time:Total:Result 2"]) for r in d if r["Function Stack"] == "b"]
                     == [600], "difference report of top-down")

        # output options
        out = w.join("out.csv")
        preport("-r", res, "-view", "hotspots", "-format", "csv", "-csv-delimiter", ";",
                "-report-output", out)
        with open(out) as f:
            got = list(csv.DictReader(f, delimiter=";"))
        e2elib.check(by(got, "Function", "CPU Time:Self") == by(hs, "Function", "CPU Time:Self"),
                     "-report-output with -csv-delimiter")

        # errors: exit 2 and the nearest valid name
        for args, want in [(["-r", w.join("nope")], "cannot open result"),
                           (["-r", srcdir], "is not a result directory"),
                           (["-r", res, "-view", "hotspot"], "did you mean 'hotspots'"),
                           (["-r", res, "-view", "hotspots", "-sort-desc", "CPU Time:Slef"],
                            "did you mean 'CPU Time:Self'"),
                           (["-r", res, "-view", "hotspots", "-filter", "modul=app"],
                            "did you mean 'module'"),
                           (["-r", res, "-view", "hotspots", "-filter", "function=hepler"],
                            "did you mean 'helper'"),
                           (["-r", res, "-view", "hotspots", "-group-by", "thraed"],
                            "did you mean 'thread'"),
                           (["-r", res, "-view", "caller-callee", "-function", "wrk"],
                            "did you mean 'work'")]:
            cp = preport(*args, code=2)
            e2elib.check(want in cp.stderr and cp.stderr.startswith("preport: "),
                         "error for %s: %s" % (" ".join(args[2:]) or args[1], cp.stderr.strip()))

        check_pstats_counts(w, res)
        check_large(w, 1333)
        check_large(w, 100)


if __name__ == "__main__":
    main()
