#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""memory-consumption on a Python program, side by side in one run, against heaptrack and
Python's own tracemalloc.

The workload is a Python program's start, where a call-site cache can serve least: every
allocation of `import numpy` (about 220,000, half of them unwound with their Python frames)
under Debian's python3.11 (numpy from python3-numpy). Variants, interleaved round-robin
(bench/benchlib.py): the program alone; pcollect -collect memory-consumption, collection only
(-finalization-mode=none, launcher included) and collection then pfinalize (the default);
heaptrack's recording only (`heaptrack -r`); `python -X tracemalloc=25` (the standard
library's tracer, 25 frames a trace, what memory_profiler and Scalene build on); and, with
--baseline BUILD, another build's pcollect (collection only) on the same rounds. Printed:
minimum, median and paired ratios to the plain run, then what one collection recorded.

usage: bench/memory-python.py [BUILD_DIR] [ROUNDS] [PYTHON] [--baseline BUILD_DIR]
       (defaults: build, 5, debian-3.11: a path or a label of tests/pythons.py)
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402

WHO = "memory-python"
CODE = "import numpy"


def tools(build):
    build = os.path.abspath(build)
    paths = [os.path.join(build, "collector", "pcollect"),
             os.path.join(build, "finalizer", "pfinalize")]
    for x in paths:
        if not os.access(x, os.X_OK):
            sys.exit("%s: missing '%s': build first" % (WHO, x))
    return paths


def main():
    ap = argparse.ArgumentParser(prog="bench/memory-python.py")
    ap.add_argument("build", nargs="?", default="build")
    ap.add_argument("rounds", nargs="?", type=int, default=5)
    ap.add_argument("python", nargs="?", default="debian-3.11")
    ap.add_argument("--baseline", help="another build's pcollect, on the same rounds")
    a = ap.parse_args()
    pcollect, pfinalize = tools(a.build)
    base = tools(a.baseline)[0] if a.baseline else None
    python = benchlib.interpreter(a.python, WHO)
    prog = [python, "-c", CODE]
    if subprocess.run(prog, stderr=subprocess.DEVNULL).returncode:
        sys.exit("%s: %s cannot %s (Debian: apt-get install python3-numpy)"
                 % (WHO, python, CODE))
    heaptrack = shutil.which("heaptrack")
    if not heaptrack:
        sys.exit("%s: heaptrack not installed (apt-get install heaptrack)" % WHO)
    work = tempfile.mkdtemp(prefix="memory-python.")
    try:
        def pc(name, tool, *opts):
            return lambda: [tool, "-collect", "memory-consumption", "-quiet", *opts, "-r",
                            benchlib.fresh(work, name), "--", *prog]

        def ht():
            out = benchlib.fresh(work, "heaptrack")
            os.mkdir(out)
            return [heaptrack, "-r", "-o", os.path.join(out, "ht"), *prog]

        variants = [("plain", lambda: prog),
                    ("pcollect", pc("collect", pcollect, "-finalization-mode=none"))]
        if base:
            variants.append(("pcollect-baseline",
                             pc("baseline", base, "-finalization-mode=none")))
        variants += [("pcollect+pfinalize", pc("full", pcollect)),
                     ("heaptrack -r", ht),
                     ("tracemalloc=25", lambda: [python, "-X", "tracemalloc=25", "-c", CODE])]
        times = benchlib.interleaved(variants, a.rounds, WHO)
        print("workload: %s -c '%s'; %d interleaved rounds" % (python, CODE, a.rounds))
        benchlib.print_table(times, [name for name, _ in variants])
        print()
        res = os.path.join(work, "collect")
        subprocess.run([pfinalize, "-quiet", "-r", res], check=True)
        summary = subprocess.run([os.path.join(os.path.dirname(os.path.dirname(pcollect)),
                                               "report", "preport"), "-r", res, "-view",
                                  "summary", "-format", "csv"], stdout=subprocess.PIPE,
                                 text=True, check=True).stdout
        for line in summary.splitlines():
            if any(k in line for k in ("Allocations,", "Stacks Unwound", "Call-Site Cache")):
                print("  " + line)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
