#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Code objects made and dropped by the thousand (exec of defs, eval of lambdas, one file name
<churn-i> each), on one interpreter (the argument). Every Python frame from <churn-i> must have
been sampled while round i ran, with round i's name and lines: a code object reused at the
address of a dropped one must never keep the dropped one's name. There must be evidence: the
rounds run most of the time (the rest: compiling them, starting Python), so at least half the
effective samples (e2elib.Sampled) must have been checked, each in a round of its own (a
round is shorter than a sample's lump)."""
import re

import e2elib as e
import pylib

ROUNDS = 1000


def main():
    python = pylib.interpreter(pylib.label_arg())
    with e.Workdir("py-churn") as w:
        times = w.join("times.txt")
        # 1,000 rounds (3,000, then 1,500 before: the same checks, a third of the time): each
        # round's function is a new code object, most at a dropped one's address; the evidence
        # is a share of the samples, not a count
        res = e.collect(w, "res", [python, pylib.program("churn.py"), times, ROUNDS, 10000],
                        interval=1, finalize=True)
        windows = {}
        with open(times) as f:
            for line in f:
                i, t0, t1 = (int(x) for x in line.split())
                windows[i] = (t0, t1)
        e.check(len(windows) == ROUNDS, "churn.py ran %d rounds" % ROUNDS)
        db = e.Db(res)
        start = int(db.meta("start_monotonic_ns"))
        checked = wrong = unknown = 0
        rounds = set()
        for t, _tid, _pid, sid, _wt in db.timeline():
            for f in db.python_frames(sid):
                if f["name"] == "[python]":
                    unknown += 1
                    continue
                m = re.fullmatch(r"<churn-(\d+)>", f["file"] or "")
                if not m:
                    continue
                i = int(m.group(1))
                pad = i % 50
                t0, t1 = windows[i]
                if i % 2 == 0:
                    names, lines = {"fn_%d" % i, "<module>"}, range(pad + 1, pad + 6)
                else:
                    names = {"<lambda>", "<listcomp>", "<lambda>.<locals>.<listcomp>",
                             "<module>"}
                    lines = [pad + 1]
                # 3.11+ put the first instruction of module code (RESUME) on no line
                ok = (t0 <= start + t <= t1 and f["name"] in names and
                      (f["frame_line"] in lines or
                       (f["frame_line"] is None and f["address"] == 0)))
                checked += 1
                rounds.add(i)
                if not ok:
                    wrong += 1
                    if wrong <= 10:
                        print("wrong: frame %s line %s (file %s) at %d, round %d ran %d..%d"
                              % (f["name"], f["frame_line"], f["file"], start + t, i, t0, t1))
        stats = e.db_sampled(res)
        print("%d frames checked over %d rounds, %d unknown; %s" % (checked, len(rounds),
                                                                   unknown, stats))
        e.check(len(rounds) >= 0.5 * stats.n,
                "%d frames of %d distinct rounds sampled (want half the %.0f effective "
                "samples or more)" % (checked, len(rounds), stats.n))
        e.check(wrong == 0, "no frame carries another round's name, line or time (%d wrong)"
                % wrong)
        e.check(unknown <= 0.02 * (checked + unknown),
                "at most 2%% of frames have unknown code (%d)" % unknown)


if __name__ == "__main__":
    main()
