#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Python profiling overhead, side by side in one run.

bench/python-workload.py (pure Python, CPU-bound, about 3 s) runs plain, under pcollect at
10 ms and 1 ms (collection only: -finalization-mode=none, launcher included), under the same
from a baseline build (--baseline: today's main, to compare a change with), under
`python -m cProfile` and, where it is installed for that interpreter, under `scalene --cpu`
(apt-get install python3-scalene gives it to the distribution's python3). The runs are
interleaved round-robin (plain, pcollect, ..., plain, pcollect, ...) so that a burst of load
from other jobs on a shared machine hits every variant alike (bench/benchlib.py); the minimum
and the median of the wall and CPU (user + sys, children included) times are printed as
ratios to the plain run, with the median of the paired (same round) wall ratios. The CPU
medians are the figures to quote: the machine's other jobs inflate wall time, not the CPU
time of the process tree. Then what pcollect recorded at 1 ms and what finalizing it cost.

usage: bench/python-overhead.py [--baseline BUILD] [--scale S] [--no-others]
                                [BUILD_DIR] [ROUNDS] [PYTHON]
       defaults: build, 7, debian-3.11. PYTHON is an executable or a label of
       tests/pythons.py (3.14, debian-3.11, ...). --scale is the workload's (1: ~3 s);
       --no-others leaves cProfile and scalene out.
"""
import functools
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(TOP, "bench"))
import benchlib  # noqa: E402

WHO = "python-overhead"


def main():
    ap = benchlib.python_parser(WHO, 7, "debian-3.11")
    ap.add_argument("--baseline", help="another build dir whose pcollect runs beside")
    ap.add_argument("--no-others", action="store_true")
    a = ap.parse_args()
    py = benchlib.interpreter(a.python, WHO)
    builds = {"pcollect": os.path.abspath(a.build)}
    if a.baseline:
        builds["baseline"] = os.path.abspath(a.baseline)
    app = os.path.join(TOP, "bench", "python-workload.py")
    for b in builds.values():
        for x in (os.path.join(b, "collector", "pcollect"),
                  os.path.join(b, "finalizer", "pfinalize")):
            if not os.access(x, os.X_OK):
                sys.exit("%s: missing '%s'" % (WHO, x))
    work = tempfile.mkdtemp(prefix="python-overhead.")
    fresh = functools.partial(benchlib.fresh, work)

    def collect(build, ms, res):
        return lambda: [os.path.join(build, "collector", "pcollect"), "-collect", "hotspots",
                        "-quiet", "-finalization-mode=none", "-knob",
                        "sampling-interval=%s" % ms, "-r", fresh(res), "--", py, app, a.scale]

    try:
        variants = [("plain", lambda: [py, app, a.scale])]
        for who, b in builds.items():
            variants += [("%s-10ms" % who, collect(b, 10, who + "10")),
                         ("%s-1ms" % who, collect(b, 1, who + "1"))]
        if not a.no_others:
            variants.append(("cProfile", lambda: [py, "-m", "cProfile", "-o",
                                                  os.path.join(work, "cprofile.out"), app,
                                                  a.scale]))
            if subprocess.run([py, "-c", "import scalene"],
                              stderr=subprocess.DEVNULL).returncode == 0:
                variants.append(("scalene", lambda: [py, "-m", "scalene", "--cpu", "--cli",
                                                     "--outfile",
                                                     os.path.join(work, "scalene.txt"), app,
                                                     a.scale]))
            else:
                print("%s: scalene not installed for %s: left out" % (WHO, py),
                      file=sys.stderr)
        times = benchlib.interleaved(variants, a.rounds, WHO)
        print("workload: bench/python-workload.py %s with %s, %d interleaved rounds"
              % (a.scale, py, a.rounds))
        benchlib.print_table(times, [name for name, _ in variants])
        for who, b in builds.items():
            r1 = os.path.join(work, who + "1")
            nbytes = sum(os.path.getsize(os.path.join(r1, "raw", f))
                         for f in os.listdir(os.path.join(r1, "raw")))
            t0 = time.monotonic()
            subprocess.run([os.path.join(b, "finalizer", "pfinalize"), "-quiet", "-r", r1],
                           check=True)
            fin = time.monotonic() - t0
            con = sqlite3.connect(os.path.join(r1, "result.db"))
            got = dict(con.execute("SELECT key, value FROM meta WHERE key IN "
                                   "('samples_total', 'samples_python')").fetchall())
            con.close()
            n = int(got.get("samples_total", 0))
            print("%s 1 ms: %d samples (%s with Python frames), %d raw bytes (%.0f B/sample); "
                  "pfinalize %.2f s" % (who, n, got.get("samples_python", "?"), nbytes,
                                        nbytes / max(1, n), fin))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
