#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The power of preport -fail-if-slower: how often a slowdown is caught, how often identical
sides raise a false alarm.

Usage: bench/gate-power.py [BUILD_DIR] [--trials N] [--pct PCT] [--noise SD] [--seed S]
                           [--real POOL]

Synthetic runs (tests/e2e/report_synth.split): main calls alpha, beta and gamma for 300, 200
and 100 ms; each function's time in each run is drawn with a relative standard deviation of
--noise (0.02: 2%, the run-to-run spread of CPU time of a quiet program). A pool of runs is
written per side (base; beta 5, 10, 15 and 20% slower), and each trial links n runs of two
pools (n = 3, 5, 10 a side), different runs each trial, into two directories and runs
preport -r 'base/*' -r 'new/*' -fail-if-slower PCT. Caught: exit 1 naming beta; a false alarm:
exit 1 between two disjoint sets of base runs (any item). Prints a table of the fractions.

--real POOL: real runs instead, profiled: POOL runs of tests/progs/report-split (heavy,
medium, light: 60/30/10 of 5 rounds of 100 CPU ms, at a 1 ms interval) per side, medium 15%
slower on the new side; trials draw 5 runs a side from the pools; caught names medium.
"""
import argparse
import os
import random
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "e2e"))
import report_synth  # noqa: E402

BUDGETS = {"alpha": 300, "beta": 200, "gamma": 100}
SLOWDOWNS = (5, 10, 15, 20)
SIZES = (3, 5, 10)
POOL = 40


def pool(work, name, rnd, noise, slower=0):
    paths = []
    for k in range(POOL):
        d = os.path.join(work, "pool-" + name, "r%02d" % k)
        report_synth.split(d, {f: max(1, round(ms * (1 + slower / 100 if f == "beta" else 1)
                                               * rnd.gauss(1, noise)))
                               for f, ms in BUDGETS.items()})
        paths.append(d)
    return paths


def real_pool(build, work, name, n, factor):
    """n profiled runs of report-split, medium factor times its budget, finalized."""
    paths = []
    for k in range(n):
        d = os.path.join(work, "real-" + name, "r%02d" % k)
        os.makedirs(os.path.dirname(d), exist_ok=True)
        subprocess.run([os.path.join(build, "collector", "pcollect"), "-q",
                        "-finalization-mode=none", "-knob", "sampling-interval=1", "-r", d, "--",
                        os.path.join(build, "tests", "progs", "report-split"), "x", "100",
                        str(factor)], check=True)
        subprocess.run([os.path.join(build, "finalizer", "pfinalize"), "-q", "-r", d],
                       check=True)
        paths.append(d)
    return paths


def real(a, preport, rnd, work):
    base = real_pool(a.build, work, "base", a.real, 1)
    slow = real_pool(a.build, work, "slow", a.real, 1.15)
    n = 5
    false = caught = 0
    for _ in range(a.trials):
        pick = rnd.sample(base, 2 * n)
        false += gate(preport, side(work, "a", pick[:n]), side(work, "b", pick[n:]), a.pct,
                      "medium")[0]
        caught += gate(preport, side(work, "a", rnd.sample(base, n)),
                       side(work, "b", rnd.sample(slow, n)), a.pct, "medium")[1]
    print("real runs of report-split, pools of %d a side, 5 drawn a side, %d trials, "
          "-fail-if-slower %g: false alarms %.2f, medium +15%% caught %.2f"
          % (a.real, a.trials, a.pct, false / a.trials, caught / a.trials))


def side(work, name, runs):
    d = os.path.join(work, name)
    for e in os.listdir(d) if os.path.isdir(d) else ():
        os.unlink(os.path.join(d, e))
    os.makedirs(d, exist_ok=True)
    for k, r in enumerate(runs):
        os.symlink(r, os.path.join(d, "r%02d" % k))
    return os.path.join(d, "*")


def gate(preport, base, new, pct, slow="beta"):
    cp = subprocess.run([preport, "-r", base, "-r", new, "-fail-if-slower", str(pct), "-q"],
                        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if cp.returncode not in (0, 1):
        sys.exit("preport failed: " + cp.stderr)
    if cp.returncode == 1 and "slower: " + slow not in cp.stderr:
        print("  a false alarm: " + cp.stderr.strip().replace("\n", "\n  "), flush=True)
    return cp.returncode == 1, "slower: " + slow in cp.stderr


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("build", nargs="?", default=os.path.join(HERE, "..", "build"))
    ap.add_argument("--trials", type=int, default=100)
    ap.add_argument("--pct", type=float, default=5)
    ap.add_argument("--noise", type=float, default=0.02)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--real", type=int, default=0)
    a = ap.parse_args()
    preport = os.path.join(a.build, "report", "preport")
    rnd = random.Random(a.seed)
    with tempfile.TemporaryDirectory(prefix="gate-power.") as work:
        if a.real:
            return real(a, preport, rnd, work)
        base = pool(work, "base", rnd, a.noise)
        slow = {s: pool(work, "slow%d" % s, rnd, a.noise, s) for s in SLOWDOWNS}
        print("-fail-if-slower %g, run-to-run noise %.0f%% (sd), %d trials per cell, "
              "alpha 0.05" % (a.pct, 100 * a.noise, a.trials))
        print("%-22s" % "runs a side" + "".join("%8d" % n for n in SIZES))
        false = []
        for n in SIZES:
            hits = 0
            for _ in range(a.trials):
                pick = rnd.sample(base, 2 * n)
                hits += gate(preport, side(work, "a", pick[:n]), side(work, "b", pick[n:]),
                             a.pct)[0]
            false.append(hits / a.trials)
        print("%-22s" % "false alarms (same)" + "".join("%8.2f" % f for f in false))
        for s in SLOWDOWNS:
            caught = []
            for n in SIZES:
                hits = 0
                for _ in range(a.trials):
                    hits += gate(preport, side(work, "a", rnd.sample(base, n)),
                                 side(work, "b", rnd.sample(slow[s], n)), a.pct)[1]
                caught.append(hits / a.trials)
            print("%-22s" % ("caught, beta +%d%%" % s) + "".join("%8.2f" % c for c in caught))


if __name__ == "__main__":
    main()
