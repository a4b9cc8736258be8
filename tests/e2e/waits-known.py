#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Waits of known length through the three tools: pcollect -collect threading runs
tests/progs/waits (a 300 ms sleep, a condition signalled 200 ms later, a mutex another thread
holds 250 ms, a pipe read until a child writes 150 ms later, 300 sleeps of 10 us, each
measured by the program around its call), pfinalize writes the result, and preport must show
each wait within 5% + 3 ms of the program's measure (both clocks see the same delays, so a
busy machine changes both alike), on the function that waited and the right object (the
mutex by its variable's name), in every view that groups or filters by waits; the short
sleeps counted exactly, their total the program's less what it saw of the agent's work
around them (e2elib.check_short_waits()); and the main thread's Elapsed = CPU + Wait +
Unattributed with little unattributed, all its time being waits or CPU."""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2elib as e  # noqa: E402
from e2elib import preport, rows  # noqa: E402

REL, ABS_NS = 0.05, 3000000


def close(got_ns, want_ns):
    return abs(got_ns - want_ns) <= REL * want_ns + ABS_NS


def named(f, name):
    """f is the function name, or a clone gcc made of it (short_sleeps.constprop.0)."""
    return f == name or f.startswith(name + ".")


def main():
    with e.Workdir("waits-known") as w:
        res = e.collect(w, "res", [e.prog("waits")], analysis="threading")
        known = dict((k, int(v)) for k, v in (x.split("=") for x in res.stdout.split()))
        fin = e.finalize(res, ())
        e.check("waits:" in fin, "pfinalize writes the result and counts the waits")
        meta = dict(e.db_rows(res, "SELECT key, value FROM meta"))
        e.check(meta.get("analysis") == "threading" and int(meta.get("waits_total", 0)) > 300,
                "result.db: analysis threading, %s waits" % meta.get("waits_total"))

        # Each long wait on the function that waited, as long as the program measured (of its
        # kind: mutex_waiter also sleeps 1 ms at a time until the holder has the mutex).
        hs = rows(res, "-view", "hotspots", "-threshold", "0")
        cases = [("sleep_300ms", "sleep_ns", "sleep"), ("cond_waiter", "cond_ns", "cond"),
                 ("mutex_waiter", "mutex_ns", "mutex"), ("pipe_reader", "pipe_ns", "read")]
        for fn, key, kind in cases:
            got = sum(e.ns(x["Wait Time:Total"]) for x in rows(
                res, "-view", "hotspots", "-threshold", "0", "-filter", "wait-kind=" + kind)
                if named(x["Function"], fn))
            e.check(close(got, known[key]), "hotspots: %s waited %.1f ms (%s), the program "
                    "measured %.1f ms" % (fn, got / 1e6, kind, known[key] / 1e6))
        short = [x for x in hs if named(x["Function"], "short_sleeps")]
        e.check(sum(int(x["Wait Count:Total"] or 0) for x in short) == known["short_n"],
                "hotspots: short_sleeps made %d waits, each counted" % known["short_n"])
        got = sum(e.ns(x["Wait Time:Total"]) for x in short)
        e.check_short_waits(got, known, "hotspots")

        # On the right object: the mutex by its variable, the pipe by its fd and name.
        g = rows(res, "-view", "hotspots", "-group-by", "sync-object,function", "-metric",
                 "Wait Time", "-threshold", "0")
        pipe = re.compile(r"pipe:\[\d+\] \(fd %d\)$" % known["pipe_fd"])
        objects = [("held", "mutex_waiter", "mutex_ns"), ("cond", "cond_waiter", "cond_ns"),
                   (pipe, "pipe_reader", "pipe_ns"), ("[sleep]", "sleep_300ms", "sleep_ns")]
        for obj, fn, key in objects:
            got = sum(e.ns(x["Wait Time:Total"]) for x in g if named(x["Function"], fn) and
                      (obj.match(x["Sync Object"]) if hasattr(obj, "match")
                       else x["Sync Object"] == obj))
            e.check(close(got, known[key]), "-group-by sync-object,function: %s waited on "
                    "%s for %.1f ms (program: %.1f ms)" % (
                        fn, getattr(obj, "pattern", obj), got / 1e6, known[key] / 1e6))
        objs = rows(res, "-view", "hotspots", "-group-by", "sync-object")
        held = [x for x in objs if x["Sync Object"] == "held"]
        e.check(len(held) == 1 and held[0]["Object Type"] == "mutex" and
                close(e.ns(held[0]["Wait Time:Self"]), known["mutex_ns"]),
                "-group-by sync-object: the mutex 'held' by its name")
        text = preport("-r", res, "-view", "hotspots", "-group-by", "sync-object").stdout
        e.check(re.search(r"^held\s+mutex", text, re.M) is not None,
                "-group-by sync-object (text): the row 'held'")
        f = rows(res, "-view", "hotspots", "-filter", "wait-kind=mutex", "-threshold", "0")
        got = sum(e.ns(x["Wait Time:Total"]) for x in f if named(x["Function"], "mutex_waiter"))
        e.check(close(got, known["mutex_ns"]), "-filter wait-kind=mutex: mutex_waiter's wait")
        td = rows(res, "-view", "top-down", "-group-by", "wait-kind", "-threshold", "0")
        cond = [x for x in td if x["Group"] == "wait-kind" and x["Function Stack"] == "cond"]
        e.check(len(cond) == 1 and e.ns(cond[0]["Wait Time:Total"]) >= known["cond_ns"] * 0.95,
                "top-down -group-by wait-kind: a 'cond' subtree with the condition's wait")

        # The main thread's life: its CPU time, its waits and next to nothing else.
        s = rows(res, "-view", "summary")
        pid = e.db_rows(res, "SELECT pid FROM processes ORDER BY id LIMIT 1")[0][0]
        label = "waits (TID %d)" % pid
        v = {x["Metric"][len(label) + 1:]: e.ns(x["Value"]) for x in s
             if x["Section"] == "Thread Time" and x["Metric"].startswith(label + " ")}
        e.check(set(v) == {"Elapsed Time", "CPU Time", "Wait Time", "Unattributed Time"},
                "summary: %s's Elapsed, CPU, Wait and Unattributed Time" % label)
        add = v["CPU Time"] + v["Wait Time"] + v["Unattributed Time"]
        e.check(abs(add - v["Elapsed Time"]) <= 2000000 or
                (v["Unattributed Time"] == 0 and add >= v["Elapsed Time"]),
                "summary: Elapsed %.3f s = CPU %.3f + Wait %.3f + Unattributed %.3f" % (
                    v["Elapsed Time"] / 1e9, v["CPU Time"] / 1e9, v["Wait Time"] / 1e9,
                    v["Unattributed Time"] / 1e9))
        e.check(v["Unattributed Time"] <= 0.05 * v["Elapsed Time"] + 10000000,
                "summary: the main thread's unattributed time %.1f ms is within 5%% of its "
                "%.1f ms (its time is all waits or CPU)" % (v["Unattributed Time"] / 1e6,
                                                            v["Elapsed Time"] / 1e6))
        top = [x["Metric"] for x in s if x["Section"] == "Top Waiting Objects"]
        e.check(any(x.startswith("held (") for x in top) and
                any(x.startswith("cond (") for x in top),
                "summary: 'held' and 'cond' among the top waiting objects")
        sites = [x["Metric"].split(" (")[0] for x in s if x["Section"] == "Top Waiting Call Sites"]
        e.check(any(named(x, "sleep_300ms") for x in sites) and
                any(named(x, "mutex_waiter") for x in sites),
                "summary: sleep_300ms and mutex_waiter among the top waiting call sites")

        # The timeline holds each wait over its time: the main thread's shares add up to
        # its waits above the threshold.
        tl = rows(res, "-view", "timeline", "-time-buckets", "40",
                  "-filter", "thread=%d" % pid)
        covered = sum(float(x["Wait Time Share"]) / 100 * (e.ns(x["End"]) - e.ns(x["Start"]))
                      for x in tl)
        long_waits = e.db_rows(res, "SELECT coalesce(sum(tl.value), 0) FROM timeline tl "
                                    "JOIN threads t ON t.id = tl.thread_id JOIN metrics m ON "
                                    "m.id = tl.metric_id WHERE t.tid = ? AND m.name = "
                                    "'Wait Time'", (pid,))[0][0]
        e.check(abs(covered - long_waits) <= 40 * 0.0005 * v["Elapsed Time"] + 1000000,
                "timeline: the main thread's Wait Time Share covers its %.1f ms of waits" %
                (long_waits / 1e6))

        # Hotspots stays what it was: CPU Time alone, no context, nothing of the waits.
        hs_res = w.join("hs")
        r = e.pcollect([e.prog("waits")], result=hs_res)
        e.check(r.returncode == 0 and e.pfinalize(hs_res).returncode == 0,
                "pcollect -collect hotspots, pfinalize")
        e.check([n for (n,) in e.db_rows(hs_res, "SELECT name FROM metrics")] == ["CPU Time"] and
                e.db_rows(hs_res, "SELECT count(*) FROM contexts")[0][0] == 0 and
                e.db_rows(hs_res, "SELECT count(*) FROM samples WHERE context_id != 0")[0][0] ==
                0 and not e.db_rows(hs_res, "SELECT key FROM meta WHERE key LIKE 'wait%'"),
                "hotspots: CPU Time alone, no contexts, no wait keys")
        text = preport("-r", hs_res).stdout
        e.check("Thread Time" not in text and "Wait" not in text,
                "hotspots: the summary says nothing of waits")


if __name__ == "__main__":
    main()
