#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""-format firefox: the Firefox Profiler's processed profile format, version 70, checked
against that version's documented fields (the profiler's src/types/profile.ts and markers.ts
of version 70: every key with its type, every table's columns as long as its length, every
index in range, string refs valid, sample times in order). Known answers: cpu-split's 60/30/10
under the e2elib.Sampled tolerances; tests/progs/waits' 300 ms sleep and its mutex wait as
Wait markers as long as the program measured them (5% + 3 ms, as collect-waits); regions'
solve/small and solve/large as Region markers nested in solve, the CPU samples inside each
its phase's CPU time; -time-filter keeps exactly its window's samples. The file is the same
bytes when exported twice; -view, -group-by, two results and a -metric with nothing to write
exit 2. With the argument mpi (report-firefox-mpi): a 2-rank mpi-job with every call timed,
each rank's MPI_Sendrecv markers with its ring's bytes exactly."""
import json
import numbers
import os
import re
import sys

import e2elib as e
import mpilib

VERSION = 70
ROUNDS, UNIT_MS = 2, 20  # cpu-split: 0.4 s of CPU, each work function once a round
WAIT_KEYS = ["cond_ns", "cond_obj", "mutex_ns", "mutex_obj", "pipe_fd", "pipe_ns",
             "short_cpu_ns", "short_n", "short_ns", "short_runnable_ns", "sleep_ns"]
REL, ABS_NS = 0.05, 3000000  # a wait against the program's own timing (collect-waits)

COLORS = {"transparent", "purple", "green", "orange", "yellow", "lightblue", "blue", "brown",
          "magenta", "red", "lightred", "darkgrey", "grey"}
DISPLAY = {"marker-chart", "marker-table", "timeline-overview", "timeline-memory",
           "timeline-ipc", "timeline-fileio", "timeline-network", "stack-chart"}
FORMATS = {"url", "file-path", "sanitized-string", "string", "unique-string", "flow-id",
           "terminating-flow-id", "duration", "time", "seconds", "milliseconds", "microseconds",
           "nanoseconds", "bytes", "percentage", "integer", "decimal", "hexadecimal", "pid",
           "tid", "list"}
WEIGHT_TYPES = {"samples", "tracing-ms", "bytes"}

# profile.ts v70: the tables' columns (every one required) and their element types.
INT, NUM, STR, BOOL, NULL = "int", "num", "str", "bool", "null"
TABLES = {
    "stackTable": {"frame": (INT,), "prefixOffset": (INT,)},
    "frameTable": {"address": (INT,), "lib": (INT,), "inlineDepth": (INT,),
                   "category": (INT, NULL), "subcategory": (INT, NULL), "func": (INT,),
                   "nativeSymbol": (INT, NULL), "innerWindowID": (INT, NULL),
                   "line": (INT, NULL), "column": (INT, NULL),
                   "originalLocation": (INT, NULL)},
    "funcTable": {"name": (INT,), "isJS": (BOOL,), "relevantForJS": (BOOL,),
                  "resource": (INT,), "source": (INT, NULL), "lineNumber": (INT, NULL),
                  "columnNumber": (INT, NULL), "originalLocation": (INT, NULL)},
    "resourceTable": {"name": (INT,), "host": (INT, NULL), "type": (INT,)},
    "nativeSymbols": {"libIndex": (INT,), "address": (INT,), "name": (INT,),
                      "functionSize": (INT, NULL)},
    "sources": {"id": (STR, NULL), "filename": (INT,), "startLine": (INT,),
                "startColumn": (INT,), "sourceMapURL": (INT, NULL), "content": (STR, NULL)},
    "sourceLocationTable": {"source": (INT,), "line": (INT,), "column": (INT,)},
}


def is_type(v, t):
    if t == NULL:
        return v is None
    if t == BOOL:
        return isinstance(v, bool)
    if t == INT:
        return isinstance(v, int) and not isinstance(v, bool)
    if t == NUM:
        return isinstance(v, numbers.Real) and not isinstance(v, bool)
    return isinstance(v, str)


class Checker:
    """Collects every violation of the documented format, to print them all."""

    def __init__(self, what):
        self.what = what
        self.errors = []

    def need(self, cond, msg):
        if not cond:
            self.errors.append(msg)
        return cond

    def key(self, obj, k, types, where):
        if not self.need(isinstance(obj, dict) and k in obj, "%s: no %s" % (where, k)):
            return None
        self.need(any(is_type(obj[k], t) for t in types),
                  "%s.%s: %r is not %s" % (where, k, obj[k], "/".join(types)))
        return obj[k]

    def table(self, obj, where, columns):
        """A struct-of-arrays table: columns as long as length, each element of its type."""
        n = self.key(obj, "length", (INT,), where)
        for col, types in columns.items():
            v = obj.get(col) if isinstance(obj, dict) else None
            if not self.need(isinstance(v, list), "%s.%s: not a list" % (where, col)):
                continue
            self.need(len(v) == n, "%s.%s: %d values, length %s" % (where, col, len(v), n))
            bad = [x for x in v if not any(is_type(x, t) for t in types)]
            self.need(not bad, "%s.%s: values not %s: %r" % (where, col, "/".join(types),
                                                            bad[:3]))
        return n or 0

    def refs(self, values, n, where, allow=()):
        bad = [v for v in values if v not in allow and v is not None and not 0 <= v < n]
        self.need(not bad, "%s: indexes out of range [0, %d): %r" % (where, n, bad[:5]))


def validate(p):
    """Every check of the pinned version's documented fields; the errors, empty when none."""
    c = Checker("profile")
    for k, t in (("meta", dict), ("libs", list), ("shared", dict), ("threads", list)):
        c.need(isinstance(p.get(k), t), "profile.%s: missing or not a %s" % (k, t.__name__))
    if c.errors:
        return c.errors
    meta, shared = p["meta"], p["shared"]
    for k, types in (("interval", (NUM,)), ("startTime", (NUM,)), ("processType", (INT,)),
                     ("product", (STR,)), ("stackwalk", (INT,)), ("version", (INT,)),
                     ("preprocessedProfileVersion", (INT,))):
        c.key(meta, k, types, "meta")
    c.need(meta.get("preprocessedProfileVersion") == VERSION,
           "meta.preprocessedProfileVersion is %r, pinned %d" %
           (meta.get("preprocessedProfileVersion"), VERSION))
    c.need(meta.get("stackwalk") in (0, 1), "meta.stackwalk is 0 or 1")
    cats = meta.get("categories")
    if c.need(isinstance(cats, list) and cats, "meta.categories: a list"):
        for i, cat in enumerate(cats):
            c.key(cat, "name", (STR,), "category %d" % i)
            c.need(cat.get("color") in COLORS, "category %d: color %r" % (i, cat.get("color")))
            subs = cat.get("subcategories")
            c.need(isinstance(subs, list) and subs and all(isinstance(s, str) for s in subs),
                   "category %d: subcategories, at least one" % i)
        c.need(any(cat.get("color") == "grey" for cat in cats), "meta.categories: one grey")
    schemas = {}
    for i, s in enumerate(meta.get("markerSchema") or []):
        where = "markerSchema %d" % i
        name = c.key(s, "name", (STR,), where)
        schemas[name] = s
        for k in ("tooltipLabel", "tableLabel", "chartLabel", "description"):
            c.need(k not in s or isinstance(s[k], str), "%s.%s: a string" % (where, k))
        c.need(isinstance(s.get("display"), list) and set(s["display"]) <= DISPLAY,
               "%s.display: %r" % (where, s.get("display")))
        c.need(isinstance(s.get("fields"), list), where + ".fields: a list")
        for f in s.get("fields") or []:
            c.key(f, "key", (STR,), where + " field")
            c.need(f.get("format") in FORMATS, "%s field %r: format %r" % (
                where, f.get("key"), f.get("format")))
    units = meta.get("sampleUnits")
    c.need(units is None or (units.get("time") in ("ms", "bytes") and
                             units.get("eventDelay") == "ms" and
                             units.get("threadCPUDelta") in ("ns", "µs",
                                                             "variable CPU cycles")),
           "meta.sampleUnits: %r" % units)
    for i, lib in enumerate(p["libs"]):
        for k in ("arch", "name", "path", "debugName", "debugPath", "breakpadId"):
            c.key(lib, k, (STR,), "libs[%d]" % i)
        c.key(lib, "codeId", (STR, NULL), "libs[%d]" % i)

    n = {name: c.table(shared.get(name), "shared." + name, cols)
         for name, cols in TABLES.items()}
    strings = shared.get("stringArray")
    c.need(isinstance(strings, list) and all(isinstance(s, str) for s in strings),
           "shared.stringArray: a list of strings")
    if c.errors:
        return c.errors
    nstr = len(strings)
    st, fr, fn = shared["stackTable"], shared["frameTable"], shared["funcTable"]
    rs, src = shared["resourceTable"], shared["sources"]
    c.refs(st["frame"], n["frameTable"], "stackTable.frame")
    c.need(all(0 <= off <= i for i, off in enumerate(st["prefixOffset"])),
           "stackTable.prefixOffset: 0 for a root, else back to an earlier stack")
    c.refs(fr["func"], n["funcTable"], "frameTable.func")
    c.refs(fr["lib"], len(p["libs"]), "frameTable.lib", allow=(-1,))
    c.refs(fr["category"], len(cats), "frameTable.category")
    c.need(all(cat is None or sub is None or 0 <= sub < len(cats[cat]["subcategories"])
               for cat, sub in zip(fr["category"], fr["subcategory"])),
           "frameTable.subcategory: within its category's")
    c.refs(fr["nativeSymbol"], n["nativeSymbols"], "frameTable.nativeSymbol")
    c.need(all(v is None or v >= 1 for v in fr["line"]), "frameTable.line: 1-based")
    c.refs(fn["name"], nstr, "funcTable.name")
    c.refs(fn["resource"], n["resourceTable"], "funcTable.resource", allow=(-1,))
    c.refs(fn["source"], n["sources"], "funcTable.source")
    c.refs(rs["name"], nstr, "resourceTable.name")
    c.need(all(0 <= t <= 5 for t in rs["type"]), "resourceTable.type: a ResourceType (0-5)")
    c.refs(src["filename"], nstr, "sources.filename")

    for ti, t in enumerate(p["threads"]):
        where = "threads[%d]" % ti
        for k, types in (("processType", (STR,)), ("processStartupTime", (NUM,)),
                         ("processShutdownTime", (NUM, NULL)), ("registerTime", (NUM,)),
                         ("unregisterTime", (NUM, NULL)), ("name", (STR,)),
                         ("isMainThread", (BOOL,)), ("pid", (STR,)), ("tid", (INT, STR)),
                         ("processName", (STR,))):
            c.key(t, k, types, where)
        c.need(isinstance(t.get("pausedRanges"), list), where + ".pausedRanges: a list")
        s = t.get("samples")
        ns = c.table(s, where + ".samples", {"stack": (INT, NULL), "time": (NUM,),
                                             "weight": (NUM,), "threadCPUDelta": (NUM, NULL)})
        c.need(s.get("weightType") in WEIGHT_TYPES, where + ".samples.weightType")
        if ns:
            c.refs(s["stack"], n["stackTable"], where + ".samples.stack")
            c.need(all(a <= b for a, b in zip(s["time"], s["time"][1:])),
                   where + ".samples.time: in order")
        m = t.get("markers")
        nm = c.table(m, where + ".markers", {"name": (INT,), "startTime": (NUM, NULL),
                                             "endTime": (NUM, NULL), "phase": (INT,),
                                             "category": (INT,)})
        if not c.need(isinstance(m.get("data"), list) and len(m["data"]) == nm,
                      where + ".markers.data: one per marker"):
            continue
        c.refs(m["name"], nstr, where + ".markers.name")
        c.refs(m["category"], len(cats), where + ".markers.category")
        for i in range(nm):
            ph, a, b, d = m["phase"][i], m["startTime"][i], m["endTime"][i], m["data"][i]
            c.need(ph in (0, 1, 2, 3), "%s marker %d: phase %r" % (where, i, ph))
            c.need(ph == 3 or a is not None, "%s marker %d: no startTime" % (where, i))
            c.need(ph != 1 or (b is not None and b >= a),
                   "%s marker %d: an interval ends after it starts" % (where, i))
            if d is None:
                continue
            schema = schemas.get(d.get("type"))
            if not c.need(schema is not None, "%s marker %d: type %r has no schema" % (
                    where, i, d.get("type"))):
                continue
            keys = {f["key"] for f in schema["fields"]} | {"type", "cause"}
            c.need(set(d) <= keys, "%s marker %d: fields %s not in its schema" % (
                where, i, sorted(set(d) - keys)))
            if "cause" in d:
                c.refs([d["cause"].get("stack")], n["stackTable"], "%s marker %d cause" % (
                    where, i))
    return c.errors


def load(path):
    with open(path, "rb") as f:
        data = f.read()
    p = json.loads(data)
    errors = validate(p)
    e.check(not errors, "%s: the pinned version's documented fields (%d errors: %s)" % (
        path, len(errors), "; ".join(errors[:8])))
    return p, data


def export(res, path):
    e.preport("-r", res, "-format", "firefox", "-report-output", path)
    return load(path)


def thread_samples(p, t):
    """Per sample of thread t: (its functions' names, its weight in ns)."""
    sh = p["shared"]
    st, fr, fn, s = sh["stackTable"], sh["frameTable"], sh["funcTable"], sh["stringArray"]
    out = []
    for stack, w in zip(t["samples"]["stack"], t["samples"]["weight"]):
        names = []
        while stack is not None:
            names.append(s[fn["name"][fr["func"][st["frame"][stack]]]])
            off = st["prefixOffset"][stack]
            stack = stack - off if off else None
        out.append((names, round(w * 1e6)))
    return out


def markers(p, t, typ):
    m, s = t["markers"], p["shared"]["stringArray"]
    return [{"name": s[m["name"][i]], "start": m["startTime"][i], "end": m["endTime"][i],
             "data": m["data"][i]} for i in range(m["length"])
            if (m["data"][i] or {}).get("type") == typ]


def check_split(w):
    # Its output, alone as under pcollect: the rounds (its times go to stderr).
    res = e.collect(w, "split", [e.prog("cpu-split"), ROUNDS, UNIT_MS], interval=1,
                    stdout="rounds=%d\n" % ROUNDS, finalize=True)
    p, first = export(res, w.join("split.json"))
    _p, again = export(res, w.join("split-again.json"))
    e.check(first == again, "split: two exports are the same bytes (%d)" % len(first))
    e.check(len(p["threads"]) == 1, "split: one thread (%d)" % len(p["threads"]))
    t = p["threads"][0]
    pid = re.search(r"PID (\d+)", t["processName"])
    e.check(pid and t["pid"] == pid.group(1) and t["tid"] == int(pid.group(1)) and
            t["isMainThread"] and t["name"] == "cpu-split" and
            t["processName"].startswith("cpu-split (PID "),
            "split: the thread named as preport names it, with its pid, tid and process "
            "(%r %r %r %r)" % (t["name"], t["pid"], t["tid"], t["processName"]))
    e.check(t["samples"]["weightType"] == "tracing-ms" and
            p["meta"]["sampleUnits"]["threadCPUDelta"] == "ns" and
            all(round(w * 1e6) == d for w, d in zip(t["samples"]["weight"],
                                                     t["samples"]["threadCPUDelta"])),
            "split: each sample weighs its CPU time (ms, and ns as threadCPUDelta)")
    samples = thread_samples(p, t)
    interval_ns = round(p["meta"]["interval"] * 1e6)
    stats = e.Sampled([w / interval_ns for _n, w in samples], interval_ns)
    total = sum(w for _n, w in samples)
    hs = e.rows(res, "-view", "hotspots")
    e.check(abs(total - sum(e.ns(r["CPU Time:Self"]) for r in hs)) <= 1e6 * len(hs),
            "split: the samples' weights add up to preport's CPU time (%.3f s)" % (total / 1e9))
    work = ["work_sixty", "work_thirty", "work_ten"]
    under = {f: sum(w for names, w in samples if f in names) for f in work}
    both = sum(under.values())
    for f, want in zip(work, (0.6, 0.3, 0.1)):
        e.check_share(stats, under[f] / both, want, "split: %s" % f, stretches=ROUNDS)
    # -time-filter: the samples of the window, exactly ([from, to), ns)
    ns = [round(x * 1e6) for x in t["samples"]["time"]]
    a, b = ns[len(ns) // 4], ns[3 * len(ns) // 4]
    window = "%d.%09d:%d.%09d" % (a // 10**9, a % 10**9, b // 10**9, b % 10**9)
    path = w.join("window.json")
    e.preport("-r", res, "-format", "firefox", "-time-filter", window, "-report-output", path)
    got = [round(x * 1e6) for x in load(path)[0]["threads"][0]["samples"]["time"]]
    e.check(got == [x for x in ns if a <= x < b],
            "split: -time-filter %s keeps the %d samples of the window" % (window, len(got)))
    sh = p["shared"]
    fi = sh["stringArray"].index("work_sixty")
    func = sh["funcTable"]["name"].index(fi)
    src = sh["funcTable"]["source"][func]
    res_i = sh["funcTable"]["resource"][func]
    e.check(sh["stringArray"][sh["sources"]["filename"][src]].endswith("cpu-split.c") and
            sh["funcTable"]["lineNumber"][func] > 0 and
            sh["stringArray"][sh["resourceTable"]["name"][res_i]] == "cpu-split" and
            sh["resourceTable"]["type"][res_i] == 1 and
            any(sh["frameTable"]["func"][i] == func and sh["frameTable"]["line"][i]
                for i in range(sh["frameTable"]["length"])),
            "split: work_sixty with its file, line and module (a library resource)")


def check_waits(w):
    # It prints the times it measured: the lines collect-waits knows, numbers aside.
    res = e.collect(w, "waits", [e.prog("waits")], analysis="threading", finalize=True)
    known = dict((k, int(v)) for k, v in re.findall(r"(\w+)=(\d+)", res.stdout))
    e.check(sorted(known) == WAIT_KEYS and len(res.stdout.splitlines()) == 5,
            "waits: exit 0 and its five lines of figures (%r)" % res.stdout)
    p, _data = export(res, w.join("waits.json"))
    main = [t for t in p["threads"] if t["isMainThread"] and
            t["tid"] == int(t["pid"].split(".")[0]) and
            any(m["data"]["function"] == "sleep_300ms" for m in markers(p, t, "Wait"))]
    e.check(len(main) == 1, "waits: the main thread holds the sleep")
    waits = markers(p, main[0], "Wait")
    for fn, kind, obj, want in (("sleep_300ms", "sleep", "[sleep]", known["sleep_ns"]),
                                ("mutex_waiter", "mutex", "held", known["mutex_ns"])):
        mine = [m for m in waits if m["data"]["function"] == fn]
        got = sum((m["end"] - m["start"]) * 1e6 for m in mine)
        e.check(mine and all(m["data"]["kind"] == kind and m["data"]["object"] == obj and
                             m["name"] == "Wait: " + kind and "stack" in m["data"]["cause"]
                             for m in mine),
                "waits: %s's %s wait on %s, with its stack (%s)" % (
                    fn, kind, obj, [(m["name"], m["data"]) for m in mine][:2]))
        e.check(abs(got - want) <= REL * want + ABS_NS,
                "waits: %s's marker lasts %.3f ms, the program measured %.3f ms (+- 5%% + 3 ms)"
                % (fn, got / 1e6, want / 1e6))


def check_regions(w):
    res = e.collect(w, "regions", [e.prog("regions"), "0.3"], options=["-start-paused"],
                    interval=1, stdout="regions done\n", finalize=True)
    ns = {}
    for word in res.stderr.strip().splitlines()[-1].split():
        k, v = word.split("=")
        ns[k[:-3]] = int(v)
    p, _data = export(res, w.join("regions.json"))
    t = p["threads"][0]
    regions = {m["name"]: m for m in markers(p, t, "Region")}
    e.check(set(regions) == {"solve", "solve/small", "solve/large"} and
            all(m["data"]["path"] == k for k, m in regions.items()),
            "regions: a Region marker for solve, solve/small, solve/large (%s)" % sorted(regions))
    outer, small, large = regions["solve"], regions["solve/small"], regions["solve/large"]
    e.check(outer["start"] <= small["start"] < small["end"] <= large["start"] <
            large["end"] <= outer["end"],
            "regions: solve/small then solve/large, both inside solve")
    interval_ns = round(p["meta"]["interval"] * 1e6)
    times = t["samples"]["time"]
    weights = [round(x * 1e6) for x in t["samples"]["weight"]]
    stats = e.Sampled([x / interval_ns for x in weights], interval_ns)
    for name, phase in (("solve/small", "small"), ("solve/large", "large")):
        m = regions[name]
        got = sum(x for at, x in zip(times, weights) if m["start"] < at <= m["end"])
        e.check_time(stats, got, ns[phase], "regions: the CPU samples inside %s" % name,
                     stretches=1, extra_ns=e.TICK_NS)


def check_usage(w):
    res, waits = e.Result(w.join("split")), e.Result(w.join("waits"))
    for r, args, words in ((res, ["-view", "hotspots"], "takes no -view"),
                           (res, ["-group-by", "thread"], "takes no -group-by"),
                           (res, ["-r", res], "reads one result"),
                           (waits, ["-metric", "Wait Count"], "-metric named none of them")):
        cp = e.preport("-r", r, "-format", "firefox", *args, code=2)
        e.check(words in cp.stderr and "-format firefox" in cp.stderr,
                "usage: -format firefox %s exits 2: %s" % (" ".join(args), cp.stderr.strip()))


def check_mpi(w, abi="openmpi", ring=20, unit_ms=50):
    """tests/progs/mpi-job on 2 ranks with every call timed (-knob mpi-threshold=0): rank r's
    MPI_Sendrecv markers are its ring's calls, with its bytes exactly, inside its "rings"
    region."""
    mpilib.shim(abi)
    prog = mpilib.built(os.path.join("tests", "progs", "mpi-job-" + abi),
                        "no %s development files at build time" % abi,
                        mpilib.PACKAGES[abi].split())
    res = w.join("job")
    cp = mpilib.job(abi, ["n1"], 2, res, [prog, str(unit_ms), str(ring)], options=[
        "-knob", "mpi-threshold=0", "-knob", "sampling-interval=2"])
    e.check(sorted(x for x in cp.stdout.splitlines() if x) ==
            ["rank %d of 2 done, sum 1" % r for r in range(2)],
            "mpi: both ranks ran to their end (%r)" % cp.stdout)
    p, _data = export(res, w.join("job.json"))
    for r in range(2):
        t = [t for t in p["threads"] if ", rank %d," % r in t["processName"] and
             t["isMainThread"]]
        e.check(len(t) == 1, "mpi: rank %d's main thread" % r)
        calls = [m for m in markers(p, t[0], "MPI") if m["data"]["function"] == "MPI_Sendrecv"]
        rings = [m for m in markers(p, t[0], "Region") if m["name"] == "rings"]
        sent = sum(m["data"]["sent"] for m in calls)
        received = sum(m["data"]["received"] for m in calls)
        e.check(len(calls) == ring and all(m["name"] == "MPI_Sendrecv" and
                                           m["data"]["communicatorSize"] == 2 and
                                           "stack" in m["data"]["cause"] for m in calls),
                "mpi: rank %d has %d MPI_Sendrecv markers, with their communicator and stack "
                "(%d)" % (r, ring, len(calls)))
        e.check(sent == ring * (r + 1) * 1024 and received == ring * ((r + 1) % 2 + 1) * 1024,
                "mpi: rank %d's MPI_Sendrecv markers sent %d and received %d bytes (known %d, %d)"
                % (r, sent, received, ring * (r + 1) * 1024, ring * ((r + 1) % 2 + 1) * 1024))
        e.check(len(rings) == 1 and all(rings[0]["start"] <= m["start"] and
                                        m["end"] <= rings[0]["end"] for m in calls),
                "mpi: rank %d's calls inside its rings region" % r)


with e.Workdir("report-firefox") as w:
    if sys.argv[1:] == ["mpi"]:
        check_mpi(w)
    else:
        check_split(w)
        check_waits(w)
        check_regions(w)
        check_usage(w)
