#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Python profiling overhead, side by side in one run.

bench/python-workload.py (pure Python, CPU-bound, about 3 s) runs plain, under pcollect at
10 ms and 1 ms (collection only: -finalization-mode=none, launcher included), under
`python -m cProfile` and, where it is installed for that interpreter, under `scalene --cpu`
(apt-get install python3-scalene gives it to /usr/bin/python3). The runs are interleaved
round-robin (plain, pcollect, ..., plain, pcollect, ...) so that a burst of load from other
jobs on a shared machine hits every variant alike (bench/benchlib.py); the minimum and the
median of the wall and CPU (user + sys, children included) times are printed as ratios to the
plain run, with the median of the paired (same round) wall ratios. Then what pcollect
recorded at 1 ms and what finalizing it cost.

usage: bench/python-overhead.py [BUILD_DIR] [ROUNDS] [PYTHON]
       (defaults: build, 7, the distribution's python3.11: tests/pythons.py debian-3.11)
"""
import os
import shutil
import subprocess
import sys
import tempfile
import time

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(TOP, "bench"))
sys.path.insert(0, os.path.join(TOP, "tests"))
import benchlib  # noqa: E402
import pythons  # noqa: E402


def main():
    build = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build")
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 7
    py = sys.argv[3] if len(sys.argv) > 3 else pythons.for_label("debian-3.11")
    if isinstance(py, pythons.Python):
        py = py.exe
    elif len(sys.argv) <= 3:
        sys.exit("python-overhead: " + py)
    pcollect = os.path.join(build, "collector", "pcollect")
    pfinalize = os.path.join(build, "finalizer", "pfinalize")
    app = os.path.join(TOP, "bench", "python-workload.py")
    for x in (pcollect, pfinalize, py):
        if not os.access(x, os.X_OK):
            sys.exit("python-overhead: missing '%s'" % x)
    work = tempfile.mkdtemp(prefix="python-overhead.")
    try:
        variants = [
            ("plain", lambda: [py, app]),
            ("pcollect-10ms", lambda: [pcollect, "-collect", "hotspots", "-quiet",
                                       "-finalization-mode=none", "-r", fresh("r10"), "--",
                                       py, app]),
            ("pcollect-1ms", lambda: [pcollect, "-collect", "hotspots", "-quiet",
                                      "-finalization-mode=none", "-knob",
                                      "sampling-interval=1", "-r", fresh("r1"), "--", py, app]),
            ("cProfile", lambda: [py, "-m", "cProfile", "-o",
                                  os.path.join(work, "cprofile.out"), app]),
        ]
        if subprocess.run([py, "-c", "import scalene"], stderr=subprocess.DEVNULL).returncode == 0:
            variants.append(("scalene", lambda: [py, "-m", "scalene", "--cpu", "--cli",
                                                 "--outfile", os.path.join(work, "scalene.txt"),
                                                 app]))
        else:
            print("python-overhead: scalene not installed for %s: left out" % py,
                  file=sys.stderr)

        def fresh(name):
            path = os.path.join(work, name)
            shutil.rmtree(path, ignore_errors=True)
            return path

        times = benchlib.interleaved(variants, rounds, "python-overhead")
        print("workload: bench/python-workload.py with %s, %d interleaved rounds" % (py, rounds))
        benchlib.print_table(times, [name for name, _ in variants])
        r1 = os.path.join(work, "r1")
        nbytes = sum(os.path.getsize(os.path.join(r1, "raw", f))
                     for f in os.listdir(os.path.join(r1, "raw")))
        t0 = time.monotonic()
        subprocess.run([pfinalize, "-quiet", "-r", r1], check=True)
        fin = time.monotonic() - t0
        import sqlite3
        con = sqlite3.connect(os.path.join(r1, "result.db"))
        samples = con.execute("SELECT value FROM meta WHERE key = 'samples_total'").fetchone()
        con.close()
        n = int(samples[0]) if samples else 0
        print("pcollect 1 ms: %d samples, %d raw bytes (%.0f B/sample); pfinalize %.2f s"
              % (n, nbytes, nbytes / max(1, n), fin))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
