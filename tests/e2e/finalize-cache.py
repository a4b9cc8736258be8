#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Issue 22: the symbol cache keeps no path into a result's archive. A result made with
-archive and finalized fills the cache from its archive copy; that result is deleted; a second
result of the same program, finalized from the cache, names the program's own file as the
module's resolved path (not the deleted result's archive copy) and still resolves its
functions; a third result made with -archive names its own archive copy. The cache is the
test's own directory (PCOLLECT_CACHE_DIR, as e2elib sets for every test). The program's
output and exit code are as without pcollect."""
import os
import shutil

import e2elib as e

PROG = "exit-code"
# exit-code 3 ends with 3 and prints nothing (exit-code.c), as it does alone: known, so it is
# not run alone before each collection to learn it.
RUN = {"code": 3, "stdout": ""}


def module_paths(res, name):
    return [p for (p,) in res.db("SELECT resolved_path FROM modules WHERE name = ?", (name,))]


def functions(res):
    return {n for (n,) in res.db("SELECT name FROM functions")}


with e.Workdir("finalize-cache") as w:
    cache = os.environ["PCOLLECT_CACHE_DIR"]
    e.check(os.path.isdir(cache) and not cache.startswith(os.path.expanduser("~/.cache")),
            "the test's own symbol cache directory (%s)" % cache)
    prog = e.prog(PROG)
    first = e.collect(w, "first", [prog, "3"], **RUN, options=["-archive"],
                      finalize=True)
    archived = module_paths(first, PROG)
    e.check(archived and all(p and p.startswith(first + "/archive/") for p in archived),
            "the first result resolved %s from its archive (%s)" % (PROG, archived))
    e.check(any(f.endswith(".sym") for f in os.listdir(cache)), "the cache was filled")
    shutil.rmtree(first)

    second = e.collect(w, "second", [prog, "3"], **RUN, finalize=True)
    paths = module_paths(second, PROG)
    e.check(paths and all(p and os.path.exists(p) and not p.startswith(first) for p in paths),
            "the second result's %s is a file that exists, not the deleted result's archive "
            "copy (%s)" % (PROG, paths))
    e.check(os.path.realpath(paths[0]) == os.path.realpath(prog),
            "the second result names the program itself (%s)" % paths[0])
    e.check("main" in functions(second), "the second result's functions resolved (cache)")

    third = e.collect(w, "third", [prog, "3"], **RUN, options=["-archive"],
                      finalize=True)
    paths = module_paths(third, PROG)
    e.check(paths and all(p and p.startswith(third + "/archive/") for p in paths),
            "the third result names its own archive copy (%s)" % paths)
