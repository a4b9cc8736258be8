#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""pfinalize benchmarks, side by side with perf (docs/performance.md, "finalizer").

1. Throughput: a synthetic result of 1M samples over 5,000 stacks whose addresses are real
   functions of libpython3.11 (-g DWARF), finalized with a cold and a warm symbol cache, and
   with -j 1; the phases (read, symbols, tree, database) from pfinalize's summary.
2. Real: a C program linked with a large library (bench/finalizer-embed.c: libpython 3.11 of
   pyenv, -g DWARF 5, and libc with its -dbg DWARF), its stacks native frames through both,
   run under pcollect (1 ms) and under perf record -F 1000 -g; time pfinalize (cold and warm
   symbol cache) vs perf report --stdio on the same program and duration. (Not python3 itself:
   its samples carry Python stacks, which the finalizer does not read yet.)

usage: finalizer-bench.py BUILD_DIR [BASELINE_BUILD_DIR] [--reps N]
   With a baseline (e.g. a copy of an older build directory), both are measured in the same
   run, interleaved, on the same inputs. Every figure is the median of N runs (default 5)."""
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests"))
import pythons  # noqa: E402


def shared_python():
    """(prefix, libpython) of a shared build of CPython 3.11 (tests/pythons.py finds it)."""
    p = pythons.for_label("3.11")
    if isinstance(p, str) or not p.shared:
        sys.exit("finalizer-bench: needs a shared build of CPython 3.11 (libpython3.11.so): "
                 + (p if isinstance(p, str) else "%s is not one" % p.describe()))
    return p.prefix, p.libpython

PHASES = re.compile(r"in ([0-9.]+) s \(read ([0-9.]+), symbols ([0-9.]+), tree ([0-9.]+), "
                    r"database ([0-9.]+)\)")


def timed(argv, env=None, tries=1):
    """Wall time and stderr of a successful run; failures are retried tries - 1 times."""
    e = dict(os.environ)
    e.update(env or {})
    for _ in range(tries):
        t = time.monotonic()
        cp = subprocess.run(argv, env=e, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True)
        dt = time.monotonic() - t
        if not cp.returncode:
            return dt, cp.stderr
        FAILURES[argv[0]] = FAILURES.get(argv[0], 0) + 1
    sys.exit("failed: %s (status %d): %s" % (" ".join(argv), cp.returncode, cp.stderr))


FAILURES = {}


class Series:
    """Wall times of one measurement, and pfinalize's own phase times when it printed them."""

    def __init__(self):
        self.wall = []
        self.phases = []

    def add(self, dt, stderr):
        self.wall.append(dt)
        m = PHASES.search(stderr)
        if m:
            self.phases.append([float(x) for x in m.groups()[1:]])

    def median(self):
        return statistics.median(self.wall)

    def phase_medians(self):
        if not self.phases:
            return None
        return [statistics.median(p[i] for p in self.phases) for i in range(4)]


def main():
    args = [a for a in sys.argv[1:]]
    reps = 5
    if "--reps" in args:
        i = args.index("--reps")
        reps = int(args[i + 1])
        del args[i:i + 2]
    builds = [os.path.abspath(a) for a in (args or ["build"])]
    names = ["new", "baseline"][:len(builds)]
    fin = {n: os.path.join(b, "finalizer", "pfinalize") for n, b in zip(names, builds)}
    pcollect = os.path.join(builds[0], "collector", "pcollect")
    pydir, libpy = shared_python()
    tmp = tempfile.mkdtemp(prefix="fin-bench.")
    try:
        syn = os.path.join(tmp, "synthetic")
        subprocess.run([sys.executable, os.path.join(HERE, "finalizer-gen.py"), syn, libpy,
                        "1000000", "5000", "2"], check=True)
        prog = os.path.join(tmp, "embed")
        cfg = pydir + "/bin/python3.11-config"
        flags = subprocess.run([cfg, "--cflags", "--ldflags", "--embed"], check=True,
                               capture_output=True, text=True).stdout.split()
        subprocess.run(["cc", "-O2", "-g", "-o", prog, os.path.join(HERE, "finalizer-embed.c")]
                       + flags + ["-Wl,-rpath," + os.path.dirname(libpy)], check=True)
        real = os.path.join(tmp, "real")
        timed([pcollect, "-collect", "hotspots", "-r", real, "-quiet",
               "-finalization-mode=none", "-knob", "sampling-interval=1", "--", prog])
        pdata = os.path.join(tmp, "perf.data")
        timed(["perf", "record", "-q", "-F", "1000", "-g", "-o", pdata, "--", prog])
        plain = statistics.median(timed([prog])[0] for _ in range(3))

        cold = {"PCOLLECT_NO_CACHE": "1"}
        cases = [
            ("synthetic cold", syn, [], cold),
            ("synthetic cold -j 1", syn, ["-j", "1"], cold),
            ("synthetic warm cache", syn, [], "warm"),
            ("real cold", real, [], cold),
            ("real warm cache", real, [], "warm"),
        ]
        res = {}
        for n in names:
            cache = os.path.join(tmp, "cache-" + n)
            for _, r, extra, env in cases:
                if env == "warm":  # fill the cache once
                    timed([fin[n], "-r", r, "-quiet"], {"PCOLLECT_CACHE_DIR": cache}, tries=5)
        rep = Series()
        # Interleave the builds and perf report, so load changes hit all alike.
        for _ in range(reps):
            for label, r, extra, env in cases:
                for n in names:
                    e = {"PCOLLECT_CACHE_DIR": os.path.join(tmp, "cache-" + n)} \
                        if env == "warm" else env
                    s = res.setdefault((label, n), Series())
                    s.add(*timed([fin[n], "-r", r] + extra, e, tries=5))
            rep.add(*timed(["perf", "report", "-i", pdata, "--stdio"]))
        n_real = subprocess.run(["sqlite3", os.path.join(real, "result.db"),
                                 "SELECT value FROM meta WHERE key = 'samples_total'"],
                                capture_output=True, text=True).stdout.strip()
        print("medians of %d runs; real: finalizer-embed %.2f s, %s samples" % (
            reps, plain, n_real))
        head = "%-22s" % "case" + "".join("  %-38s" % ("pfinalize " + n) for n in names)
        print(head)
        for label, _, _, _ in cases:
            row = "%-22s" % label
            for n in names:
                s = res[(label, n)]
                ph = s.phase_medians()
                detail = " (r %.2f s %.2f t %.2f db %.2f)" % tuple(ph) if ph else ""
                row += "  %-38s" % ("%.2f s%s" % (s.median(), detail))
            print(row)
        t_rep = rep.median()
        print("perf report --stdio (real): %.2f s" % t_rep)
        for n in names:
            syn_cold = res[("synthetic cold", n)].median()
            print("%s: synthetic %.0f samples/s end to end; real cold %.2fx perf report, "
                  "warm %.2fx" % (n, 1e6 / syn_cold, res[("real cold", n)].median() / t_rep,
                                  res[("real warm cache", n)].median() / t_rep))
        for n in names:
            if FAILURES.get(fin[n]):
                print("%s: %d failed runs (retried, not timed)" % (n, FAILURES[fin[n]]))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


main()
