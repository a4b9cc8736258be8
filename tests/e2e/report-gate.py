#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Issue 26, item 4: preport -r 'base/*' -r 'new/*' -fail-if-slower PCT, the regression gate.

Known answers on seeded synthetic runs (report_synth.split: main calling alpha, beta and gamma
for 300, 200 and 100 ms, each run's times drawn with a 2% standard deviation): two sets of 5
runs from one distribution pass (exit 0); beta 15% slower in the new runs fails (exit 1),
naming beta and only beta, with its p-value and effect in the report and in the JUnit XML of
-junit. Synthetic, not profiled: on this 2-core machine under load, 4 real runs a side of
tests/progs/report-split took 26 s and its 1.5x budget sampled as 1.35x (4 ms kernel ticks
against 9 ms stretches), too slow and too coarse for a known answer within 15 s."""
import json
import os
import random
import sys
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2elib  # noqa: E402
import report_synth as synth  # noqa: E402
from e2elib import preport  # noqa: E402

BUDGETS = {"alpha": 300, "beta": 200, "gamma": 100}


def runs(w, name, seed, n=5, slower=None, factor=1.15):
    rnd = random.Random(seed)
    for k in range(n):
        synth.split(w.join(name, "r%d" % k),
                    {f: round(ms * (factor if f == slower else 1) * rnd.gauss(1, 0.02))
                     for f, ms in BUDGETS.items()})
    return w.join(name, "*")


def gate_notes(cp):
    return [n for n in json.loads(cp.stdout).get("notes", []) if n.startswith("gate: ")]


def synthetic(w):
    base = runs(w, "base", 1)
    same = runs(w, "same", 2)
    slow = runs(w, "slow", 3, slower="beta")

    cp = preport("-r", base, "-r", same, "-fail-if-slower", "5", "-format", "json")
    notes = gate_notes(cp)
    e2elib.check(any("Mann-Whitney" in n and "alpha 0.05" in n and "5 base and 5 new" in n
                     for n in notes), "the gate states its test and alpha: %s" % notes)
    e2elib.check(not any(n.startswith("gate: SLOWER") for n in notes) and
                 "slower" not in cp.stderr, "identical distributions: no alarm\n%s\n%s"
                 % ("\n".join(notes), cp.stderr))

    junit = w.join("gate.xml")
    cp = preport("-r", base, "-r", slow, "-fail-if-slower", "5", "-format", "json", "-junit",
                 junit, code=1)
    notes = gate_notes(cp)
    slower = [n for n in notes if n.startswith("gate: SLOWER")]
    e2elib.check(len(slower) == 1 and "beta (app)" in slower[0], "15%% slower beta is caught, "
                 "alone: %s" % "\n".join(notes))
    eff = float(slower[0].split("effect ")[1].split("%")[0])
    low = float(slower[0].split("lower bound ")[1].split("%")[0])
    p = float(slower[0].split(" p ")[1].split(" ")[0])
    e2elib.check(10 <= eff <= 20 and 5 < low <= eff and p < 0.05,
                 "beta's effect %+.1f%% (want 15 +- 5), lower bound %+.1f%%, p %g" % (eff, low, p))
    e2elib.check("slower: beta (app)" in cp.stderr, "stderr names the slower function: "
                 + cp.stderr)
    suite = ET.parse(junit).getroot().find("testsuite")
    failed = [c.get("name") for c in suite.findall("testcase") if c.find("failure") is not None]
    e2elib.check(suite.get("failures") == "1" and failed == ["beta (app)"] and
                 int(suite.get("tests")) >= 4, "JUnit XML: one failure, beta's: %s" % failed)

    # A function of a few samples a run is left out: one sample more would be 50%.
    tiny = w.join("tiny")
    rnd = random.Random(4)
    for side, extra in (("a", 0), ("b", 2)):
        for k in range(5):
            synth.split(os.path.join(tiny, side, "r%d" % k),
                        {"alpha": round(300 * rnd.gauss(1, 0.01)), "tick": 2 + extra})
    cp = preport("-r", os.path.join(tiny, "a", "*"), "-r", os.path.join(tiny, "b", "*"),
                 "-fail-if-slower", "5", "-format", "json")
    notes = gate_notes(cp)
    e2elib.check(not any("tick" in n for n in notes) and
                 any("1 functions left out: under 20 sampling intervals" in n for n in notes),
                 "a function of 2-4 samples a run is not judged: %s" % notes)

    # A single result a side cannot be judged (U's smallest p is 0.5): no alarm, and said so.
    cp = preport("-r", w.join("base", "r0"), "-r", w.join("slow", "r0"), "-fail-if-slower", "5")
    e2elib.check("too few runs" in cp.stdout, "one run a side: too few runs\n" + cp.stdout)
    db = w.join("base", "r1", "result.db")
    cp = preport("-r", base, "-r", slow, "-fail-if-slower", "5", "-junit", db, code=2)
    e2elib.check("will not write the report to '%s'" % db in cp.stderr,
                 "-junit never overwrites a file of a run: " + cp.stderr)
    preport("-r", base, "-fail-if-slower", "5", code=2)
    preport("-r", base, "-r", slow, "-junit", junit, code=2)


def main():
    with e2elib.Workdir("report-gate") as w:
        synthetic(w)
    print("report-gate: ok")


if __name__ == "__main__":
    main()
