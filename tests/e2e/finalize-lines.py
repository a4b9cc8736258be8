#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""pfinalize on fin-lines: one function, two single-line loops that burn 3 and 1 units of
CPU time. The leaf frames' lines must split 75/25 within 5 points; the summary reports full
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
    mine = [r for r in rows if r[0] == "two_loops"]
    n = sum(r[5] for r in mine)
    total = sum(r[5] for r in rows)
    e.check(n >= 50 and n >= 0.9 * total, "two_loops holds the samples (%d of %d)"
            % (n, total))
    na = sum(r[5] for r in mine if r[2] == a)
    nb = sum(r[5] for r in mine if r[2] == b)
    print("line %d: %d, line %d: %d, other: %d" % (a, na, b, nb, n - na - nb))
    e.check(na + nb >= 0.95 * n, "95%% of two_loops samples are on the loop lines")
    share = 100.0 * na / (na + nb)
    e.check(abs(share - 75) <= 5, "LOOP-A has %.1f%% (want 75 +- 5)" % share)
    e.check("resolved:  100.0% of samples to a named function" in f.stderr or
            "resolved:  9" in f.stderr, "the summary reports the share resolved")
    # Re-finalizing with -quiet prints nothing and gives the same answer.
    g = e.pfinalize(res, ["-quiet", "-finalization-mode", "fast"])
    e.check(g.returncode == 0 and g.stderr == "", "-quiet -finalization-mode fast: silent, exit 0")
    rows2 = e.leaf_samples(res)
    e.check(sum(r[5] for r in rows2 if r[0] == "two_loops" and r[2] == a) == na,
            "fast mode gives the same lines for a function without inlining")
    # Source paths are absolute and clean: the build writes "../tests/progs/fin-lines.c"
    # relative to the build directory, and the database names it without "..".
    paths = [p for (p,) in e.db_rows(res, "SELECT path FROM source_files")]
    src = os.path.realpath(os.path.join(e.SOURCE, "tests", "progs", "fin-lines.c"))
    e.check(src in paths, "fin-lines.c is named by its clean absolute path %s (got %s)"
            % (src, [p for p in paths if p.endswith("fin-lines.c")]))
    e.check(not [p for p in paths if "/../" in p or "/./" in p or "//" in p],
            "no source path holds '..', '.' or '//' segments")
