#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Waits through pfinalize and preport, exactly: tests/progs/wait-synth writes a result whose
waits (sleep, mutex, short mutex waits, condition, pipe read, join, child, one whose stack was
lost) have known lengths on known stacks, with CPU samples, values of a metric of its own and
samples spinning in libgomp (Spin Time) under an OpenMP region where one thread works twice
as long. Every number is checked: result.db (metrics, contexts, samples, timeline, meta),
pfinalize's summary, and every view in CSV, JSON and text, with the wait groupings, filters,
-time-filter, the summary's thread time and top waiting rows, and the timeline view."""
import collections
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2elib  # noqa: E402
from e2elib import json_rows, ms, preport, rows  # noqa: E402

MS = 1000000
check = e2elib.check


def expected_label(w, child):
    """The sync object's label as preport shows it (docs/preport.md)."""
    if w["kind"] == "sleep":
        return "[sleep]"
    if w["kind"] == "join":
        return "thread 0x%x" % w["object"]
    if w["kind"] == "read":
        return "%s (fd %d)" % (w["name"], w["object"])
    if w["kind"] == "child":
        return "%s (pid %d)" % (w["name"], child)
    return w["name"]  # a variable, or an OpenMP construct's function and line


def sums(plan, key):
    """Wait Time (ms) and Wait Count of the plan's waits per key(wait)."""
    t, c = collections.Counter(), collections.Counter()
    for w in plan["waits"]:
        t[key(w)] += w["ns"] // MS
        c[key(w)] += w["count"]
    return t, c


def paths(res):
    """Per stack id: its function names, innermost first."""
    frames = dict(e2elib.db_rows(res, "SELECT fr.id, f.name FROM frames fr JOIN functions f "
                                      "ON f.id = fr.function_id"))
    stacks = {i: (p, f) for i, p, f in e2elib.db_rows(res, "SELECT id, parent_id, frame_id "
                                                         "FROM stacks")}
    out = {}
    for sid in stacks:
        names, s = [], sid
        while s is not None:
            names.append(frames[stacks[s][1]])
            s = stacks[s][0]
        out[sid] = names
    return out


def check_db(res, plan):
    tid = {"A": plan["threads"]["A"]["tid"], "B": plan["threads"]["B"]["tid"]}
    metrics = dict(e2elib.db_rows(res, "SELECT name, id FROM metrics"))
    want = {"CPU Time", "Wait Time", "Wait Count", "Widgets"}
    if plan["spin_ns"]:
        want.add("Spin Time")
    check(set(metrics) == want and metrics["CPU Time"] == 1,
          "metrics: %s (CPU Time id 1)" % sorted(metrics))
    order = [n for (n,) in e2elib.db_rows(res, "SELECT name FROM metrics ORDER BY display_order")]
    check(order == [m for m in ["CPU Time", "Spin Time", "Wait Time", "Wait Count", "Widgets"]
                    if m in want], "display order %s" % order)
    ctx = {i: (k, o, t, n) for i, k, o, t, n in
           e2elib.db_rows(res, "SELECT id, wait_kind, object, object_type, object_name "
                               "FROM contexts")}
    types = {"sleep": None, "mutex": "mutex", "cond": "cond", "read": "fd", "join": "thread",
             "child": "pid", "openmp-barrier": "code"}
    for w in plan["waits"]:
        row = (w["kind"], w["object"], types[w["kind"]], w["name"])
        check(row in ctx.values(), "context %s" % (row,))
    check(len(ctx) == len({(w["kind"], w["object"]) for w in plan["waits"]}),
          "one context per (kind, object): %d" % len(ctx))

    # Wait Time and Wait Count per thread, call site and context, from the samples table.
    path = paths(res)
    tids = dict(e2elib.db_rows(res, "SELECT id, tid FROM threads"))
    got_t, got_c = collections.Counter(), collections.Counter()
    counted = True
    for thread, stack, metric, context, count, value in e2elib.db_rows(
            res, "SELECT thread_id, stack_id, metric_id, context_id, count, value FROM samples"
                 " WHERE metric_id IN (?, ?)", (metrics["Wait Time"], metrics["Wait Count"])):
        k, o = ctx[context][:2]
        for w in plan["waits"]:
            if (tids[thread], k, o) == (tid[w["thread"]], w["kind"], w["object"]) and \
                    w["function"] in path[stack]:
                key = (w["thread"], w["function"], k, o)
                if metric == metrics["Wait Time"]:
                    got_t[key] += value // MS
                else:
                    got_c[key] += value
                    counted &= count == value
                break
        else:
            e2elib.fail("a wait sample of no planned wait: thread %d stack %s context %s"
                        % (tids[thread], path[stack], ctx[context]))
    check(counted, "Wait Count rows count their waits")
    want_t, want_c = sums(plan, lambda w: (w["thread"], w["function"], w["kind"], w["object"]))
    check(got_t == want_t, "Wait Time per thread, call site and object: %s" % dict(got_t))
    check(got_c == want_c, "Wait Count per thread, call site and object: %s" % dict(got_c))
    lost = [p for s, p in path.items() if p[0] == "[damaged stack]"]
    check(len(lost) == 1, "the wait whose stack was lost is kept under [damaged stack]")
    leaves = {p[0] for s, p in path.items() if len(p) > 2 and p[1].startswith("synth_")
              and p[1] not in ("synth_burn", plan["region"])}
    check(leaves and not any(n.startswith("synth_") for n in leaves),
          "each wait's innermost frame is the blocking function: %s" % sorted(leaves))

    # The timeline: a Wait Time row (its duration) and a Wait Count row (1) at each wait's
    # start; the waits summed below the threshold are not there.
    tl = collections.defaultdict(set)
    for t, thread, metric, value in e2elib.db_rows(
            res, "SELECT time_ns, thread_id, metric_id, value FROM timeline"):
        tl[metric].add((tids[thread], t, value))
    want_rows = {(tid[w["thread"]], w["start_ns"], w["ns"]) for w in plan["waits"]
                 if not w["summed"]}
    check(tl[metrics["Wait Time"]] == want_rows, "timeline: Wait Time rows at the waits' starts")
    check(tl[metrics["Wait Count"]] == {(a, b, 1) for a, b, _ in want_rows},
          "timeline: a Wait Count row of 1 beside each")
    cpu_rows = len(tl[metrics["CPU Time"]])
    total = sum(plan["threads"][x]["samples"] for x in "AB") + 10
    check(cpu_rows == total, "timeline: %d CPU samples (%d written)" % (cpu_rows, total))
    if plan["spin_ns"]:
        spin = tl[metrics["Spin Time"]]
        check(sum(v for _, _, v in spin) == plan["spin_ns"] and spin <= tl[metrics["CPU Time"]],
              "timeline: the spinning CPU samples are Spin Time rows too, at their times")
        spin_leaf = {path[s][0] for (s,) in e2elib.db_rows(
            res, "SELECT stack_id FROM samples WHERE metric_id = ?", (metrics["Spin Time"],))}
        check(spin_leaf == {"GOMP_barrier"}, "Spin Time is the samples in GOMP_barrier")
    meta = dict(e2elib.db_rows(res, "SELECT key, value FROM meta"))
    total_waits = sum(w["count"] for w in plan["waits"])
    short = sum(w["count"] for w in plan["waits"] if w["summed"])
    check((meta.get("waits_total"), meta.get("waits_short"), meta.get("wait_threshold_ns")) ==
          (str(total_waits), str(short), "100000"), "meta: waits_total, waits_short, threshold")
    widgets = e2elib.db_rows(res, "SELECT stack_id, count, value FROM samples WHERE metric_id = ?",
                             (metrics["Widgets"],))
    check([(path[s][0], c, v) for s, c, v in widgets] == [("synth_burn", 2, 7)],
          "VALUE records: Widgets 7 in 2 events on synth_burn")


def check_summary(res, plan, fin):
    tid = plan["threads"]
    waits = sum(w["ns"] for w in plan["waits"])
    n = sum(w["count"] for w in plan["waits"])
    line = "waits:     %d (%.3f s), %d shorter than the threshold of 100000 ns" % (
        n, waits / 1e9, sum(w["count"] for w in plan["waits"] if w["summed"]))
    check(line in fin.stderr, "pfinalize says: %s" % line)
    life = sum(tid[x]["end_ns"] - tid[x]["start_ns"] for x in "AB")
    # B's spinning in libgomp is in both its CPU time and its waits: counted once.
    spin = {"A": 0, "B": plan["spin_ns"]}
    rest = 0
    for x in "AB":
        t = tid[x]
        w = sum(p["ns"] for p in plan["waits"] if p["thread"] == x)
        rest += max(0, t["end_ns"] - t["start_ns"] - t["cpu_ns"] - max(w - spin[x], 0))
    line = "'wait-synth': %.3f s of its threads' %.3f s" % (rest / 1e9, life / 1e9)
    check(line in fin.stderr, "pfinalize says: unattributed: pid %d %s" % (plan["pid"], line))

    s = rows(res, "-view", "summary")
    val = {(r["Section"], r["Metric"]): r for r in s}
    names = {"A": "synth-main", "B": "synth-worker"}
    for x in "AB":
        t = tid[x]
        label = "%s (TID %d)" % (names[x], t["tid"])
        elapsed = t["end_ns"] - t["start_ns"]
        wait = sum(p["ns"] for p in plan["waits"] if p["thread"] == x)
        parts = {"Elapsed Time": elapsed, "CPU Time": t["cpu_ns"], "Wait Time": wait,
                 "Unattributed Time": elapsed - t["cpu_ns"] - max(wait - spin[x], 0)}
        if spin[x]:
            parts.update({"Spin Time": spin[x], "Sleeping Wait Time": max(wait - spin[x], 0)})
        check(not spin[x] or ("Thread Time", label + " Spin Time") in val,
              "summary: %s spins: its Spin Time and Sleeping Wait Time" % label)
        for what, ns in parts.items():
            r = val.get(("Thread Time", "%s %s" % (label, what)))
            check(r is not None and ms(r["Value"]) == ns // MS,
                  "summary: %s %s %.3f s" % (label, what, ns / 1e9))
        check(abs(float(val[("Thread Time", label + " Wait Time")]["Percent"]) -
                  100.0 * wait / elapsed) < 0.06, "summary: %s waits %.1f%% of its life"
              % (label, 100.0 * wait / elapsed))
    sites, _ = sums(plan, lambda w: w["function"])
    counts = collections.Counter()
    for w in plan["waits"]:
        counts[w["function"]] += w["count"]
    top = [(r["Metric"], ms(r["Value"])) for r in s if r["Section"] == "Top Waiting Call Sites"]
    want = sorted(sites.items(), key=lambda kv: (-kv[1], kv[0]))[:5]
    check(top == [("%s (%d wait%s)" % (f, counts[f], "" if counts[f] == 1 else "s"), v)
                  for f, v in want], "summary: top waiting call sites %s" % top)
    objs, _ = sums(plan, lambda w: expected_label(w, plan["child"]))
    top = [(r["Metric"].rsplit(" (", 1)[0], ms(r["Value"])) for r in s
           if r["Section"] == "Top Waiting Objects"]
    check(top == sorted(objs.items(), key=lambda kv: -kv[1])[:5],
          "summary: top waiting objects %s" % top)
    if plan["construct"]:
        # The region as the agent recorded it: its time, and each thread's barrier wait.
        sec = "OpenMP Region " + plan["construct"]
        bw = {x: sum(w["ns"] for w in plan["waits"] if w["thread"] == x and
                     w["kind"] == "openmp-barrier") for x in "AB"}
        busy = {x: 40 * MS - bw[x] for x in "AB"}
        imb = 100.0 * (max(busy.values()) - sum(busy.values()) / 2) / max(busy.values())
        got = [(val.get((sec, m)) or {}).get("Value") for m in
               ("Instances", "Threads", "Region Time", "Imbalance")]
        check(got == ["1", "2", "0.040", "%.1f" % imb],
              "summary: %s: one instance of 40 ms, 2 threads, imbalance %.1f%%" % (sec, imb))
        for x, name in (("A", "synth-main"), ("B", "synth-worker")):
            m = "%s (TID %d) Waiting at the Barrier" % (name, tid[x]["tid"])
            check(ms(val[(sec, m)]["Value"]) == bw[x] // MS,
                  "summary: %s waited %d ms at the region's barrier" % (name, bw[x] // MS))
    elif plan["region"]:
        sec = "OpenMP Region " + plan["region"]
        busy = plan["busy_ns"]
        mean = (busy["A"] + busy["B"]) / 2
        imb = 100.0 * (max(busy.values()) - mean) / max(busy.values())
        check(abs(float(val[(sec, "Imbalance")]["Value"]) - imb) < 0.05,
              "summary: %s imbalance %.1f%% (busy A %d ms, B %d ms, B spinning %d ms)"
              % (sec, imb, busy["A"] // MS, busy["B"] // MS, plan["spin_ns"] // MS))
        slow = "synth-worker (TID %d) Waiting for the Slowest" % tid["B"]["tid"]
        check(ms(val[(sec, slow)]["Value"]) == (busy["A"] - busy["B"]) // MS,
              "summary: the lighter thread waits %d ms for the slowest"
              % ((busy["A"] - busy["B"]) // MS))
    text = preport("-r", res).stdout
    check("Thread Time" in text and "Top Waiting Objects" in text and "synth_lock" in text,
          "summary text has the thread time and the waiting objects")


def check_views(res, plan):
    per_fn, per_fn_n = sums(plan, lambda w: w["function"])
    hs = rows(res, "-view", "hotspots", "-threshold", "0")
    total = {r["Function"]: ms(r["Wait Time:Total"]) for r in hs}
    check(all(total.get(f) == v for f, v in per_fn.items()),
          "hotspots: each call site's Wait Time:Total is its waits' %s" % dict(per_fn))
    count = {r["Function"]: int(r["Wait Count:Total"] or 0) for r in hs}
    check(all(count.get(f) == v for f, v in per_fn_n.items()),
          "hotspots: each call site's Wait Count:Total")
    check(total["main"] == sum(per_fn.values()) - per_fn["[damaged stack]"],
          "hotspots: main's Wait Time:Total holds every wait under it")
    for view, extra in [("hotspots", []), ("top-down", []), ("bottom-up", []),
                        ("caller-callee", []), ("callstacks", []), ("timeline", []),
                        ("source", ["-source-object", "function=synth_locker"])]:
        for fmt in ("csv", "json", "text"):
            out = preport("-r", res, "-view", view, "-format", fmt, "-threshold", "0",
                          *extra).stdout
            check("Wait Time" in out and ("Wait Count" in out or view == "timeline"),
                  "%s (%s) shows the wait metrics beside CPU Time" % (view, fmt))

    # -group-by sync-object and wait-kind, flat.
    objs, objs_n = sums(plan, lambda w: expected_label(w, plan["child"]))
    g = rows(res, "-view", "hotspots", "-group-by", "sync-object")
    got = {r["Sync Object"]: ms(r["Wait Time:Self"]) for r in g}
    check({k: v for k, v in got.items() if v} == dict(objs),
          "hotspots -group-by sync-object: Wait Time per object %s" % got)
    check([r["Sync Object"] for r in g][:2] == ["[sleep]", "thread 0x1234"],
          "hotspots -group-by sync-object: heaviest waits first")
    nowait = [r for r in g if r["Sync Object"] == "[no wait]"]
    cpu_ms = (sum(plan["threads"][x]["cpu_ns"] for x in "AB") + 10 * MS) // MS
    check(len(nowait) == 1 and ms(nowait[0]["CPU Time:Self"]) == cpu_ms,
          "hotspots -group-by sync-object: the CPU samples are [no wait]")
    kinds, _ = sums(plan, lambda w: (str(plan["threads"][w["thread"]]["tid"]), w["kind"]))
    g = rows(res, "-view", "hotspots", "-group-by", "thread,wait-kind", "-metric", "Wait Time")
    got = {(r["TID"], r["Wait Kind"]): ms(r["Wait Time:Self"]) for r in g}
    check(got == {k: v for k, v in kinds.items() if v},
          "hotspots -group-by thread,wait-kind %s" % got)
    g = rows(res, "-view", "hotspots", "-group-by", "sync-object,function", "-metric",
             "Wait Time")
    got = {(r["Sync Object"], r["Function"]): ms(r["Wait Time:Total"]) for r in g}
    check(all(got.get((expected_label(w, plan["child"]), w["function"])) ==
              objs[expected_label(w, plan["child"])] for w in plan["waits"]
              if w["function"] != "[damaged stack]" and w["kind"] != "sleep"),
          "hotspots -group-by sync-object,function: each object under its call site")

    # Tree views: the groups as top levels.
    td = rows(res, "-view", "top-down", "-group-by", "sync-object", "-threshold", "0")
    got = {r["Function Stack"]: ms(r["Wait Time:Total"]) for r in td
           if r["Group"] == "sync-object"}
    check({k: v for k, v in got.items() if v} == dict(objs),
          "top-down -group-by sync-object: a subtree per object")
    kinds, _ = sums(plan, lambda w: w["kind"])
    bu = rows(res, "-view", "bottom-up", "-group-by", "wait-kind", "-threshold", "0")
    got = {r["Function Stack"]: ms(r["Wait Time:Self"]) for r in bu if r["Group"] == "wait-kind"}
    check({k: v for k, v in got.items() if v} == dict(kinds),
          "bottom-up -group-by wait-kind: a row per kind")
    cs = rows(res, "-view", "callstacks", "-group-by", "wait-kind,thread", "-threshold", "0")
    check(sum(ms(r["Wait Time:Self"]) for r in cs if r["Group"] == "wait-kind") ==
          sum(kinds.values()), "callstacks -group-by wait-kind,thread: the kinds add up")
    cc = rows(res, "-view", "caller-callee", "-function", "synth_locker")
    me = [r for r in cc if r["Relation"] == "function"]
    check(len(me) == 1 and ms(me[0]["Wait Time:Total"]) == per_fn["synth_locker"],
          "caller-callee -function synth_locker: its Wait Time")
    src = rows(res, "-view", "source", "-source-object", "function=synth_locker")
    check(sum(ms(r["Wait Time:Total"]) for r in src) == per_fn["synth_locker"],
          "source: synth_locker's lines hold its Wait Time")
    js = json_rows(res, "-view", "hotspots", "-group-by", "wait-kind")
    check({r["Wait Kind"]: round(r["Wait Time:Self"] * 1000) for r in js
           if r["Wait Time:Self"]} == dict(kinds), "JSON: hotspots -group-by wait-kind")


def check_filters(res, plan):
    def wait_total(*args):
        return sum(ms(r["Wait Time:Self"]) for r in rows(res, "-view", "hotspots",
                                                         "-threshold", "0", *args))

    by_kind, _ = sums(plan, lambda w: w["kind"])
    check(wait_total("-filter", "wait-kind=mutex") == by_kind["mutex"],
          "-filter wait-kind=mutex keeps the mutex waits")
    check(wait_total("-filter", "wait-kind!=sleep") == sum(by_kind.values()) - by_kind["sleep"],
          "-filter wait-kind!=sleep drops the sleeps")
    omp = sum(v for k, v in by_kind.items() if k.startswith("openmp-"))
    if omp:
        check(wait_total("-filter", "wait-kind=openmp") == omp,
              "-filter wait-kind=openmp keeps the openmp-* waits")
        preport("-r", res, "-view", "hotspots", "-filter", "wait-kind=open", code=2)
    check(wait_total("-filter", "sync-object=synth_lock") == by_kind["mutex"],
          "-filter sync-object=synth_lock")
    check(wait_total("-filter", "sync-object=fd 5") == by_kind["read"], "-filter 'sync-object=fd 5'")
    check(wait_total("-filter", "sync-object=0x1234") == by_kind["join"],
          "-filter sync-object=0x1234 (a value)")
    cp = preport("-r", res, "-view", "hotspots", "-filter", "wait-kind=mutx", code=2)
    check("did you mean 'mutex'" in cp.stderr, "an unknown wait kind names the nearest")
    # -time-filter reads the timeline: the waits starting in the window, not the summed ones.
    lo, hi = 700 * MS, 860 * MS
    inside = [w for w in plan["waits"] if not w["summed"] and lo <= w["start_ns"] < hi]
    r = rows(res, "-view", "hotspots", "-threshold", "0", "-time-filter", "0.7:0.86")
    check(sum(ms(x["Wait Time:Self"]) for x in r) == sum(w["ns"] for w in inside) // MS and
          sum(int(x["Wait Count:Self"] or 0) for x in r) == len(inside),
          "-time-filter 0.7:0.86: the %d waits that began then" % len(inside))
    d = rows(res, "-r", res, "-view", "hotspots")
    check(all(ms(x["Wait Time:Self:Difference"]) == 0 for x in d) and
          sum(ms(x["Wait Time:Self:Result 1"]) for x in d) == sum(by_kind.values()),
          "difference of a result with itself: Wait Time 0")


def check_timeline(res, plan):
    """Wait Time Share per thread and bucket, from the waits' intervals."""
    buckets, end = 12, 1200 * MS
    tl = rows(res, "-view", "timeline", "-time-buckets", str(buckets))
    names = {"synth-main": "A", "synth-worker": "B"}
    ok = True
    for r in tl:
        x = names.get(r["Thread"])
        if not x:
            continue
        s, e = ms(r["Start"]) * MS, ms(r["End"]) * MS
        ns = sum(max(0, min(e, w["start_ns"] + w["ns"]) - max(s, w["start_ns"]))
                 for w in plan["waits"] if w["thread"] == x and not w["summed"])
        ok &= abs(float(r["Wait Time Share"]) - 100.0 * ns / (e - s)) < 0.051
    check(ok and len(tl) == 3 * buckets and ms(tl[-1]["End"]) * MS == end,
          "timeline: %d buckets a thread, Wait Time Share from the waits' intervals" % buckets)
    a = [r for r in tl if r["Thread"] == "synth-main"]
    check(float(a[0]["CPU Time Share"]) == 100.0 and float(a[-1]["CPU Time Share"]) == 0.0,
          "timeline: synth-main burns first, waits last")
    r = rows(res, "-view", "timeline", "-time-buckets", "4", "-filter", "wait-kind=join")
    check({x["Thread"] for x in r} == {"synth-worker"}, "timeline follows -filter")
    preport("-r", res, "-view", "hotspots", "-time-buckets", "4", code=2)


def main():
    with e2elib.Workdir("waits-synth") as w:
        # Without the region's records, its imbalance comes from the CPU samples; with them
        # (OMPT's view), from the threads' waits in its barrier.
        for variant in ([], ["--omp-records"]):
            res = w.join("res" + "".join(variant))
            cp = e2elib.run([e2elib.prog("wait-synth"), res] + variant)
            if cp.returncode:
                e2elib.fail("wait-synth: %s" % cp.stderr)
            plan = json.loads(cp.stdout)
            print("-- wait-synth %s" % " ".join(variant), flush=True)
            fin = e2elib.pfinalize(res)
            check(fin.returncode == 0, "pfinalize on the synthetic waits")
            check_db(res, plan)
            check_summary(res, plan, fin)
            check_views(res, plan)
            check_filters(res, plan)
            check_timeline(res, plan)
            if variant and not plan["construct"]:
                print("note: built without OpenMP: no region records to check", flush=True)


if __name__ == "__main__":
    main()
