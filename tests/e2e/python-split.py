#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Python 60/30/10: spin_a, spin_b, spin_c (same body, 6:3:1 of the CPU time) under the chain
main -> level1 -> level2 -> level3, profiled end to end on one interpreter (the argument).
Checks: the hotspots split within 3 points; every spin sample has the whole Python chain in
order; user-only hides the interpreter's frames, all shows them; names, files and definition
lines of Python functions; python-only and -filter language=python."""
import os

import e2elib as e
import pylib

TOL = 3.0
NAMES = ["spin_a", "spin_b", "spin_c"]


def main():
    label = pylib.label_arg()
    python = pylib.interpreter(label)
    src = pylib.program("split.py")
    with e.Workdir("py-split") as w:
        res, out = pylib.collect(w, "res", python, "split.py", [30])
        e.check(out.strip().isdigit(), "split.py ran to its end under pcollect")

        hs = {r["Function"]: r for r in pylib.rows(res, "-view", "hotspots")}
        missing = [n for n in NAMES if n not in hs]
        if missing:
            e.fail("hotspots lack %s: %s" % (missing, sorted(hs)[:20]))
        self_s = [pylib.secs(hs[n]) for n in NAMES]
        total = sum(pylib.secs(r) for r in hs.values())
        got = pylib.shares(self_s)
        print("self %s = %s s of %.3f s; shares %s" % (NAMES, self_s, total,
                                                        ["%.1f" % s for s in got]))
        e.check(all(abs(g - x) <= TOL for g, x in zip(got, [60, 30, 10])),
                "spin split %s within %.0f points of 60/30/10" % (["%.1f" % s for s in got], TOL))
        e.check(sum(self_s) >= 0.85 * total, "the spin functions hold %.0f%% of the time"
                % (100 * sum(self_s) / total))
        for n in NAMES:
            r = hs[n]
            e.check(r["Module"] == "[python]" and r["Source File"] == src and
                    int(r["Source Line"]) == e.source_line(src, "def %s(" % n),
                    "%s: module [python], file and definition line (%s, %s, %s)"
                    % (n, r["Module"], r["Source File"], r["Source Line"]))

        # The stacks: every spin sample carries the whole Python chain, in order.
        db = pylib.Db(res)
        chain_ok = chain_all = 0
        for _th, sid, count, _w, _t in db.samples:
            names = [f["name"] for f in db.python_frames(sid)]
            if names and names[-1] in NAMES:
                chain_all += count
                if names[-5:-1] == ["main", "level1", "level2", "level3"]:
                    chain_ok += count
        e.check(chain_all >= 100 and chain_ok == chain_all,
                "%d of %d spin samples have main > level1 > level2 > level3 above them"
                % (chain_ok, chain_all))
        interp = [f for f in db.functions.values() if f["interp"]]
        e.check(any(f["name"].startswith("_PyEval_EvalFrameDefault") for f in interp),
                "the database keeps the interpreter's frames, marked (modules.role)")

        # user-only (default) hides the interpreter between Python frames; all shows it.
        td = pylib.rows(res, "-view", "top-down", "-threshold", "0")
        names_td = {r["Function Stack"] for r in td}
        e.check(not any(n.startswith("_PyEval_EvalFrameDefault") for n in names_td),
                "user-only top-down shows no _PyEval_EvalFrameDefault")
        parent = {}
        stack = []
        for r in td:
            d = int(r["Depth"])
            stack[d:] = [r["Function Stack"]]
            if d > 0:
                parent.setdefault(r["Function Stack"], set()).add(stack[d - 1])
        e.check(all(parent.get(n) == {"level3"} for n in NAMES) and
                parent.get("level3") == {"level2"} and parent.get("level1") == {"main"},
                "user-only top-down: main > level1 > level2 > level3 > spin_* directly")
        tda = pylib.rows(res, "-view", "top-down", "-threshold", "0", "-call-stack-mode", "all")
        e.check(any(r["Function Stack"].startswith("_PyEval_EvalFrameDefault") for r in tda),
                "-call-stack-mode all shows _PyEval_EvalFrameDefault")
        hsa = {r["Function"]: pylib.secs(r) for r in
               pylib.rows(res, "-view", "hotspots", "-call-stack-mode", "all")}
        e.check(abs(sum(hsa.values()) - total) < 0.002 * max(1, len(hsa)),
                "all and user-only account for the same time")

        # Only Python: python-only mode and -filter language=python.
        hp = pylib.rows(res, "-view", "hotspots", "-call-stack-mode", "python-only",
                        "-filter", "language=python")
        e.check(hp and all(r["Module"] == "[python]" for r in hp),
                "python-only + -filter language=python lists only Python functions")
        got_p = pylib.shares([sum(pylib.secs(r) for r in hp if r["Function"] == n)
                              for n in NAMES])
        e.check(all(abs(g - x) <= TOL for g, x in zip(got_p, [60, 30, 10])),
                "python-only split %s within %.0f points" % (["%.1f" % s for s in got_p], TOL))


if __name__ == "__main__":
    main()
