#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Python waits (tests/progs/python/waits.py) on one interpreter, read from the raw streams:
time.sleep, Thread.join, Lock.acquire of a held lock and queue.get are waits under the Python
function that called them (the innermost frame of the program's file in the wait's stack: join
and get are threading's and queue's Python code, called there), and the waits between the
times the program took around each call (the GIL taken back after it included) add up to what
it measured, within 5% + 3 ms; two threads burning Python code wait for
the GIL in turn: waits of kind gil under their Python frames, each thread's (those under its
Python frames: its first, before it runs Python, precedes what it measures) at least the time
it was blocked (nothing else in its loop blocks), and those in the window it timed at most its
time off the CPU there (a wait also covers the time it takes to be run again once woken),
both as the thread read them from the scheduler (/proc/thread-self/schedstat), so a busy
machine changes them alike.

Usage: collect-waits-python.py LABEL (tests/e2e/pylib.py)."""
import pylib
import e2elib as e

REL, ABS_NS = 0.05, 3000000
# The burners' functions, where their GIL waits are (work.py's and waits.py's).
PROGRAM = ("burner", "schedstat", "spin", "spin_for", "cpu_ns")

label = pylib.label_arg()
python = pylib.interpreter(label)


def python_leaf(stream, codes, rec):
    """The innermost function of the program's own file in a wait's stack, "" when the stack
    has Python frames of other files only, None when it has none."""
    st = stream.stacks.get(rec["stack"])
    if st is None:
        e.fail("%s: a %s names undefined stack %d" % (stream.path, rec["type"], rec["stack"]))
    py = st.get("py") or []
    if not py:
        return None
    for code_id, _offset, _flags in py:
        name, filename = codes.get(code_id, ("?", "?"))
        if filename.endswith("waits.py") or filename.endswith("work.py"):
            return name
    return ""


with e.Workdir("waits-python") as w:
    res = w.join("res")
    r = e.pcollect([python, pylib.program("waits.py")], result=res, analysis="threading",
                   options=["-knob", "sampling-interval=1"], timeout=120)
    e.check(r.returncode == 0, "pcollect exits 0 (%d: %s)" % (r.returncode, r.stderr.strip()))
    known = {}
    for word in r.stdout.split():
        k, v = word.split("=")
        known[k] = int(v)
    e.check(len(known) == 18, "the program's output is whole")
    streams = e.load_streams(res)
    e.check(all(s.stats["bytes_skipped"] == 0 and s.stats["records_malformed"] == 0
                for s in streams), "every stream reads cleanly")
    pid = max(s.pid for s in streams if any(r["type"] == "py_code" for r in s.records))
    found = []  # (stream, record, innermost Python function)
    for s in e.thread_streams(streams):
        if s.pid != pid:
            continue
        codes = {c["id"]: (c["name"], c["filename"]) for c in s.of_type("py_code")}
        for rec in s.records:
            if rec["type"] in ("wait", "wait_sum"):
                found.append((s, rec, python_leaf(s, codes, rec)))

    def length(rec):
        return rec["duration"] if rec["type"] == "wait" else rec["total"]

    for func, key in (("sleeper", "sleep"), ("joiner", "join"), ("locker", "lock"),
                      ("getter", "queue")):
        mine = [(st, rec) for st, rec, f in found if f == func]
        kinds = sorted(set(rec["kind"] for _st, rec in mine))
        e.check(any(k != "gil" for k in kinds), "%s: waits under it (%s)" % (func, kinds))
        caller = mine[0][0]
        start, end = known[key + "_start"], known[key + "_end"]
        origin = caller.header["origin_ns"]
        inside = [rec for st, rec, _f in found if st is caller and rec["type"] == "wait" and
                  start <= origin + rec["time"] and
                  origin + rec["time"] + rec["duration"] <= end]
        got = sum(rec["duration"] for rec in inside)
        e.check(abs(got - (end - start)) <= REL * (end - start) + ABS_NS,
                "%s: its thread waited %.3f ms (%s) while the program measured %.3f ms" % (
                    func, got / 1e6, sorted(set(r["kind"] for r in inside)),
                    (end - start) / 1e6))
    for i in range(2):
        tid = known["burner%d_tid" % i]
        off, blocked = known["burner%d_off_ns" % i], known["burner%d_blocked_ns" % i]
        gil = [(rec, f) for s, rec, f in found if s.tid == tid and rec["kind"] == "gil"]
        got = sum(length(rec) for rec, _f in gil)
        # A new thread waits for the GIL before its first Python frame (those have none:
        # None) and in threading's own frames before the program's (other files only: "",
        # 38 ms of 478 once under the sanitizers).
        framed = sum(length(rec) for rec, f in gil if f)
        e.check(gil and framed >= got / 2 and all(f in PROGRAM + (None, "") for _r, f in gil),
                "burner-%d: GIL waits under its Python frames (%.3f of %.3f ms; %s)" % (
                    i, framed / 1e6, got / 1e6, sorted(set(str(f) for _r, f in gil))))
        # The thread measured itself from inside burner(), holding the GIL at both ends of
        # its window: a wait recorded alone is in the window or out of it (its first, before
        # it runs any Python; those of its schedstat() reads around the window). It was
        # blocked only waiting for the GIL there: its waits under its Python frames (the
        # short ones, summed, cannot be placed) are at least that; and those recorded in the
        # window at most its time off the CPU there.
        origin = [s for s in e.thread_streams(streams) if s.tid == tid][0].header["origin_ns"]
        start, end = known["burner%d_start" % i], known["burner%d_end" % i]
        inside = sum(rec["duration"] for rec, _f in gil if rec["type"] == "wait" and
                     start <= origin + rec["time"] <= end)
        e.check(blocked - REL * blocked - ABS_NS <= framed and inside <= off + REL * off + ABS_NS,
                "burner-%d waited %.3f ms for the GIL under its Python frames (%.3f ms in all, "
                "%.3f ms in its window): blocked %.3f ms, off the CPU %.3f ms" %
                (i, framed / 1e6, got / 1e6, inside / 1e6, blocked / 1e6, off / 1e6))
