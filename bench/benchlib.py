# SPDX-License-Identifier: MIT
"""Whole-process timing for the benchmarks: variants run interleaved, round-robin (A B C, A B
C, ...), so that load from other jobs on a shared machine, and its drift during the run, hits
every variant alike; each variant's time is also divided by the baseline's in the same round
(a paired ratio), whose median holds when the machine's speed drifts."""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time


def interpreter(arg, who):
    """A Python to run: a path as given, or a label of tests/pythons.py (3.14, debian-3.11)."""
    if os.sep in arg:
        return arg
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                    "tests"))
    import pythons
    p = pythons.for_label(arg)
    if isinstance(p, str):
        sys.exit("%s: no interpreter %s: %s" % (who, arg, p))
    return p.exe


def run(argv, who):
    """Wall seconds and CPU seconds (user + sys of the whole process tree) of argv; exits
    with the command's message when it fails."""
    t0 = time.monotonic()
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.monotonic() - t0
    code = os.waitstatus_to_exitcode(status)
    err = p.stderr.read().decode(errors="replace")
    p.stderr.close()
    if code != 0:
        sys.exit("%s: %s failed (exit %d): %s" % (who, " ".join(argv), code, err.strip()))
    return wall, ru.ru_utime + ru.ru_stime


def interleaved(variants, rounds, who):
    """variants: [(name, function returning argv)]. One warm-up run each, then rounds rounds.
    Returns {name: [(wall, cpu), ...]}, one entry per round."""
    times = {name: [] for name, _ in variants}
    for _name, argv in variants:
        run(argv(), who)
    for _ in range(rounds):
        for name, argv in variants:
            times[name].append(run(argv(), who))
    return times


def print_table(times, names, base="plain"):
    """Minimum and median wall and CPU of each variant, as ratios to base, and the median of
    the paired (same round) wall ratios."""
    bw = [w for w, _ in times[base]]
    bc = [c for _, c in times[base]]
    print("%-18s %8s %7s %9s %7s %8s %7s %9s" % ("run", "min s", "min x", "median s", "med x",
                                                 "cpu s", "cpu x", "paired x"))
    for name in names:
        w = [x for x, _ in times[name]]
        c = [y for _, y in times[name]]
        paired = statistics.median(a / b for a, b in zip(w, bw))
        print("%-18s %8.3f %7.4f %9.3f %7.4f %8.3f %7.4f %9.4f" % (
            name, min(w), min(w) / min(bw), statistics.median(w),
            statistics.median(w) / statistics.median(bw), statistics.median(c),
            statistics.median(c) / statistics.median(bc), paired))


def fresh(work, name):
    """work/name, with whatever a previous round left there removed (a recording's output
    must not exist before it runs)."""
    path = os.path.join(work, name)
    shutil.rmtree(path, ignore_errors=True)
    if os.path.exists(path):
        os.unlink(path)
    return path


def synth_parser(keep_help):
    """The options of a benchmark on a synthetic result (tests/e2e/report_synth.py): the
    build directory, the result's size, the runs and where the result is kept."""
    ap = argparse.ArgumentParser()
    ap.add_argument("build", nargs="?",
                    default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                                         "build"))
    ap.add_argument("--stacks", type=int, default=100000)
    ap.add_argument("--samples", type=int, default=1000000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--keep", help=keep_help)
    return ap


def python_parser(who, rounds, python):
    """The options of a benchmark of a Python workload: the build directory, the rounds,
    the interpreter (a label of tests/pythons.py or a path) and --scale of the workload."""
    ap = argparse.ArgumentParser(prog=who)
    ap.add_argument("build", nargs="?", default="build")
    ap.add_argument("rounds", nargs="?", type=int, default=rounds)
    ap.add_argument("python", nargs="?", default=python)
    ap.add_argument("--scale", default="1")
    return ap
