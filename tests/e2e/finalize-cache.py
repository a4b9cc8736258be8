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

# The Python method tables of a module are kept by build-id too (<build-id>.pym), read
# from the module's file only when absent: a name edited in the cache file comes back
# in the next finalization's functions, and a damaged file is read from the module again.
with e.Workdir("finalize-cache-methods") as w:
    cache = os.environ["PCOLLECT_CACHE_DIR"]
    py = w.join("sorts.py")
    with open(py, "w") as f:
        f.write("import time\nx = list(range(200000, 0, -1))\n"
                "end = time.process_time() + 0.3\n"
                "while time.process_time() < end:\n    sorted(x)\n")
    res = e.collect(w, "py", ["/usr/bin/python3", py], interval=2, stdout="", finalize=True)
    want = "{built-in method builtins.sorted}"
    e.check(want in functions(res), "%s named from the method tables (%s)"
            % (want, sorted(functions(res))[:20]))
    pyms = [os.path.join(cache, f) for f in os.listdir(cache) if f.endswith(".pym")]
    hit = [p for p in pyms if b"builtins.sorted" in open(p, "rb").read()]
    e.check(len(hit) == 1, "one method-table file names builtins.sorted (%s)" % pyms)

    def again():
        for f in os.listdir(cache):
            if f.endswith(".sym"):
                os.unlink(os.path.join(cache, f))
        os.unlink(os.path.join(res, "result.db"))
        e.finalize(res)
        return functions(res)

    with open(hit[0], "rb") as f:
        data = f.read()
    with open(hit[0], "wb") as f:
        f.write(data.replace(b"builtins.sorted", b"builtins.sortex"))
    names = again()
    e.check("{built-in method builtins.sortex}" in names and want not in names,
            "the second finalization named the method from the cache file")
    with open(hit[0], "wb") as f:
        f.write(data[:len(data) // 2])
    names = again()
    e.check(want in names, "a damaged cache file is read from the module again")
    e.check(os.path.getsize(hit[0]) == len(data), "and written again whole")
