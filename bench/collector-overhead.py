#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Collector overhead, side by side in one run.

tests/progs/cpu-split in its fixed-work mode (a CPU-bound C program, about 3 s, 21-frame
stacks; "fixed": a set amount of work, so a profiler's cost makes the run longer instead of
coming out of a CPU-time budget) runs plain, under pcollect at 10 ms and 1 ms (collection
only: -finalization-mode=none, launcher included), at 1 ms with -knob sampling-clock=task-clock,
and under `perf record -F 100 -g` and `perf record -F 1000 -g`. The runs are interleaved
round-robin (bench/benchlib.py); printed: minimum, median and paired ratios to the plain run,
then raw bytes per sample of each recording.

usage: bench/collector-overhead.py [BUILD_DIR] [ROUNDS]   (defaults: build, 7)
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402

WHO = "collector-overhead"


def main():
    build = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build")
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 7
    pcollect = os.path.join(build, "collector", "pcollect")
    prog = [os.path.join(build, "tests", "progs", "cpu-split"), "8", "40", "fixed"]
    dump = os.path.join(build, "tests", "progs", "raw-dump")
    for x in (pcollect, prog[0], dump):
        if not os.access(x, os.X_OK):
            sys.exit("%s: missing '%s': build first" % (WHO, x))
    if not shutil.which("perf"):
        sys.exit("%s: perf not installed (apt-get install linux-perf)" % WHO)
    work = tempfile.mkdtemp(prefix="collector-overhead.")

    def pc(name, *knobs):
        return lambda: [pcollect, "-collect", "hotspots", "-quiet", "-finalization-mode=none",
                        *knobs, "-r", benchlib.fresh(work, name), "--", *prog]

    def perf(name, freq):
        return lambda: ["perf", "record", "-q", "-F", freq, "-g", "-o",
                        benchlib.fresh(work, name), "--", *prog]

    variants = [
        ("plain", lambda: prog),
        ("pcollect-10ms", pc("r10")),
        ("pcollect-1ms", pc("r1", "-knob", "sampling-interval=1")),
        ("pcollect-1ms-tc", pc("rt1", "-knob", "sampling-interval=1", "-knob",
                               "sampling-clock=task-clock")),
        ("perf-F100-g", perf("perf100.data", "100")),
        ("perf-F1000-g", perf("perf1000.data", "1000")),
    ]
    try:
        times = benchlib.interleaved(variants, rounds, WHO)
        print("workload: %s, %d interleaved rounds" % (" ".join(prog), rounds))
        benchlib.print_table(times, [name for name, _ in variants])
        print()
        for name, res in (("pcollect 10 ms", "r10"), ("pcollect 1 ms", "r1"),
                          ("pcollect 1 ms task-clock", "rt1")):
            raw = os.path.join(work, res, "raw")
            nbytes = samples = 0
            for f in os.listdir(raw):
                path = os.path.join(raw, f)
                nbytes += os.path.getsize(path)
                out = subprocess.run([dump, path], stdout=subprocess.PIPE, text=True).stdout
                samples += out.count('"type":"sample"')
            print("raw data: %-25s %7d bytes / %5d samples = %5.1f B/sample"
                  % (name, nbytes, samples, nbytes / max(samples, 1)))
        for name, data in (("perf -F 100 -g", "perf100.data"), ("perf -F 1000 -g",
                                                                 "perf1000.data")):
            path = os.path.join(work, data)
            out = subprocess.run(["perf", "report", "-D", "-i", path], stdout=subprocess.PIPE,
                                 stderr=subprocess.DEVNULL, text=True).stdout
            samples = len(re.findall(r"PERF_RECORD_SAMPLE", out))
            nbytes = os.path.getsize(path)
            print("raw data: %-25s %7d bytes / %5d samples = %5.1f B/sample"
                  % (name, nbytes, samples, nbytes / max(samples, 1)))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
