#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""pfinalize on fin-lines: one function, two single-line loops that burn 3 and 1 units of
CPU time (one stretch each, their clock reads included: burn_cpu_ns, inlined on the loop's
line, and getrusage). two_loops' lines in the samples (of its frame: the leaf's, or the line
of the call to the clock read) must split 75/25 within the tolerance of e2elib.Sampled; the
summary reports full resolution."""
import os

import e2elib as e

SRC = os.path.join(e.SOURCE, "tests", "progs", "fin-lines.c")

with e.Workdir("fin-lines") as w:
    a, b = e.source_line(SRC, "/* LOOP-A */"), e.source_line(SRC, "/* LOOP-B */")
    res = e.collect(w, "res", [e.prog("fin-lines"), "300"], interval=2)
    err = e.finalize(res, ["-j", "2"])
    print(err)
    rows = e.leaf_samples(res)
    stats = e.db_sampled(res)
    db = e.Db(res)
    lines = {}  # two_loops' line in each sample: {line: weight}
    for _t, sid, _c, weight, _v in db.samples:
        frame = [f for f in db.stack(sid) if f["name"] == "two_loops" and not f["inline_depth"]]
        if frame:
            lines[frame[0]["frame_line"]] = lines.get(frame[0]["frame_line"], 0) + weight
    n = sum(lines.values())
    tol = stats.share_tolerance(0.99, stretches=2)
    e.check(n / stats.weight >= 0.99 - tol, "two_loops holds %.1f%% of the weight (want 99%% or "
            "more, less %.1f; %s)" % (100.0 * n / stats.weight, 100 * tol, stats))
    na, nb = lines.get(a, 0), lines.get(b, 0)
    print("line %d: %d, line %d: %d, other: %d" % (a, na, b, nb, n - na - nb))
    e.check(na + nb >= 0.95 * n, "95%% of two_loops samples are on the loop lines")
    e.check_share(stats, na / stats.weight, 0.75, "LOOP-A", stretches=1)
    e.check_share(stats, nb / stats.weight, 0.25, "LOOP-B", stretches=1)
    e.check("resolved:  100.0% of samples to a named function" in err or
            "resolved:  9" in err, "the summary reports the share resolved")
    # Re-finalizing with -quiet prints nothing and gives the same answer.
    g = e.pfinalize(res, ["-quiet", "-finalization-mode", "fast"])
    e.check(g.returncode == 0 and g.stderr == "", "-quiet -finalization-mode fast: silent, exit 0")
    leaf_a = [sum(r[6] for r in rs if r[0] == "two_loops" and r[2] == a)
              for rs in (rows, e.leaf_samples(res))]
    e.check(leaf_a[0] == leaf_a[1],
            "fast mode gives the same lines for a function without inlining (%s)" % leaf_a)
    # Source paths are absolute and clean: the build writes "../tests/progs/fin-lines.c"
    # relative to the build directory, and the database names it without "..".
    paths = [p for (p,) in e.db_rows(res, "SELECT path FROM source_files")]
    src = os.path.realpath(os.path.join(e.SOURCE, "tests", "progs", "fin-lines.c"))
    e.check(src in paths, "fin-lines.c is named by its clean absolute path %s (got %s)"
            % (src, [p for p in paths if p.endswith("fin-lines.c")]))
    e.check(not [p for p in paths if "/../" in p or "/./" in p or "//" in p],
            "no source path holds '..', '.' or '//' segments")
