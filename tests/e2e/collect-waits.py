#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Waits of known length (tests/progs/waits.c), read from the raw streams: a 300 ms sleep, a
condition signalled 200 ms later, a mutex another thread holds for 250 ms, a pipe read that
blocks until a child writes 150 ms later, and 300 sleeps of 10 us. The program measures each
around its call; the agent's WAIT records must agree within 5% + 3 ms over and 15% + 3 ms
under (both clocks see the same delays, so a busy machine changes both alike, but the
program's also runs while the agent records), with the right kind and object, on a
stack whose innermost frame is the function that called; the short sleeps' count is exact and
their total (WAIT_SUM records, plus those that lasted the threshold or more, each recorded
alone) is the program's, less what the program's clock saw besides the sleeps: the agent's
work around each call (e2elib.check_short_waits()). Then -knob wait-threshold=0 (every wait
its own record), and hotspots without and with -knob enable-wait-time=true."""
import e2elib as e

REL, ABS_NS = 0.05, 3000000
KEYS = ["cond_ns", "cond_obj", "mutex_ns", "mutex_obj", "pipe_fd", "pipe_ns", "short_cpu_ns",
        "short_n", "short_ns", "short_runnable_ns", "sleep_ns"]


def parse(stdout):
    out = {}
    for word in stdout.split():
        k, v = word.split("=")
        out[k] = int(v)
    return out


def waits(streams, sym):
    """Every WAIT and WAIT_SUM of every thread stream: (stream, record, leaf function)."""
    out = []
    for s in e.thread_streams(streams):
        for r in s.records:
            if r["type"] in ("wait", "wait_sum"):
                st = s.stacks.get(r["stack"])
                if st is None:
                    e.fail("%s: a %s names undefined stack %d" % (s.path, r["type"], r["stack"]))
                names = sym.stack_names(s, st)
                out.append((s, r, names[0] if names else "?"))
    return out


def named(f, leaf):
    """f is the function leaf, or a clone of it gcc made (short_sleeps.constprop.0)."""
    return f == leaf or f.startswith(leaf + ".")


def close(got, want):
    """The agent's wait within the program's: never over it by more than 5% + 3 ms; under it
    by up to 15% + 3 ms, as the program's clock also runs while the agent records the wait
    when the call returns (under the sanitizers on a loaded machine, a new page of the
    stream's window faulted in there: 25 ms of a 233 ms pipe read seen once)."""
    return -(3 * REL * want + ABS_NS) <= got - want <= REL * want + ABS_NS


def profile(w, name, options, analysis="threading"):
    """tests/progs/waits under pcollect: the result, the program's figures, the streams."""
    res = e.collect(w, name, [e.prog("waits")], options=options, analysis=analysis)
    known = parse(res.stdout)
    e.check(sorted(known) == KEYS, "%s: the program's output is whole" % name)
    streams = e.load_streams(res)
    e.check(all(s.stats["bytes_skipped"] == 0 and s.stats["records_malformed"] == 0
                for s in streams), "%s: every stream reads cleanly" % name)
    return res, known, streams


def check_known(name, known, found):
    """The four long waits: kind, object, stack and length against the program's."""
    cases = [("sleep_300ms", "sleep", 0, known["sleep_ns"]),
             ("cond_waiter", "cond", known["cond_obj"], known["cond_ns"]),
             ("mutex_waiter", "mutex", known["mutex_obj"], known["mutex_ns"]),
             ("pipe_reader", "read", known["pipe_fd"], known["pipe_ns"])]
    for leaf, kind, obj, want in cases:
        mine = [r for _s, r, f in found if named(f, leaf) and r["type"] == "wait" and
                r["kind"] == kind]
        e.check(mine and all(r["object"] == obj for r in mine),
                "%s: %s waits in %s on object %d (%s)" % (
                    name, kind, leaf, obj, [r["object"] for r in mine]))
        got = sum(r["duration"] for r in mine)
        e.check(close(got, want), "%s: %s waited %.3f ms, the program measured %.3f ms" % (
            name, leaf, got / 1e6, want / 1e6))


with e.Workdir("waits") as w:
    res, known, streams = profile(w, "tr", ["-knob", "sampling-interval=1"])
    meta = e.read_meta(res)
    e.check(meta.get("analysis") == "threading" and meta.get("wait_time") == "1" and
            meta.get("wait_threshold_ns") == "100000",
            "meta: analysis threading, wait_time 1, wait_threshold_ns 100000")
    metrics = {r["id"]: r for s in streams if s.kind == "process" for r in s.of_type("metric")}
    e.check(metrics.get(1, {}).get("name") == "Wait Time" and metrics[1]["unit"] == 0 and
            metrics[1]["kind"] == 2 and metrics.get(2, {}).get("name") == "Wait Count" and
            metrics[2]["unit"] == 2 and metrics[2]["kind"] == 2,
            "the process streams declare Wait Time (ns) and Wait Count (count)")
    sym = e.Symbolizer(streams)
    found = waits(streams, sym)
    check_known("tr", known, found)
    names = [r["name"] for s in streams for r in s.of_type("object")
             if r["object"] == known["pipe_fd"] and r["kind"] == "read"]
    e.check(names and names[-1].startswith("pipe:["), "the pipe is named: %s" % names)
    short = [r for _s, r, f in found if named(f, "short_sleeps")]
    count = sum(1 if r["type"] == "wait" else r["count"] for r in short)
    total = sum(r["duration"] if r["type"] == "wait" else r["total"] for r in short)
    e.check(all(r["kind"] == "sleep" for r in short), "the short sleeps are sleeps")
    e.check(count == known["short_n"], "%d short sleeps counted (%d made)" % (
        count, known["short_n"]))
    # A sleep of 10 us lasts about 100 us on a VM: those that reach the threshold are recorded
    # alone, the others summed per call site (all of them reached it once, under the
    # sanitizers beside other work).
    alone = [r["duration"] for r in short if r["type"] == "wait"]
    threshold = int(meta["wait_threshold_ns"])
    e.check(all(d >= threshold for d in alone) and
            (any(r["type"] == "wait_sum" for r in short) or len(alone) == known["short_n"]),
            "short sleeps under the threshold summed per call site, the %d recorded alone "
            "%d us or longer" % (len(alone), threshold // 1000))
    e.check_short_waits(total, known, "%d recorded alone" % len(alone))

    res, known, streams = profile(w, "all", ["-knob", "wait-threshold=0"])
    found = waits(streams, e.Symbolizer(streams))
    e.check(not any(r["type"] == "wait_sum" for _s, r, _f in found),
            "threshold 0: no wait is summed")
    check_known("all", known, found)
    short = [r for _s, r, f in found if named(f, "short_sleeps")]
    e.check(len(short) == known["short_n"], "threshold 0: each short sleep its own record")

    res, known, streams = profile(w, "hs", [], analysis="hotspots")
    e.check(not any(r["type"] in ("wait", "wait_sum", "object") for s in streams
                    for r in s.records), "hotspots: no wait recorded")
    e.check(not any(r["name"].startswith("Wait") for s in streams
                    for r in s.of_type("metric")), "hotspots: no wait metric declared")
    e.check(e.read_meta(res).get("wait_time") == "0", "hotspots: meta wait_time 0")

    res, known, streams = profile(w, "hsw", ["-knob", "enable-wait-time=true"],
                                  analysis="hotspots")
    check_known("hsw", known, waits(streams, e.Symbolizer(streams)))
