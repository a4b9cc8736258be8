#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The cyclic garbage collector as "[gc]" (issue 23, item 3), on one interpreter (the
argument). cycles.py's churn() makes reference cycles and so starts collections; plain() does
integer work that starts none; then churn_beside() does churn()'s work while a thread
compresses with zlib, without the GIL most of its time. The program measures churn() and
plain() itself (time.thread_time_ns, the collections through gc.callbacks). The profile must
agree, within the tolerances of e2elib.Sampled:
- the main thread's time under "[gc]" in churn() is the collections' time the program
  measured (plus what its callbacks cost: they run inside the collection, outside what they
  measure), and "[gc]" stands under churn(), right under it but for the callbacks' own lines;
- plain()'s time is its measured time, with no "[gc]" under it;
- churn_beside() has "[gc]" too, while the zlib thread, which works beside those collections
  but does not hold the GIL meanwhile, has none.
The program's output and exit status are those it has alone (known: it prints what it made)."""
import json

import e2elib as e
import pylib

SCALE = 0.5
CALLBACK_NS = 5000  # a collection's two callbacks, their own CPU time, at most


def expected_stdout():
    """What cycles.py prints: its work is fixed, so is its output."""
    made, x = int(2000000 * SCALE) + int(1200000 * SCALE), 1
    for i in range(int(5000000 * SCALE)):
        x = (x * 31 + i) & 0xFFFFF
    return "cycles: %d made, 200000 live, plain %d\n" % (made, x)


def main():
    python = pylib.interpreter(pylib.label_arg())
    with e.Workdir("py-gc") as w:
        out = w.join("cycles.json")
        res = e.collect(w, "res", [python, pylib.program("cycles.py"), out, SCALE],
                        interval=1, finalize=True, stdout=expected_stdout())
        with open(out) as f:
            ref = json.load(f)
        tids = {"main": ref["main"], "zip": ref["zip"]}
        gc_ns = {k: ref["gc_ns"].get(str(tids[k]), 0) for k in tids}
        ncoll = {k: ref["collections"].get(str(tids[k]), 0) for k in tids}
        print("measured: %s; collections %s; churn %.3f s, plain %.3f s"
              % ({k: "%.3f s in gc" % (v / 1e9) for k, v in gc_ns.items()}, ncoll,
                 ref["churn_ns"] / 1e9, ref["plain_ns"] / 1e9))

        db = e.Db(res)
        gc = {k: 0 for k in tids}  # ns under [gc] (the main thread's: in churn())
        gc_right_under_churn = gc_under_plain = gc_beside = plain = 0
        for th, sid, _count, _weight, t_ns in db.samples:
            tid = db.threads[th][0]
            who = [k for k in tids if tids[k] == tid]
            if not who:
                continue
            stack = db.stack(sid)
            names = [f["name"] for f in stack]
            if who[0] == "main" and "plain" in names:
                plain += t_ns
            if "[gc]" not in names:
                continue
            at = names.index("[gc]")
            if "churn_beside" in names[:at]:  # it calls churn(): told apart first
                gc_beside += t_ns
                continue
            if who[0] == "zip" or "churn" in names[:at]:
                gc[who[0]] += t_ns
            parent = stack[at - 1] if at > 0 else {}
            if parent.get("language") == "python" and parent["name"] == "churn":
                gc_right_under_churn += t_ns
            if "plain" in names:
                gc_under_plain += t_ns
        stats = {k: e.db_sampled(res, "t.tid = ?", (tids[k],)) for k in tids}
        print("profile: [gc] %s ns (%d right under churn, %d under plain, %d under "
              "churn_beside), plain %d ns"
              % (gc, gc_right_under_churn, gc_under_plain, gc_beside, plain))

        e.check(gc["main"] > 0, "main thread: the collections are shown as [gc]")
        e.check_time(stats["main"], gc["main"], gc_ns["main"], "main thread: [gc]",
                     extra_ns=CALLBACK_NS * ncoll["main"])
        # the callbacks' own CPU time: on_gc()'s lines are the innermost then
        right = stats["main"].time_tolerance_ns(gc["main"]) + CALLBACK_NS * ncoll["main"]
        e.check(gc_right_under_churn >= gc["main"] - right,
                "main thread: %.3f s of [gc]'s %.3f s right under churn(), the line that "
                "started it (want all but the callbacks' and the tolerance, %.3f s)"
                % (gc_right_under_churn / 1e9, gc["main"] / 1e9, right / 1e9))
        e.check_time(stats["main"], plain, ref["plain_ns"], "main thread: plain()")
        # none known: judged as a share, whose tolerance at 0 is what 0 allows
        e.check_share(stats["main"], gc_under_plain / stats["main"].total_ns, 0.0,
                      "main thread: [gc] under plain()")
        e.check(gc_beside > 0, "main thread: churn_beside()'s collections are [gc] too")
        e.check_share(stats["zip"], gc["zip"] / max(stats["zip"].total_ns, 1), 0.0,
                      "zlib thread, beside churn_beside()'s collections: [gc]")


if __name__ == "__main__":
    main()
