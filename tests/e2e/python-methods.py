#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""C functions that Python lines call by name, named as cProfile names them from the method
tables alone, on one interpreter (the argument): tests/progs/python/methods.py calls the
extension pymeth (tests/progs/python/pymeth.c, built here with the interpreter's headers and
stripped: no symbol names its functions) with 240/120/40 ms of CPU time for a type's method,
a module function and a METH_FASTCALL function, and 40 ms for a function whose PyMethodDef is
one of its own, as Cython writes them (pandas' and scikit-learn's functions); sorted() and dict.get (the interpreter's own,
stripped in Debian's python3.11); numpy's ndarray.sort where numpy imports (Debian's
python3-numpy, stripped). Each must be a frame right under the Python line that calls it,
with the CPU time the program measured around its calls (time.process_time), within the
tolerance of e2elib.Sampled plus 3 ms for the Python call around it. The default hotspots
view (the first screen) gives the extension's methods and ndarray.sort that time as their
self time, as cProfile's tottime: the nameless functions of their module they run (pymeth's
spin_kernel, numpy's sort kernel, func@0x... once stripped; before, numpy's was the top
hotspot) count in them, and -call-stack-mode all shows spin_kernel apart. The program's
output and exit code are the same with and without pcollect."""
import json
import os
import subprocess
import sysconfig

import e2elib as e
import pylib

ROUNDS = 10  # tests/progs/python/methods.py: its calls per phase, 10 for pymeth, 3 for the others
EXT_MS = 400
CALL_NS = 3000000  # the Python call and loop around the C function, in the measured time
# methods.py's ndarray.sort line: the least and greatest of numpy.random.default_rng(7)
# .random(500000) (PCG64's stream, the same since numpy 1.17)
NUMPY_LINE = "numpy sort 0.000006 0.999998\n"


def build_ext(python, w):
    """pymeth built for this interpreter and stripped in a directory of w, or (None, why)."""
    q = ("import sysconfig, os; i = sysconfig.get_paths()['include']; "
         "print(i if os.path.exists(os.path.join(i, 'Python.h')) else ''); "
         "print(sysconfig.get_config_var('EXT_SUFFIX'))")
    inc, suffix = subprocess.run([python, "-c", q], stdout=subprocess.PIPE, text=True,
                                 check=True).stdout.split("\n")[:2]
    if not inc:
        return None, "the interpreter has no headers (Python.h)"
    d = w.join("ext")
    os.makedirs(d)
    cc = sysconfig.get_config_var("CC") or "cc"
    out = os.path.join(d, "pymeth" + suffix)
    e.run_ok(cc.split()[:1] + ["-O2", "-shared", "-fPIC", "-s", "-I" + inc, "-o", out,
                               pylib.program("pymeth.c")])
    return d, None


def main():
    python = pylib.interpreter(pylib.label_arg())
    src = pylib.program("methods.py")
    with e.Workdir("py-methods") as w:
        ext, why = build_ext(python, w)
        if why:
            print("not tested here: the extension module (%s)" % why)
        times = w.join("times.json")
        res = e.collect(w, "res", [python, src, times] + ([ext, EXT_MS] if ext else []),
                        interval=1, finalize=True)
        with open(times) as f:
            used = json.load(f)
        # What it prints is known (methods.py), with the line of numpy's where numpy imports
        # (it timed ndarray.sort): it is not run alone first to learn it.
        out = ("pymeth\n" if ext else "") + "sorted 0 149999 get 12000\n" + (
            NUMPY_LINE if "sort" in used else "")
        e.check(res.stdout == out, "the program's output as without the collector (%r)"
                % res.stdout)
        print("measured: %s" % used)
        stacks = e.folded(res)
        stats = e.db_sampled(res)
        want = [("{built-in method builtins.sorted}", "call_sorted", "sorted", 3),
                ("{method 'get' of 'dict' objects}", "call_get", "get", 3)]
        if ext:
            want += [("{method 'burn' of 'pymeth.Burner' objects}", "call_burn", "burn", ROUNDS),
                     ("{built-in method pymeth.spin}", "call_spin", "spin", ROUNDS),
                     ("{built-in method pymeth.fast}", "call_fast", "fast", ROUNDS),
                     ("{built-in method pymeth.lone}", "call_lone", "lone", ROUNDS)]
        if "sort" in used:
            want.append(("{method 'sort' of 'numpy.ndarray' objects}", "call_sort", "sort", 3))
        else:
            print("not tested here: numpy's ndarray.sort (numpy does not import)")
        for name, caller, key, calls in want:
            under = sum(t for s, t in stacks for k in range(len(s) - 1)
                        if s[k] == caller and s[k + 1] == name)
            # within the caller's calls (the interpreter's own calls elsewhere, such as
            # importlib's dict.get at start-up, are not the program's)
            anywhere = sum(t for s, t in stacks if name in s and caller in s)
            e.check_time(stats, under * 1e9, used[key] * 1e9,
                         "%s right under %s, against the CPU time its calls took"
                         % (name, caller), stretches=calls, extra_ns=CALL_NS)
            e.check(anywhere <= under + 0.002,
                    "%s: %.3f s of its %.3f s under %s right under it" % (name, under, anywhere,
                                                                         caller))
        if ext:
            total = sum(used[k] for k in ("burn", "spin", "fast"))
            got = [sum(t for s, t in stacks if n in s) for n, _, k, _ in want[2:5]]
            for (n, _, k, _), g in zip(want[2:5], got):
                e.check_share(stats, g / sum(got), used[k] / total,
                              "%s of pymeth's time" % n, stretches=ROUNDS)
        # The first screen: an extension's method is the hotspot its calls make, as
        # cProfile's tottime, its module's nameless functions below it (pymeth's
        # spin_kernel, numpy's sort kernel: func@0x...) in it; -call-stack-mode all shows
        # them apart. (sorted() and dict.get call the interpreter's own named functions,
        # list.sort's among them: their time is there.)
        hot = e.rows(res, "-view", "hotspots", "-limit", "100000")
        self_of = {r["Function"]: e.secs(r) for r in hot}
        for name, caller, key, calls in want:
            if key not in ("burn", "spin", "fast", "lone", "sort"):
                continue
            e.check_time(stats, self_of.get(name, 0) * 1e9, used[key] * 1e9,
                         "hotspots: %s's self time, against the CPU time its calls took"
                         % name, stretches=calls, extra_ns=CALL_NS)
        nameless = {r["Module"] for r in hot if r["Function"].startswith("func@") and
                    e.secs(r) >= 0.02}
        owners = {"pymeth", "_multiarray_umath"}
        e.check(not {m for m in nameless if m.split(".")[0] in owners},
                "hotspots: no nameless function of pymeth or numpy's _multiarray_umath "
                "holds 20 ms or more (%s)" % sorted(nameless))
        if ext:
            every = e.rows(res, "-view", "hotspots", "-limit", "100000", "-call-stack-mode", "all")
            kernel = sum(e.secs(r) for r in every if r["Function"].startswith("func@") and
                         r["Module"].startswith("pymeth"))
            e.check_time(stats, kernel * 1e9, used["spin"] * 1e9, "-call-stack-mode all: "
                         "spin's nameless kernel holds spin's time", stretches=ROUNDS,
                         extra_ns=CALL_NS)
        kinds = dict(e.db_rows(res, "SELECT name, kind FROM functions WHERE name IN (%s)" %
                                ",".join("'%s'" % n.replace("'", "''") for n, *_ in want)))
        e.check(all(kinds.get(n) == "method" for n, *_ in want),
                "the database: each is a function of kind 'method' (%s)" % kinds)


if __name__ == "__main__":
    main()
