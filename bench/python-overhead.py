#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Python profiling overhead, side by side in one run.

bench/python-workload.py (pure Python, CPU-bound, about 3 s) runs plain, under pcollect at
10 ms and 1 ms (collection only: -finalization-mode=none, launcher included), under
`python -m cProfile` and, where it is installed for that interpreter, under `scalene --cpu`
(apt-get install python3-scalene gives it to /usr/bin/python3). The runs are interleaved
round-robin (plain, pcollect, ..., plain, pcollect, ...) so that a burst of load from other
jobs on a shared machine hits every variant alike; the minimum and the median of the wall and
CPU (user + sys, children included) times are printed as ratios to the plain run. Then what
pcollect recorded at 1 ms and what finalizing it cost.

usage: bench/python-overhead.py [BUILD_DIR] [ROUNDS] [PYTHON]
       (defaults: build, 7, /usr/bin/python3.11)
"""
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(argv):
    """Wall seconds and CPU seconds (user + sys of the whole process tree) of argv."""
    t0 = time.monotonic()
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.monotonic() - t0
    p.returncode = os.waitstatus_to_exitcode(status)
    err = p.stderr.read().decode(errors="replace")
    p.stderr.close()
    if p.returncode != 0:
        sys.exit("python-overhead: %s failed (exit %d): %s" % (" ".join(argv), p.returncode,
                                                               err.strip()))
    return wall, ru.ru_utime + ru.ru_stime


def main():
    build = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build")
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 7
    py = sys.argv[3] if len(sys.argv) > 3 else "/usr/bin/python3.11"
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

        times = {name: [] for name, _ in variants}
        for name, argv in variants:  # warm-up: page cache, pyc files
            run(argv())
        for _ in range(rounds):
            for name, argv in variants:
                times[name].append(run(argv()))
        base_w = [w for w, _ in times["plain"]]
        base_c = [c for _, c in times["plain"]]
        print("workload: bench/python-workload.py with %s, %d interleaved rounds" % (py, rounds))
        print("%-14s %8s %7s %9s %7s %8s %7s" % ("run", "min s", "min x", "median s",
                                                 "med x", "cpu s", "cpu x"))
        for name, _ in variants:
            w = [x for x, _ in times[name]]
            c = [y for _, y in times[name]]
            print("%-14s %8.3f %7.4f %9.3f %7.4f %8.3f %7.4f" % (
                name, min(w), min(w) / min(base_w), statistics.median(w),
                statistics.median(w) / statistics.median(base_w), statistics.median(c),
                statistics.median(c) / statistics.median(base_c)))
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
