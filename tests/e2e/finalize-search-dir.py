#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A result finalized elsewhere: the program is moved away after the collection. Without
-search-dir its frames stay unresolved (and the summary says so); with -search-dir pointing at
the new place (found recursively) everything resolves, and the summary says where from.
Then a rebuilt binary (different build-id) at the original path: never used, a warning names it."""
import os
import shutil

import e2elib as e

# The symbol cache would answer from an earlier run's entry for this build-id (correctly, but
# then the file lookup is not what is tested here).
os.environ["PCOLLECT_NO_CACHE"] = "1"

with e.Workdir("fin-search") as w:
    bindir = w.join("bin")
    os.mkdir(bindir)
    exe = os.path.join(bindir, "fin-lines")
    shutil.copy2(e.prog("fin-lines"), exe)
    res = w.join("res")
    r = e.pcollect([exe, "100"], result=res)
    e.check(r.returncode == 0, "pcollect runs a copy of fin-lines (%s)" % r.stderr.strip())
    # Move the result and the binary, as when copying a result to a laptop.
    moved = w.join("copied", "res")
    shutil.copytree(res, moved)
    newbin = w.join("elsewhere", "deep", "dir")
    os.makedirs(newbin)
    shutil.move(exe, os.path.join(newbin, "fin-lines"))

    f = e.pfinalize(moved)
    e.check(f.returncode == 0, "pfinalize without -search-dir exits 0 (%s)" % f.stderr.strip())
    print(f.stderr)
    e.check("cannot find module '%s'" % exe in f.stderr,
            "it warns that the program's module is not found")
    rows = e.leaf_samples(moved)
    total = sum(r[5] for r in rows)
    e.check(total > 0, "samples are there (%d)" % total)
    e.check(not any(r[0] == "two_loops" for r in rows), "no frame is named two_loops")
    unresolved = sum(r[5] for r in rows if r[0].startswith("func@0x"))
    e.check(unresolved >= 0.9 * total, "the samples stay in func@0x... frames (%d of %d)"
            % (unresolved, total))
    st = e.db_rows(moved, "SELECT status FROM modules WHERE name = 'fin-lines'")
    e.check(st == [("missing",)], "modules.status is 'missing' (%s)" % st)

    f = e.pfinalize(moved, ["-search-dir", w.join("elsewhere")])
    e.check(f.returncode == 0, "pfinalize -search-dir exits 0")
    print(f.stderr)
    e.check("from -search-dir" in f.stderr and os.path.join(newbin, "fin-lines") in f.stderr,
            "the summary says the binary came from the search directory")
    rows = e.leaf_samples(moved)
    named = sum(r[5] for r in rows if r[0] == "two_loops")
    e.check(named >= 0.9 * total, "with -search-dir two_loops has the samples (%d of %d)"
            % (named, total))
    st = e.db_rows(moved, "SELECT status, resolved_path FROM modules WHERE name = 'fin-lines'")
    e.check(st and st[0][0] == "ok" and st[0][1].startswith(newbin),
            "modules.resolved_path is the found copy (%s)" % st)

    # A different program at the original path: same name, another build-id.
    shutil.copy2(e.prog("fin-inline"), exe)
    f = e.pfinalize(res)
    e.check(f.returncode == 0, "pfinalize with a rebuilt binary exits 0")
    print(f.stderr)
    e.check("warning: '%s' is not the binary that was profiled" % exe in f.stderr,
            "a warning names the file with the wrong build-id")
    rows = e.leaf_samples(res)
    names = set(r[0] for r in rows)
    e.check(not names & {"driver", "hot_three", "hot_one", "two_loops"},
            "nothing is attributed to the other binary's functions (%s)" % sorted(names)[:8])
    st = e.db_rows(res, "SELECT status FROM modules WHERE name = 'fin-lines'")
    e.check(st == [("build-id-mismatch",)], "modules.status is 'build-id-mismatch'")
