#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""pfinalize on fin-lines: one function, two single-line loops that burn 3 and 1 units of
CPU time (one stretch each; the rest, reading the clock, is under 1%). The leaf frames' lines
must split 75/25 within the tolerance of e2elib.Sampled; the summary reports full
resolution."""
import os

import e2elib as e

SRC = os.path.join(e.SOURCE, "tests", "progs", "fin-lines.c")

with e.Workdir("fin-lines") as w:
    a, b = e.source_line(SRC, "/* LOOP-A */"), e.source_line(SRC, "/* LOOP-B */")
    res = w.join("res")
    r = e.pcollect([e.prog("fin-lines"), "300"], result=res,
                   options=["-knob", "sampling-interval=2"])
    e.check(r.returncode == 0, "pcollect runs fin-lines (%s)" % r.stderr.strip())
    f = e.pfinalize(res, ["-j", "2"])
    e.check(f.returncode == 0, "pfinalize exits 0 (%s)" % f.stderr.strip())
    print(f.stderr)
    rows = e.leaf_samples(res)
    stats = e.db_sampled(res)
    mine = [r for r in rows if r[0] == "two_loops"]
    n = sum(r[6] for r in mine)
    tol = stats.share_tolerance(0.99, stretches=2)
    e.check(n / stats.weight >= 0.99 - tol, "two_loops holds %.1f%% of the weight (want 99%% or "
            "more, less %.1f; %s)" % (100.0 * n / stats.weight, 100 * tol, stats))
    na = sum(r[6] for r in mine if r[2] == a)
    nb = sum(r[6] for r in mine if r[2] == b)
    print("line %d: %d, line %d: %d, other: %d" % (a, na, b, nb, n - na - nb))
    e.check(na + nb >= 0.95 * n, "95%% of two_loops samples are on the loop lines")
    e.check_share(stats, na / stats.weight, 0.75, "LOOP-A", stretches=1)
    e.check_share(stats, nb / stats.weight, 0.25, "LOOP-B", stretches=1)
    e.check("resolved:  100.0% of samples to a named function" in f.stderr or
            "resolved:  9" in f.stderr, "the summary reports the share resolved")
    # Re-finalizing with -quiet prints nothing and gives the same answer.
    g = e.pfinalize(res, ["-quiet", "-finalization-mode", "fast"])
    e.check(g.returncode == 0 and g.stderr == "", "-quiet -finalization-mode fast: silent, exit 0")
    rows2 = e.leaf_samples(res)
    e.check(sum(r[6] for r in rows2 if r[0] == "two_loops" and r[2] == a) == na,
            "fast mode gives the same lines for a function without inlining")
    # Source paths are absolute and clean: the build writes "../tests/progs/fin-lines.c"
    # relative to the build directory, and the database names it without "..".
    paths = [p for (p,) in e.db_rows(res, "SELECT path FROM source_files")]
    src = os.path.realpath(os.path.join(e.SOURCE, "tests", "progs", "fin-lines.c"))
    e.check(src in paths, "fin-lines.c is named by its clean absolute path %s (got %s)"
            % (src, [p for p in paths if p.endswith("fin-lines.c")]))
    e.check(not [p for p in paths if "/../" in p or "/./" in p or "//" in p],
            "no source path holds '..', '.' or '//' segments")
