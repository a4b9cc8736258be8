#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Python waits through the three tools on one interpreter: pcollect -collect threading runs
tests/progs/python/waits.py (time.sleep, Thread.join, Lock.acquire of a held lock, queue.get,
each timed by the program, then two threads burning Python code that wait for the GIL in
turn), pfinalize writes the result, and preport must show each call's waits under the Python
function that made it: its Wait Time:Total, over the time the program measured
(-time-filter), within 5% + 3 ms of that time; the GIL waits as the wait kind 'gil' under the
burners' Python functions; the Python call sites in the summary.

Usage: waits-python.py LABEL (tests/e2e/pylib.py)."""
import pylib
import e2elib as e
from report_util import rows

REL, ABS_NS = 0.05, 3000000

label = pylib.label_arg()
python = pylib.interpreter(label)


def ns(v):
    return round(float(v) * 1e9) if v not in ("", None) else 0


with e.Workdir("waits-python") as w:
    res, out = pylib.collect(w, "res", python, "waits.py", analysis="threading")
    known = dict((k, int(v)) for k, v in (x.split("=") for x in out.split()))
    e.check(len(known) == 14, "the program's output is whole")
    origin = int(dict(e.db_rows(res, "SELECT key, value FROM meta"))["start_monotonic_ns"])
    main_tid = e.db_rows(res, "SELECT t.tid FROM threads t JOIN processes p ON p.id = "
                              "t.process_id WHERE t.tid = p.pid ORDER BY p.id DESC LIMIT 1")[0][0]

    for func, key in (("sleeper", "sleep"), ("joiner", "join"), ("locker", "lock"),
                      ("getter", "queue")):
        start, end = known[key + "_start"] - origin, known[key + "_end"] - origin
        hs = rows(res, "-view", "hotspots", "-threshold", "0", "-filter",
                  "thread=%d" % main_tid, "-time-filter", "%.9f:%.9f" % (start / 1e9, end / 1e9))
        mine = [x for x in hs if x["Function"] == func and x["Module"] == "[python]"]
        got = ns(mine[0]["Wait Time:Total"]) if mine else 0
        want = end - start
        e.check(abs(got - want) <= REL * want + ABS_NS,
                "%s: Wait Time:Total %.1f ms under the Python function, the program measured "
                "%.1f ms" % (func, got / 1e6, want / 1e6))

    # The GIL: a wait kind of its own, under the burners' Python code.
    g = rows(res, "-view", "hotspots", "-group-by", "wait-kind,function", "-filter",
             "wait-kind=gil", "-metric", "Wait Time", "-threshold", "0")
    burners = {known["burner%d_tid" % i] for i in range(2)}
    gil = sum(ns(x["Wait Time:Self"]) for x in g)
    under = {x["Function"] for x in g if ns(x["Wait Time:Total"]) and x["Module"] == "[python]"}
    e.check(gil > 0 and {"burner", "spin_for"} & under,
            "wait kind gil: %.1f ms, under the Python functions %s" % (gil / 1e6, sorted(under)))
    per_thread = rows(res, "-view", "hotspots", "-group-by", "thread", "-filter",
                      "wait-kind=gil", "-metric", "Wait Time")
    for i in range(2):
        tid = known["burner%d_tid" % i]
        blocked, off = known["burner%d_blocked_ns" % i], known["burner%d_off_ns" % i]
        got = sum(ns(x["Wait Time:Self"]) for x in per_thread if int(x["TID"]) == tid)
        e.check(blocked - REL * blocked - ABS_NS <= got <= off + REL * off + ABS_NS,
                "burner-%d: %.1f ms waiting for the GIL (blocked %.1f ms, off the CPU %.1f ms)"
                % (i, got / 1e6, blocked / 1e6, off / 1e6))
    e.check(burners <= {int(x["TID"]) for x in per_thread}, "the GIL waits are the burners'")

    s = rows(res, "-view", "summary")
    sites = [x["Metric"].split(" (")[0] for x in s if x["Section"] == "Top Waiting Call Sites"]
    e.check({"sleeper", "locker"} <= set(sites),
            "summary: the Python functions among the top waiting call sites: %s" % sites)
    objects = [x["Metric"] for x in s if x["Section"] == "Top Waiting Objects"]
    e.check(any(x.startswith("[gil] (") for x in objects),
            "summary: [gil] among the top waiting objects: %s" % objects)
