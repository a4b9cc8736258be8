#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The threading analysis's overhead, side by side in one run (issue 12).

Two programs, each a fixed amount of work (a tool's cost lengthens the run):
- cpu: tests/progs/cpu-split 8 40 fixed, CPU-bound (~3 s, no blocking call): threading must
  cost no more than hotspots, within 2% of the plain run;
- locks: tests/progs/lock-storm 2 5000000, two threads locking one mutex 10 million times
  (contended whenever both run at once): within 10%.
Each runs plain, under pcollect -collect hotspots and -collect threading (10 ms, collection
only: -finalization-mode=none, launcher included), under `strace -c -f` and, where they work,
`perf trace -s` and `perf sched record`. A smaller lock run (lock-storm 2 200000) is also
compared with valgrind's drd and helgrind, which are too slow for the large one (--no-valgrind
leaves them out). Variants run interleaved, round-robin (bench/benchlib.py); printed per
program: minimum and median wall and CPU time (user + sys of the whole process tree) as
ratios to the plain run, and the median of the paired wall ratios.

usage: bench/threading-overhead.py [BUILD_DIR] [ROUNDS] [--no-valgrind]   (build, 5)
"""
import functools
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402

WHO = "threading-overhead"


def works(argv):
    """Whether a tool runs here (perf trace needs tracepoints, valgrind may be missing)."""
    try:
        return subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              timeout=60).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    valgrind = "--no-valgrind" not in sys.argv
    build = os.path.abspath(args[0] if args else "build")
    rounds = int(args[1]) if len(args) > 1 else 5
    pcollect = os.path.join(build, "collector", "pcollect")
    progs = os.path.join(build, "tests", "progs")
    workloads = [
        ("cpu", [os.path.join(progs, "cpu-split"), "8", "40", "fixed"]),
        ("locks", [os.path.join(progs, "lock-storm"), "2", "5000000"]),
    ]
    small = ("locks-small", [os.path.join(progs, "lock-storm"), "2", "200000"])
    for x in [pcollect] + [w[1][0] for w in workloads]:
        if not os.access(x, os.X_OK):
            sys.exit("%s: missing '%s': build first" % (WHO, x))
    work = tempfile.mkdtemp(prefix="threading-overhead.")
    fresh = functools.partial(benchlib.fresh, work)

    def pc(analysis, prog):
        return lambda: [pcollect, "-collect", analysis, "-quiet", "-finalization-mode=none",
                        "-r", fresh(analysis), "--", *prog]

    tools = []
    if shutil.which("strace"):
        tools.append(("strace -c -f", lambda prog: ["strace", "-c", "-f", "-o",
                                                   fresh("strace"), *prog]))
    if shutil.which("perf") and works(["perf", "trace", "-s", "-o", fresh("probe"), "--",
                                       "true"]):
        tools.append(("perf trace -s", lambda prog: ["perf", "trace", "-s", "-o",
                                                    fresh("trace"), "--", *prog]))
    if shutil.which("perf") and works(["perf", "sched", "record", "-o", fresh("probe"), "--",
                                       "true"]):
        tools.append(("perf sched record", lambda prog: ["perf", "sched", "record", "-q",
                                                        "-o", fresh("sched"), "--", *prog]))
    checks = []
    for name, prog in workloads + ([small] if valgrind else []):
        variants = [("plain", lambda prog=prog: prog),
                    ("pcollect hotspots", pc("hotspots", prog)),
                    ("pcollect threading", pc("threading", prog))]
        if name == "locks-small":
            for tool in ("drd", "helgrind"):
                if shutil.which("valgrind"):
                    variants.append(("valgrind " + tool, lambda prog=prog, tool=tool: [
                        "valgrind", "-q", "--tool=" + tool, *prog]))
        else:
            variants += [(t, lambda prog=prog, f=f: f(prog)) for t, f in tools]
        print("\n%s: %s (%d rounds)" % (name, " ".join(os.path.basename(p) if i == 0 else p
                                                        for i, p in enumerate(prog)), rounds))
        times = benchlib.interleaved(variants, rounds, WHO)
        benchlib.print_table(times, [v[0] for v in variants])
        checks.append((name, times))
    print()
    for name, times, limit in ((n, t, {"cpu": 1.02, "locks": 1.10}.get(n)) for n, t in checks):
        if not limit:
            continue
        base = sorted(c for _, c in times["plain"])
        tr = sorted(c for _, c in times["pcollect threading"])
        ratio = tr[len(tr) // 2] / base[len(base) // 2]
        print("%s: threading's median CPU time %.4fx the plain run's (goal: at most %.2fx)" %
              (name, ratio, limit))
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
