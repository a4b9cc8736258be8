#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""pcollect.profile() (issue 24): a block of a running interpreter profiled from inside it,
no pcollect around the program, on one interpreter (the argument). tests/progs/python/block.py
runs spin_a, spin_b and, in a thread it starts, spin_c for 2:1:1 units of CPU time inside the
block, beside a background thread that burns CPU all along. The report of the block: the
three in 50/25/25 (e2elib.Sampled's tolerance) and each near the CPU time the program
measured itself, the background thread nowhere, the block's thread's stacks starting at the
block (no '<module>' or main above it); after the block no thread of ours left in the
process, and the program's exit status its own."""
import json
import os

import e2elib as e
import pylib

NAMES = ["spin_a", "spin_b", "spin_c"]


def main():
    python = pylib.interpreter(pylib.label_arg())
    with e.Workdir("py-profile") as w:
        res = w.join("res")
        cp = e.run([python, pylib.program("block.py"), res, 120],
                   env={"PYTHONPATH": os.path.join(e.BUILD, "api", "python")})
        if cp.returncode:
            e.fail("block.py: exit %d\n%s%s" % (cp.returncode, cp.stdout, cp.stderr))
        out = json.loads(cp.stdout.strip().splitlines()[-1])
        print(out["text"])
        e.check(out["background"] not in out["threads"] and len(out["threads"]) == 2,
                "the block's threads %s: its own and the one it started, not the background "
                "thread %d" % (out["threads"], out["background"]))
        e.check(out["after"] == out["before"], "after the block the process has the threads "
                "it had before (%d): nothing of ours left running" % len(out["before"]))
        e.check(out["show_from"] == "block@" + pylib.program("block.py"),
                "the block's stacks start at the function holding the with statement: %s"
                % out["show_from"])
        argv = out["argv"]
        e.check(os.path.basename(argv[0]) == "preport", "report_argv runs preport")
        rows = e.rows(e.Result(res), *argv[3:])
        fns = {r["Function"]: e.secs(r) for r in rows}
        e.check("background" not in fns and "spin_for" in fns,
                "the background thread's function is not in the report: %s" % sorted(fns))
        e.check("main" not in fns and "<module>" not in fns,
                "the block's stacks start at block(): no main or <module> above it")
        where = "t.tid IN (%s)" % ",".join(str(t) for t in out["threads"])
        stats = e.db_sampled(e.Result(res), where)
        tops = {r["Function"]: e.secs(r, "CPU Time:Total") for r in rows}
        spent = [tops.get(n, 0) for n in NAMES]
        print("profile %s, measured %s" % (spent, out["measured"]))
        for n, t, want in zip(NAMES, spent, (0.5, 0.25, 0.25)):
            e.check_share(stats, t / sum(spent), want, "the block's " + n, stretches=1)
            e.check_time(stats, t * 1e9, out["measured"][n] * 1e9,
                         "%s against its own measure" % n, stretches=1)


if __name__ == "__main__":
    main()
