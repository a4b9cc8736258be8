#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Python calling C: call_native calls pyburn_spin (tests/progs/python-burn.c) through ctypes,
py_work burns Python beside it, on one interpreter (the argument): ROUNDS of 40 and 20 ms of
CPU time. Each has the time the program measured, within the tolerance of e2elib.Sampled;
the native frame must
appear under the Python frame that called it, at the line of the call; user-only hides the
interpreter but keeps ctypes' and libffi's frames; python-only gives the native time to
call_native."""
import json
import os

import e2elib as e
import pylib

LIB = os.path.join(e.BUILD, "tests", "progs", "libpyburn.so")
ROUNDS, NATIVE_MS, PY_MS = 10, 40, 20  # tests/progs/python/native.py


def main():
    python = pylib.interpreter(pylib.label_arg())
    src = pylib.program("native.py")
    call_line = e.source_line(src, "# CALL-NATIVE")
    if not os.path.exists(LIB):
        e.fail("libpyburn.so not built at " + LIB)
    with e.Workdir("py-native") as w:
        res = e.collect(w, "res", [python, src, LIB, NATIVE_MS, PY_MS], interval=1,
                        finalize=True)
        out = res.stdout
        used = json.loads(out.strip().splitlines()[-1])

        hs = {r["Function"]: e.secs(r) for r in e.rows(res, "-view", "hotspots")}
        print("hotspots: %s" % sorted(hs.items(), key=lambda x: -x[1])[:8])
        stats = e.db_sampled(res)
        e.check_time(stats, hs.get("pyburn_spin", 0) * 1e9, used["native"] * 1e9,
                     "pyburn_spin, against the CPU time its calls took", stretches=ROUNDS)
        py_ns = sum(hs.get(n, 0) for n in ("py_work", "spin", "spin_for", "cpu_ns")) * 1e9
        e.check_time(stats, py_ns, used["py"] * 1e9, "py_work, against the CPU time its calls "
                     "took", stretches=ROUNDS)

        stacks = e.folded(res)
        burn = [(s, t) for s, t in stacks if s[-1] == "pyburn_spin"]
        under = sum(t for s, t in burn if "call_native" in s and
                    not {"py_work", "main"} & set(s[s.index("call_native") + 1:]))
        tb = sum(t for _, t in burn)
        e.check(tb > 0 and under >= 0.98 * tb,
                "user-only: %.3f of %.3f s of pyburn_spin under call_native" % (under, tb))
        e.check(not any(n.startswith("_PyEval_EvalFrameDefault") for s, _ in burn for n in s),
                "user-only: no interpreter frame between call_native and pyburn_spin")
        stacks_all = e.folded(res, "-call-stack-mode", "all")
        # the eval loop, or the part gcc split off it (".cold", where Debian's 3.14 runs)
        e.check(any(n.startswith("_PyEval_EvalFrameDefault") for s, t in stacks_all
                    if s[-1] == "pyburn_spin" for n in s),
                "-call-stack-mode all: the eval loop is on pyburn_spin's stacks")

        db = e.Db(res)
        n = good = 0
        for _th, sid, count, _w, _t in db.samples:
            st = db.stack(sid)
            if st[-1]["name"] != "pyburn_spin":
                continue
            n += count
            py = [f for f in st if f["language"] == "python"]
            if py and py[-1]["name"] == "call_native" and py[-1]["frame_line"] == call_line:
                good += count
        e.check(n > 0 and good >= 0.98 * n,
                "database: %d of %d pyburn_spin samples have call_native at line %d as the "
                "nearest Python frame" % (good, n, call_line))

        hp = {r["Function"]: e.secs(r) for r in
              e.rows(res, "-view", "hotspots", "-call-stack-mode", "python-only")}
        # python-only folds every native frame into the Python frame that called it: all that
        # ran under call_native (pyburn_spin and the getrusage it reads its clock with), which
        # calls no Python function
        want = sum(t for s, t in stacks if "call_native" in s)
        e.check("pyburn_spin" not in hp and abs(hp.get("call_native", 0) - want) <= 0.01 + 0.02 * want,
                "python-only: call_native's self %.3f s is all that ran under it (%.3f s)"
                % (hp.get("call_native", 0), want))
        hl = e.rows(res, "-view", "hotspots", "-filter", "language=python")
        # callers keep their total: a builtin named from the method tables (builtins.exec
        # running an imported module's code) stands between Python frames, with no self time
        e.check(hl and all(r["Module"] == "[python]" for r in hl if e.secs(r) > 0) and
                not any(r["Function"] == "pyburn_spin" for r in hl),
                "-filter language=python keeps only samples in Python code")


if __name__ == "__main__":
    main()
