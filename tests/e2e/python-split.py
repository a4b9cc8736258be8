#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Python 60/30/10: spin_a, spin_b, spin_c (same body, 6:3:1 of the CPU time) under the chain
main -> level1 -> level2 -> level3, profiled end to end on one interpreter (the argument).
Checks: the hotspots split, within the tolerance of e2elib.Sampled (each spin function runs
once a round: ROUNDS stretches); every spin sample has the whole Python chain in order;
user-only hides the interpreter's frames, all shows them; names, files and definition lines
of Python functions; python-only and -filter language=python."""
import e2elib as e
import pylib

NAMES = ["spin_a", "spin_b", "spin_c"]
ROUNDS = 4  # tests/progs/python/split.py
UNIT_MS = 15  # spin_c's CPU time a round: 0.6 s of spinning in all


def main():
    label = pylib.label_arg()
    python = pylib.interpreter(label)
    src = pylib.program("split.py")
    with e.Workdir("py-split") as w:
        res = e.collect(w, "res", [python, src, UNIT_MS], interval=1, finalize=True)
        out = res.stdout
        e.check(out.strip().isdigit(), "split.py ran to its end under pcollect")

        hs = {r["Function"]: r for r in e.rows(res, "-view", "hotspots")}
        missing = [n for n in NAMES if n not in hs]
        if missing:
            e.fail("hotspots lack %s: %s" % (missing, sorted(hs)[:20]))
        self_s = [e.secs(hs[n]) for n in NAMES]
        total = sum(e.secs(r) for r in hs.values())
        print("self %s = %s s of %.3f s" % (NAMES, self_s, total))
        stats = e.db_sampled(res)
        spin = sum(self_s) * 1e9
        for n, t, want in zip(NAMES, self_s, [0.6, 0.3, 0.1]):
            # The known split is of the spin functions' time: judged within it.
            e.check_share(stats, t * 1e9 / spin, want, "hotspots: " + n, stretches=ROUNDS)
        tol = stats.share_tolerance(0.85)
        e.check(spin / stats.total_ns >= 0.85 - tol, "the spin functions hold %.0f%% of the "
                "time (want 85%% or more, less %.1f: the rest is starting Python; %s)"
                % (100 * spin / stats.total_ns, 100 * tol, stats))
        for n in NAMES:
            r = hs[n]
            e.check(r["Module"] == "[python]" and r["Source File"] == src and
                    int(r["Source Line"]) == e.source_line(src, "def %s(" % n),
                    "%s: module [python], file and definition line (%s, %s, %s)"
                    % (n, r["Module"], r["Source File"], r["Source Line"]))

        # The stacks: every spin sample carries the whole Python chain, in order.
        db = e.Db(res)
        chain_ok = chain_all = 0
        for _th, sid, count, _w, _t in db.samples:
            names = [f["name"] for f in db.python_frames(sid)]
            if names and names[-1] in NAMES:
                chain_all += count
                if names[-5:-1] == ["main", "level1", "level2", "level3"]:
                    chain_ok += count
        e.check(chain_all > 0 and chain_ok == chain_all,
                "%d of %d spin samples have main > level1 > level2 > level3 above them"
                % (chain_ok, chain_all))
        interp = [f for f in db.functions.values() if f["interp"]]
        e.check(any(f["name"].startswith("_PyEval_EvalFrameDefault") for f in interp),
                "the database keeps the interpreter's frames, marked (modules.role)")

        # user-only (default) hides the interpreter between Python frames; all shows it.
        td = e.rows(res, "-view", "top-down", "-threshold", "0")
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
        tda = e.rows(res, "-view", "top-down", "-threshold", "0", "-call-stack-mode", "all")
        e.check(any(r["Function Stack"].startswith("_PyEval_EvalFrameDefault") for r in tda),
                "-call-stack-mode all shows _PyEval_EvalFrameDefault")
        hsa = {r["Function"]: e.secs(r) for r in
               e.rows(res, "-view", "hotspots", "-call-stack-mode", "all")}
        e.check(abs(sum(hsa.values()) - total) < 0.002 * max(1, len(hsa)),
                "all and user-only account for the same time")

        # Only Python: python-only mode and -filter language=python.
        hp = e.rows(res, "-view", "hotspots", "-call-stack-mode", "python-only",
                        "-filter", "language=python")
        e.check(hp and all(r["Module"] == "[python]" for r in hp),
                "python-only + -filter language=python lists only Python functions")
        got_p = [sum(e.secs(r) for r in hp if r["Function"] == n) * 1e9 for n in NAMES]
        for n, t, want in zip(NAMES, got_p, [0.6, 0.3, 0.1]):
            e.check_share(stats, t / sum(got_p), want, "python-only: " + n, stretches=ROUNDS)


if __name__ == "__main__":
    main()
