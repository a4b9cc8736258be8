#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""-start-paused, pause, resume and regions from the program, end to end (issue 18).

Argument: "c" (tests/progs/regions, through libpcollect and pcollect.h), "fortran"
(tests/progs/regions-fortran, the Fortran names; skipped where no Fortran compiler built it;
its phases are the same CPU-time budgets, known rather than measured) or an interpreter's
label (tests/progs/python/regions.py, through the pcollect module; skipped with the reason
where that interpreter is missing). The program starts paused (setup_work), resumes, burns
0.2 s outside every region, 0.3 s in solve/small and 0.6 s in solve/large, then pauses for
teardown_work; it prints the CPU time of each phase as its thread's clock counted it.
Checks: nothing sampled while paused (no sample under setup_work or teardown_work, and the
sampled total is the resumed phases' CPU time); small:large 1:2 within 10% and within the
samples' tolerance; preport -group-by region (hotspots and top-down), -filter region=NAME
(a whole path component: solve keeps both, small one), [no region], the summary's Regions
rows; the program's output and exit code as without pcollect (and, in Python, the module's
calls are no-ops outside a collection)."""
import os

import e2elib as e
import pylib

PHASES = ["outside", "small", "large"]
PAUSED = ["setup_work", "teardown_work"]
REGIONS = {"[no region]": "outside", "solve/small": "small", "solve/large": "large"}
TICK_NS = e.TICK_NS  # each phase's own measurement is good to a tick of its clock


def spent(stderr):
    """The program's figures: {phase: CPU ns} from its last stderr line."""
    out = {}
    for word in stderr.strip().splitlines()[-1].split():
        k, v = word.split("=")
        out[k[:-3]] = int(v)
    return out


def main():
    what = pylib.label_arg()
    known = None
    if what == "c":
        argv = [e.prog("regions")]
        out_alone = "regions done"
        interval = None
    elif what == "fortran":
        if not os.path.exists(os.path.join(e.BUILD, "tests", "progs", "regions-fortran")):
            e.skip("tests/progs/regions-fortran was not built (no Fortran compiler)",
                   needs="gfortran")
        argv = [e.prog("regions-fortran")]
        out_alone = "regions done"
        interval = None
        known = {"outside": 200e6, "small": 300e6, "large": 600e6}
    else:
        python = pylib.interpreter(what)
        argv = [python, pylib.program("regions.py")]
        out_alone = "regions done active=0"
        interval = 1
    with e.Workdir("regions") as w:
        # Alone, the program runs as it does under pcollect: the calls do nothing.
        env = {"PYTHONPATH": os.path.join(e.BUILD, "api", "python")}
        alone = e.run(argv + ([] if known else ["0.05"]), env=env)
        e.check(alone.returncode == 0 and alone.stdout.strip() == out_alone,
                "alone: the program runs, its calls do nothing (exit %d: %r %s)"
                % (alone.returncode, alone.stdout, alone.stderr.strip()))

        res = e.collect(w, "res", argv, options=["-start-paused"], interval=interval,
                        finalize=True)
        want_out = out_alone.replace("active=0", "active=1")
        e.check(res.stdout.strip() == want_out, "under pcollect -start-paused: exit 0, output "
                "%r (%r %s)" % (want_out, res.stdout, res.stderr.strip()))
        ns = known or spent(res.stderr)
        print("the phases' CPU time: %s" % ns)
        stats = e.db_sampled(res)

        # Nothing sampled while paused: no frame of the paused phases, and the total is the
        # resumed phases' CPU time (the interpreter's start, paused too, is not in it).
        hs = {row["Function"]: row for row in e.rows(res, "-view", "hotspots")}
        e.check(all(e.secs(hs[n], "CPU Time:Total") == 0 for n in PAUSED if n in hs),
                "no sample under %s (paused): %s" % (
                    PAUSED, {n: hs[n]["CPU Time:Total"] for n in PAUSED if n in hs}))
        resumed = sum(ns[p] for p in PHASES)
        e.check_time(stats, stats.total_ns, resumed,
                     "all samples: the CPU time of the resumed phases", stretches=3,
                     extra_ns=len(PHASES) * TICK_NS)

        # -group-by region: a row per region path and [no region], each its phase's time.
        by = {row["Region"]: e.secs(row) * 1e9
              for row in e.rows(res, "-view", "hotspots", "-group-by", "region")}
        # "solve" alone holds only the few statements between its inner regions: a sample
        # may land there and carry the time since the last one (a tick or two on a busy
        # machine), never more
        extra = {k: v for k, v in by.items() if k not in REGIONS}
        e.check(set(REGIONS) <= set(by) and set(extra) <= {"solve"} and
                sum(extra.values()) <= 3 * TICK_NS,
                "-group-by region: rows %s (beside them %s)" % (sorted(REGIONS), extra))
        for name, phase in REGIONS.items():
            e.check_time(stats, by[name], ns[phase], "region %s" % name, stretches=1,
                         extra_ns=TICK_NS)
        # the program's design, 1:2, within what each sampled time may err (e2elib.Sampled:
        # a lump the host held the CPU for can fall at a region's end)
        ratio = by["solve/large"] / by["solve/small"]
        tol = ratio * sum(stats.time_tolerance_ns(by[k], stretches=1) / by[k]
                          for k in ("solve/large", "solve/small"))
        e.check(abs(ratio - 2.0) <= tol, "solve/small : solve/large = 1 : %.3f (want 1:2 +- "
                "%.3f; %s)" % (ratio, tol, stats))
        e.check_split(stats, by["solve/small"], stats, by["solve/large"],
                      ns["small"] / (ns["small"] + ns["large"]),
                      "solve/small against solve/large, by their measured CPU time")

        # top-down grouped by region: the region paths as the tree's first level.
        td = e.rows(res, "-view", "top-down", "-group-by", "region", "-threshold", "0")
        top = {row["Function Stack"]: float(row["CPU Time:Total"]) * 1e9
               for row in td if row["Depth"] == "1"}
        e.check(top == by and all(row["Group"] == "region" for row in td
                                  if row["Depth"] == "1"),
                "top-down -group-by region: the same regions at the top (%s)" % top)

        # -filter region=NAME: a whole component of the path.
        def kept(name):
            return {row["Region"]: e.secs(row) * 1e9 for row in e.rows(
                res, "-view", "hotspots", "-group-by", "region", "-filter", "region=" + name)}
        solve = kept("solve")
        # and solve's own samples, if one fell between its start and small's (a 4 ms lump
        # of the thread CPU clock once, on 3.15)
        inner = ("solve", "solve/small", "solve/large")
        e.check(solve == {k: by[k] for k in inner if k in by},
                "-filter region=solve keeps solve/small and solve/large, and solve (%s)"
                % solve)
        small = kept("small")
        e.check(small == {"solve/small": by["solve/small"]},
                "-filter region=small keeps solve/small alone (%s)" % small)
        none = res.preport("-view", "hotspots", "-filter", "region=sol", code=2)
        e.check("no region 'sol'" in none.stderr,
                "-filter region=sol: a part of a name is no region: exit 2 (%s)"
                % none.stderr.strip())
        rows = e.rows(res, "-view", "hotspots", "-filter", "region=small")
        work = "burn_ms_" if what == "fortran" else "small_work"
        total = sum(e.secs(row) for row in rows)
        inside = sum(e.secs(row, "CPU Time:Total") for row in rows if row["Function"] == work)
        e.check(total > 0 and abs(inside - total) < 1e-6,
                "-filter region=small: every sample under %s (%.3f s of %.3f s)"
                % (work, inside, total))

        # The summary's Regions rows: each region with what is nested in it, [no region].
        summ = e.rows(res)
        regions = {row["Metric"]: float(row["Value"]) * 1e9 for row in summ
                   if row["Section"] == "Regions"}
        want = dict(by, solve=by["solve/small"] + by["solve/large"])
        e.check(sorted(regions) == sorted(want) and
                all(abs(regions[k] - want[k]) <= 2e6 for k in want),
                "summary: Regions rows solve (its two inner regions), solve/small, "
                "solve/large, [no region] (%s)" % regions)


main()
