#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""pfinalize on fin-inline (built -O2 -g): the CPU time goes to two always-inlined functions,
3:1 (900 and 300 ms, one stretch each, their clock reads included: burn_cpu_ns, inlined in
them, and getrusage). Samples must be attributed to the inlined functions (inline_depth 1),
75/25 within the tolerance of e2elib.Sampled (their samples and their callees'), each with
driver as its caller frame at the call line, and the leaf lines inside the inlined bodies."""
import os

import e2elib as e

SRC = os.path.join(e.SOURCE, "tests", "progs", "fin-inline.c")

with e.Workdir("fin-inline") as w:
    res = e.collect(w, "res", [e.prog("fin-inline"), "300"], interval=2)
    print(e.finalize(res, ()))
    rows = e.leaf_samples(res)
    stats = e.db_sampled(res)
    # The budgets hold the clock reads of the burn loop (burn_cpu_ns, inlined too, and
    # getrusage: 1 to 4% of the samples here): each function's weight is of its samples
    # and those of what it calls.
    under, _total = e.Db(res).under(["hot_three", "hot_one"])
    three, one = under["hot_three"], under["hot_one"]
    print("hot_three %d, hot_one %d of %d" % (three, one, stats.weight))
    tol = stats.share_tolerance(0.99, stretches=2)
    e.check((three + one) / stats.weight >= 0.99 - tol, "the inlined functions hold %.1f%% of "
            "the weight (want 99%% or more, less %.1f; %s)"
            % (100.0 * (three + one) / stats.weight, 100 * tol, stats))
    e.check_share(stats, three / stats.weight, 0.75, "hot_three", stretches=1)
    e.check_share(stats, one / stats.weight, 0.25, "hot_one", stretches=1)
    call3 = e.source_line(SRC, "/* CALL-THREE */")
    call1 = e.source_line(SRC, "/* CALL-ONE */")
    body3 = e.source_line(SRC, "/* BODY-THREE */")
    body1 = e.source_line(SRC, "/* BODY-ONE */")
    for name, call, body in (("hot_three", call3, body3), ("hot_one", call1, body1)):
        mine = [r for r in rows if r[0] == name]
        n = sum(r[5] for r in mine)
        e.check(all(r[1] == 1 for r in mine), "%s frames are inlined (inline_depth 1)" % name)
        e.check(all(r[3] == "driver" for r in mine), "%s's caller frame is driver" % name)
        good = sum(r[5] for r in mine if r[4] == call)
        e.check(good == n, "driver's line is the call line %d for all %s samples (%d of %d)"
                % (call, name, good, n))
        inside = sum(r[5] for r in mine if body - 3 <= (r[2] or 0) <= body + 1)
        e.check(inside >= 0.9 * n, "%s's leaf lines are in its loop (%d of %d near line %d)"
                % (name, inside, n, body))
    # The functions table knows the inlined functions as such, defined in fin-inline.c.
    defs = e.db_rows(res, "SELECT f.name, sf.path, f.line FROM functions f JOIN source_files sf"
                          " ON sf.id = f.source_file_id WHERE f.name IN ('hot_three', 'hot_one')")
    e.check(len(defs) == 2 and all(d[1].endswith("fin-inline.c") for d in defs),
            "hot_three and hot_one are defined in fin-inline.c (%s)" % defs)
