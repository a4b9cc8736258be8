#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""preport's exports read back by the real tools: pstats by /usr/bin/python3's pstats module,
callgrind by valgrind's callgrind_annotate, speedscope against the schema npm's speedscope
ships, folded against preport's callstacks, the Chrome trace parsed. Known answers: the
60/30/10 program (tests/progs/report-split.c, 5 rounds of 300 ms) shows its split in every
export, within the tolerance of its samples (e2elib.Sampled, a stretch a round);
four threads burning 1:2:3:4 (threads-work) split so under -group-by thread; the synthetic
results of report_synth give exact values for -metric, -filter, -time-filter and ranks."""
import collections
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2elib  # noqa: E402
import report_synth as synth  # noqa: E402

from e2elib import ms, preport, rows  # noqa: E402

SYSTEM_PYTHON = "/usr/bin/python3"
SCHEMA = os.path.join(e2elib.BUILD, "test-deps", "speedscope", "file-format-schema.json")
SPLIT = {"heavy": 60.0, "medium": 30.0, "light": 10.0}
ROUND_MS, ROUNDS = 300, 5  # tests/progs/report-split.c: a stretch of each function a round
TOL_KNOWN = {}  # points, per function: the program's split, in every export (set in main())
TOL_SAME = 0.05  # points: an export against preport's own numbers


def require_tools():
    missing, needs = [], []
    if not shutil.which("callgrind_annotate"):
        missing.append("callgrind_annotate (apt-get install valgrind)")
        needs.append("valgrind")
    if not os.access(SYSTEM_PYTHON, os.X_OK):
        missing.append(SYSTEM_PYTHON + " (apt-get install python3)")
        needs.append("python3")
    else:
        cp = subprocess.run([SYSTEM_PYTHON, "-c", "import jsonschema"], capture_output=True)
        if cp.returncode:
            missing.append("jsonschema for %s (apt-get install python3-jsonschema)" % SYSTEM_PYTHON)
            needs.append("python3-jsonschema")
    if not shutil.which("go"):
        missing.append("go tool pprof (apt-get install golang-go)")
        needs.append("golang-go")
    if not os.path.exists(SCHEMA):
        missing.append("speedscope's schema at %s (./scripts/dev test fetches npm's speedscope)"
                       % SCHEMA)
        needs.append("speedscope")
    if missing:
        e2elib.skip("missing: " + "; ".join(missing), needs=needs)


def system_python(code, *args):
    """Run code with /usr/bin/python3 (the pstats a user has); returns its JSON output."""
    cp = subprocess.run([SYSTEM_PYTHON, "-c", code] + list(args), capture_output=True, text=True,
                        timeout=120)
    if cp.returncode:
        e2elib.fail("%s failed:\n%s%s" % (SYSTEM_PYTHON, cp.stdout, cp.stderr))
    return json.loads(cp.stdout)


def export(res, fmt, path, *args):
    preport("-r", res, "-format", fmt, "-report-output", path, *args)
    return path


def split_shares(values, names=SPLIT):
    tot = sum(values.get(n, 0) for n in names)
    if tot <= 0:
        e2elib.fail("no value for %s in %s" % (list(names), values))
    return {n: 100.0 * values.get(n, 0) / tot for n in names}


def check_export_split(what, values, reference):
    """values: per function (any unit). Against the program's split and preport's."""
    got = split_shares(values)
    print("%s split: %s" % (what, {k: round(v, 2) for k, v in got.items()}))
    e2elib.check(all(abs(got[n] - SPLIT[n]) <= TOL_KNOWN[n] for n in SPLIT),
                 "%s: the 60/30/10 split within %s points" % (what, TOL_KNOWN))
    e2elib.check(all(abs(got[n] - reference[n]) <= TOL_SAME for n in SPLIT),
                 "%s: the same split as preport's hotspots" % what)


PSTATS_READ = r"""
import json, pstats, sys
s = pstats.Stats(sys.argv[1])
out = {"total_tt": s.total_tt, "total_calls": s.total_calls, "functions": []}
for (file, line, name), (cc, nc, tt, ct, callers) in s.stats.items():
    out["functions"].append({"file": file, "line": line, "name": name, "nc": nc, "tt": tt,
                             "ct": ct, "callers": [[k[2], v[0], v[2], v[3]]
                                                   for k, v in callers.items()]})
print(json.dumps(out))
"""


def check_pstats(res, path, hs, cc_medium):
    st = system_python(PSTATS_READ, path)
    total = sum(ms(r["CPU Time:Self"]) for r in hs)
    e2elib.check(round(st["total_tt"] * 1000) == total,
                 "pstats: pstats.Stats total time equals preport's total (%d ms)" % total)
    fns = {f["name"]: f for f in st["functions"]}
    e2elib.check(all(round(fns[r["Function"]]["tt"] * 1000) == ms(r["CPU Time:Self"]) and
                     round(fns[r["Function"]]["ct"] * 1000) == ms(r["CPU Time:Total"])
                     for r in hs), "pstats: self (tottime) and cumulative (cumtime) per function "
                 "equal preport's hotspots")
    med = fns["medium"]
    e2elib.check(med["file"].endswith("report-split.c") and med["line"] > 0,
                 "pstats: functions keyed by (file, line, name)")
    callers = {c[0]: c for c in med["callers"]}
    e2elib.check(set(callers) == {"driver"} and
                 round(callers["driver"][3] * 1000) == cc_medium["driver"] and
                 callers["driver"][1] > 0,
                 "pstats: medium's callers with their calls (samples) and cumulative time, as "
                 "the caller-callee view")
    return {n: f["tt"] for n, f in fns.items()}


PPROF_TOP = re.compile(r"^\s*([0-9.]+)(?:ms)?\s+[0-9.]+%\s+[0-9.]+%\s+([0-9.]+)(?:ms)?\s+[0-9.]+%\s+"
                       r"(.+)$")


def go_pprof(*args):
    cp = subprocess.run(["go", "tool", "pprof"] + list(args), capture_output=True, text=True)
    if cp.returncode:
        e2elib.fail("go tool pprof %s: exit %d\n%s" % (" ".join(args), cp.returncode, cp.stderr))
    return cp.stdout


def check_pprof(w, res, hs):
    """-format pprof read by go tool pprof (Debian's golang-go): -top's flat and cum of every
    function are preport's self and total; the sample type is cpu_time in nanoseconds, with
    the sampling interval as period; -traces of a -group-by thread export carries the thread
    as a label; the source lines are the frames'."""
    path = export(res, "pprof", w.join("out.pb.gz"))
    top = go_pprof("-top", "-nodecount=10000", "-nodefraction=0", "-unit=ms", path)
    flat, cum = {}, {}
    for line in top.splitlines():
        m = PPROF_TOP.match(line)
        if m:
            flat[m.group(3)] = float(m.group(1))
            cum[m.group(3)] = float(m.group(2))
    e2elib.check("Type: cpu_time" in top, "pprof: the sample type is cpu_time")
    # preport's text gives ms, pprof's -unit=ms two decimals: within the rounding
    off = [(r["Function"], flat.get(r["Function"]), ms(r["CPU Time:Self"]),
            cum.get(r["Function"]), ms(r["CPU Time:Total"])) for r in hs
           if ms(r["CPU Time:Total"]) and
           (abs(flat.get(r["Function"], 0) - ms(r["CPU Time:Self"])) > 1 or
            abs(cum.get(r["Function"], 0) - ms(r["CPU Time:Total"])) > 1)]
    e2elib.check(not off, "pprof: go tool pprof -top's flat and cum of each function are "
                 "preport's self and total (%d functions; differing: %s)" % (len(flat), off))
    raw = go_pprof("-raw", path)
    e2elib.check("cpu_time/nanoseconds" in raw and re.search(r"Period: 1000000\b", raw),
                 "pprof: values in nanoseconds, the period the 1 ms sampling interval")
    traces = go_pprof("-traces", export(res, "pprof", w.join("thr.pb.gz"), "-group-by",
                                         "thread"))
    e2elib.check(re.search(r"thread:\s+\S.* \(TID \d+\)", traces) is not None,
                 "pprof -group-by thread: each sample has its thread as a label")
    lines = go_pprof("-top", "-lines", "-nodecount=10000", path)
    e2elib.check("report-split.c:" in lines, "pprof -lines: the frames' source lines")
    return {k: v for k, v in flat.items()}


def annotate(path, inclusive):
    # In the file's directory: callgrind_annotate strips the working directory from fl= names
    # but not from cfi= ones, so a working directory above the sources splits functions.
    cp = subprocess.run(["callgrind_annotate", "--inclusive=" + ("yes" if inclusive else "no"),
                         "--auto=no", "--threshold=100", path], capture_output=True, text=True,
                        timeout=120, cwd=os.path.dirname(os.path.abspath(path)))
    if cp.returncode:
        e2elib.fail("callgrind_annotate %s: exit %d\n%s" % (path, cp.returncode, cp.stderr))
    out, body = {}, False
    for line in cp.stdout.splitlines():
        if "file:function" in line:
            body = True
            continue
        m = re.match(r"\s*([\d,]+)(?:\s+\([\d. ]+%\))?\s+(\S.*?):(.+?)(?: \[.*\])?$", line)
        if body and m:
            name = m.group(3)
            out[name] = out.get(name, 0) + int(m.group(1).replace(",", ""))
    if not out:
        e2elib.fail("callgrind_annotate printed no functions:\n" + cp.stdout)
    return out, cp.stdout


def check_callgrind(path, hs):
    incl, text = annotate(path, True)
    excl, _ = annotate(path, False)
    e2elib.check("PROGRAM TOTALS" in text and
                 str(format(sum(ms(r["CPU Time:Self"]) for r in hs) * 1000000, ",")) in text,
                 "callgrind: callgrind_annotate's program total equals preport's total")
    e2elib.check(all(round(incl.get(r["Function"], 0) / 1e6) == ms(r["CPU Time:Total"])
                     for r in hs),
                 "callgrind: inclusive cost per function (callgrind_annotate --inclusive=yes) "
                 "equals preport's total")
    e2elib.check(all(round(excl.get(r["Function"], 0) / 1e6) == ms(r["CPU Time:Self"])
                     for r in hs if ms(r["CPU Time:Self"])),
                 "callgrind: self cost per function equals preport's self")
    return excl


def read_folded(path):
    stacks = {}
    with open(path) as f:
        for line in f:
            stack, _, value = line.rstrip("\n").rpartition(" ")
            stacks[stack] = stacks.get(stack, 0) + int(value)
    return stacks


def folded_self(stacks):
    out = collections.Counter()
    for stack, v in stacks.items():
        out[stack.split(";")[-1]] += v
    return out


def check_folded(res, path):
    stacks = read_folded(path)
    cs = rows(res, "-view", "callstacks", "-threshold", "0")
    want = {r["Call Stack"]: ms(r["CPU Time:Self"]) for r in cs}
    e2elib.check({k: round(v / 1e6) for k, v in stacks.items()} == want,
                 "folded: every stack and its value equal preport's callstacks")
    return folded_self(stacks)


def validate_speedscope(path):
    system_python("import json, jsonschema, sys\n"
                  "jsonschema.validate(json.load(open(sys.argv[1])), json.load(open(sys.argv[2])))"
                  "\nprint('true')", path, SCHEMA)
    with open(path) as f:
        return json.load(f)


def speedscope_self(doc, profile):
    frames = doc["shared"]["frames"]
    out = collections.Counter()
    for stack, w in zip(profile["samples"], profile["weights"]):
        out[frames[stack[-1]]["name"]] += w
    return out


def chrome_slices(doc):
    """Per (pid, tid): the complete events, and per name the self time (ns) of the slices."""
    by = collections.defaultdict(list)
    for i, e in enumerate(doc["traceEvents"]):
        if e["ph"] == "X":
            by[(e["pid"], e["tid"])].append((i, e))
    self_ = collections.Counter()
    outer = {}
    for key, evs in by.items():
        # Outer slices first; of two with the same span, the outer is written last (a slice
        # is written when it closes, inner ones first).
        evs.sort(key=lambda ie: (round(ie[1]["ts"] * 1000), -round(ie[1]["dur"] * 1000), -ie[0]))
        evs = [e for _, e in evs]
        by[key] = evs
        stack, top = [], 0
        for e in evs:
            a, b = round(e["ts"] * 1000), round((e["ts"] + e["dur"]) * 1000)
            while stack and stack[-1][1] <= a:
                stack.pop()
            if stack:
                if b > stack[-1][1]:
                    e2elib.fail("chrome: slice %s overlaps its parent" % e)
                self_[stack[-1][2]] -= b - a
            else:
                top += b - a
            self_[e["name"]] += b - a
            stack.append((a, b, e["name"]))
        outer[key] = top
    return by, self_, outer


def main():
    require_tools()
    with e2elib.Workdir("report-exports") as w:
        res = w.join("split")
        r = e2elib.pcollect([e2elib.prog("report-split"), "once", str(ROUND_MS)], result=res,
                            options=["-knob", "sampling-interval=1"], finalization="full")
        if r.returncode:
            e2elib.fail("pcollect report-split: exit %d\n%s" % (r.returncode, r.stderr))
        hs = rows(res, "-view", "hotspots")
        ref = split_shares({r["Function"]: ms(r["CPU Time:Self"]) for r in hs})
        print("preport split: %s" % {k: round(v, 2) for k, v in ref.items()})
        stats = e2elib.db_sampled(res)
        TOL_KNOWN.update({n: round(100 * stats.share_tolerance(SPLIT[n] / 100, ROUNDS), 2)
                          for n in SPLIT})
        e2elib.check(all(abs(ref[n] - SPLIT[n]) <= TOL_KNOWN[n] for n in SPLIT),
                     "preport: the 60/30/10 split within %s points (%s)" % (TOL_KNOWN, stats))
        cc = rows(res, "-view", "caller-callee", "-function", "medium")
        cc_medium = {r["Function"]: ms(r["CPU Time:Total"]) for r in cc
                     if r["Relation"] == "caller"}

        tt = check_pstats(res, export(res, "pstats", w.join("out.pstats")), hs, cc_medium)
        check_export_split("pstats", tt, ref)
        excl = check_callgrind(export(res, "callgrind", w.join("out.callgrind")), hs)
        check_export_split("callgrind", excl, ref)
        check_export_split("folded", check_folded(res, export(res, "folded", w.join("out.folded"))),
                    ref)
        doc = validate_speedscope(export(res, "speedscope", w.join("out.speedscope.json")))
        e2elib.check(len(doc["profiles"]) == 1 and doc["profiles"][0]["unit"] == "nanoseconds"
                     and doc["profiles"][0]["endValue"] ==
                     sum(ms(r["CPU Time:Self"]) for r in hs) * 1000000,
                     "speedscope: valid against speedscope's schema, one profile (one thread) "
                     "holding the total")
        check_export_split("speedscope", speedscope_self(doc, doc["profiles"][0]), ref)
        with open(export(res, "chrome", w.join("out.trace.json"))) as f:
            trace = json.load(f)
        by, cself, outer = chrome_slices(trace)
        names = {e["args"]["name"] for e in trace["traceEvents"]
                 if e["ph"] == "M" and e["name"] == "thread_name"}
        e2elib.check(len(by) == 1 and len(names) == 1,
                     "chrome: one track, named, for the one thread")
        e2elib.check(abs(list(outer.values())[0] / 1e6 -
                         sum(ms(r["CPU Time:Self"]) for r in hs)) <= 1,
                     "chrome: the thread's outermost slices add up to its sampled CPU time")
        check_export_split("chrome", cself, ref)
        check_export_split("pprof", check_pprof(w, res, hs), ref)

        # -filter and -time-filter: the exports hold what the views show
        f_cs = rows(res, "-view", "callstacks", "-threshold", "0", "-filter", "function=medium")
        f_st = read_folded(export(res, "folded", w.join("f.folded"), "-filter",
                                  "function=medium"))
        e2elib.check({k: round(v / 1e6) for k, v in f_st.items()} ==
                     {r["Call Stack"]: ms(r["CPU Time:Self"]) for r in f_cs} and
                     all("medium" in k for k in f_st), "folded -filter function=medium")
        t_hs = rows(res, "-view", "hotspots", "-time-filter", "0:1")
        t_st = system_python(PSTATS_READ, export(res, "pstats", w.join("t.pstats"),
                                                 "-time-filter", "0:1"))
        e2elib.check(round(t_st["total_tt"] * 1000) == sum(ms(r["CPU Time:Self"]) for r in t_hs)
                     and 0 < t_st["total_tt"] < 1.01, "pstats -time-filter 0:1: the window's total")
        _, _, t_outer = chrome_slices(json.load(open(export(res, "chrome", w.join("t.json"),
                                                            "-time-filter", "0:1"))))
        e2elib.check(abs(sum(t_outer.values()) / 1e6 - sum(ms(r["CPU Time:Self"]) for r in t_hs))
                     <= 1, "chrome -time-filter 0:1: the window's samples only")

        # -group-by thread on four threads burning 1:2:3:4
        thr = w.join("threads")
        r = e2elib.pcollect([e2elib.prog("threads-work"), "150"], result=thr,
                            finalization="full")
        if r.returncode:
            e2elib.fail("pcollect threads-work: exit %d\n%s" % (r.returncode, r.stderr))
        th = {r["Thread"]: ms(r["CPU Time:Self"])
              for r in rows(thr, "-view", "hotspots", "-group-by", "thread")}
        workers = ["worker-%d" % i for i in range(1, 5)]
        want = {n: 10.0 * (i + 1) for i, n in enumerate(workers)}
        got = split_shares(th, workers)
        print("threads split: %s" % {k: round(v, 2) for k, v in got.items()})
        e2elib.check(all(abs(got[n] - want[n]) <= 2 for n in workers),
                     "threads-work: preport splits the threads 1:2:3:4 within 2 points")
        groups = collections.Counter()
        for stack, v in read_folded(export(thr, "folded", w.join("thr.folded"), "-group-by",
                                           "thread")).items():
            m = re.match(r"\[thread (\S+) \(TID \d+\)\]", stack.split(";")[0])
            if not m:
                e2elib.fail("folded -group-by thread: a stack without its thread: " + stack)
            groups[m.group(1)] += v
        e2elib.check({n: round(groups[n] / 1e6) for n in workers} ==
                     {n: th[n] for n in workers},
                     "folded -group-by thread: [thread NAME (TID n)] outermost, the threads' "
                     "values")
        gst = system_python(PSTATS_READ, export(thr, "pstats", w.join("thr.pstats"),
                                                "-group-by", "thread"))
        gct = {f["name"].split()[1]: round(f["ct"] * 1000) for f in gst["functions"]
               if f["name"].startswith("[thread ")}
        e2elib.check(all(gct.get(n) == th[n] for n in workers),
                     "pstats -group-by thread: the thread frames' cumulative times")
        gin, _ = annotate(export(thr, "callgrind", w.join("thr.callgrind"), "-group-by",
                                 "thread"), True)
        gthr = {}
        for name, v in gin.items():
            m = re.match(r"\[thread (\S+) \(TID \d+\)\]$", name)
            if m:
                gthr[m.group(1)] = v
        e2elib.check(all(round(gthr.get(n, 0) / 1e6) == th[n] for n in workers),
                     "callgrind -group-by thread: the thread functions' inclusive costs")
        sdoc = validate_speedscope(export(thr, "speedscope", w.join("thr.speedscope.json")))
        prof = {p["name"].split()[0]: p["endValue"] for p in sdoc["profiles"]}
        e2elib.check(all(round(prof.get(n, 0) / 1e6) == th[n] for n in workers),
                     "speedscope: one profile per thread, with the thread's time")
        tdoc = json.load(open(export(thr, "chrome", w.join("thr.json"))))
        tnames = {(e["pid"], e["tid"]): e["args"]["name"] for e in tdoc["traceEvents"]
                  if e["ph"] == "M" and e["name"] == "thread_name"}
        _, _, touter = chrome_slices(tdoc)
        byname = {tnames[k].split()[0]: v for k, v in touter.items()}
        e2elib.check(all(abs(byname.get(n, 0) / 1e6 - th[n]) <= 1 for n in workers),
                     "chrome: a track per thread, its slices adding up to its CPU time")

        # Python and native frames in one pstats file
        py = w.join("py")
        r = e2elib.pcollect([sys.executable, os.path.join(e2elib.SOURCE, "tests", "progs",
                                                          "python", "native.py"),
                             os.path.join(e2elib.BUILD, "tests", "progs", "libpyburn.so"),
                             "60", "30"], result=py, finalization="full",
                            options=["-knob", "sampling-interval=2"])
        if r.returncode:
            e2elib.fail("pcollect native.py: exit %d\n%s" % (r.returncode, r.stderr))
        pst = system_python(PSTATS_READ, export(py, "pstats", w.join("py.pstats")))
        kinds = {f["name"]: f["file"] for f in pst["functions"]}
        e2elib.check(kinds.get("py_work", "").endswith("native.py") and
                     kinds.get("call_native", "").endswith("native.py") and
                     "pyburn_spin" in kinds and not kinds["pyburn_spin"].endswith(".py"),
                     "pstats: Python functions (file, line) and native ones in one profile")
        callers = {f["name"]: [c[0] for c in f["callers"]] for f in pst["functions"]}
        seen, todo = set(), ["pyburn_spin"]
        while todo:
            n = todo.pop()
            if n not in seen:
                seen.add(n)
                todo += callers.get(n, [])
        # ctypes' own frames are named where the interpreter's build has symbols
        # (PyCFuncPtr_call), func@0x... where it is stripped (Debian's): libffi's are named.
        e2elib.check("call_native" in seen and "ffi_call" in seen,
                     "pstats: the native function called from the Python function (through "
                     "ctypes' and libffi's native frames)")

        check_synthetic(w)
        check_errors(res)


def check_synthetic(w):
    """Three metrics, ranks: exact values from report_synth."""
    k3 = synth.known3(w.join("k3"))
    wait = synth.KNOWN3["totals"]["Wait Time"]
    st = read_folded(export(k3, "folded", w.join("k3.folded"), "-metric", "Wait Time"))
    e2elib.check(round(sum(st.values()) / 1e6) == wait and
                 {k: round(v / 1e6) for k, v in folded_self(st).items()} ==
                 synth.KNOWN3["self"]["Wait Time"],
                 "folded -metric 'Wait Time': the wait's stacks and values")
    cg = export(k3, "callgrind", w.join("k3.callgrind"), "-metric", "CPU Time", "-metric",
                "Wait Time", "-metric", "Allocated Bytes")
    with open(cg) as f:
        text = f.read()
    e2elib.check("events: CPU_Time Wait_Time Allocated_Bytes" in text and
                 "summary: %d %d %d" % (1000 * 1000000, wait * 1000000,
                                         synth.KNOWN3["totals"]["Allocated Bytes"]) in text,
                 "callgrind: each -metric an event, the totals in the summary")
    cg1 = open(export(k3, "callgrind", w.join("k3main.callgrind"))).read()
    e2elib.check("events: CPU_Time\n" in cg1, "callgrind: the main metric by default")
    sdoc = validate_speedscope(export(k3, "speedscope", w.join("k3.json"), "-metric",
                                      "Allocated Bytes"))
    e2elib.check(all(p["unit"] == "bytes" for p in sdoc["profiles"]) and
                 sum(p["endValue"] for p in sdoc["profiles"]) ==
                 synth.KNOWN3["totals"]["Allocated Bytes"],
                 "speedscope -metric 'Allocated Bytes': in bytes, the total")
    tr = json.load(open(export(k3, "chrome", w.join("k3.trace.json"))))
    waits = [e for e in tr["traceEvents"] if e.get("cat") == "Wait Time" and e["ph"] == "X"]
    _, _, outer = chrome_slices({"traceEvents": waits})
    allocs = [e for e in tr["traceEvents"] if e.get("cat") == "Allocated Bytes"]
    e2elib.check(round(sum(outer.values()) / 1e6) == wait and
                 all(e["tid"] >= 10000000 for e in waits),
                 "chrome: Wait Time as slices on tracks of their own, adding up to the wait")
    e2elib.check(sum(e["args"]["value"] for e in allocs) ==
                 synth.KNOWN3["totals"]["Allocated Bytes"] and
                 all(e["ph"] == "i" for e in allocs),
                 "chrome: Allocated Bytes as instant events with their values")

    # ranks: the worker thread in a second process, rank 1
    rk = w.join("ranks")
    synth.known(rk)
    con = sqlite3.connect(os.path.join(rk, "result.db"))
    con.execute("UPDATE processes SET rank = 0")
    con.execute("INSERT INTO processes (id, pid, ppid, parent_id, origin, generation, host, rank,"
                " exe, command_line, start_ns, end_ns) SELECT 2, 2000, 1, NULL, 'start', 0, "
                "'testhost', 1, exe, command_line, start_ns, end_ns FROM processes WHERE id = 1")
    con.execute("UPDATE threads SET process_id = 2 WHERE id = 2")
    con.commit()
    con.close()
    st = read_folded(export(rk, "folded", w.join("rk.folded"), "-group-by", "rank"))
    by = collections.Counter()
    for k, v in st.items():
        by[k.split(";")[0]] += v
    want = {"[rank %d]" % i: v for i, v in enumerate(synth.KNOWN["threads"].values())}
    e2elib.check({k: round(v / 1e6) for k, v in by.items()} == want,
                 "folded -group-by rank: [rank N] outermost, the ranks' values")
    td = rows(rk, "-view", "top-down", "-group-by", "rank", "-threshold", "0")
    e2elib.check({r["Function Stack"]: ms(r["CPU Time:Total"]) for r in td if r["Group"]} ==
                 {"rank %d" % i: v for i, v in enumerate(synth.KNOWN["threads"].values())},
                 "top-down -group-by rank")


def check_errors(res):
    for args, what in [
            (["-format", "chrome", "-group-by", "thread"], "chrome takes no -group-by"),
            (["-format", "folded", "-metric", "CPU Time", "-metric", "CPU Time:Self"],
             "folded holds one metric"),
            (["-format", "html", "-view", "hotspots"], "an export takes no -view"),
            (["-format", "pstats", "-r", res], "pstats reads one result"),
            (["-format", "folded", "-group-by", "thred"], "unknown grouping"),
            (["-format", "pstatz"], "unknown format")]:
        cp = preport("-r", res, *args, code=2)
        e2elib.check(cp.stderr.startswith("preport: ") and cp.stdout == "",
                     "usage error (exit 2): " + what + ": " + cp.stderr.strip().splitlines()[0])


if __name__ == "__main__":
    main()
