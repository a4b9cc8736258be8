#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""pfinalize on stripped code: a profile of `xz -9` compressing a large input, its time in the
distribution's stripped liblzma.so.5 (docs/performance.md, "Stripped code").

usage: finalizer-stripped.py BUILD BASELINE_BUILD [--rounds N] [--mb M]
   Collects the profile once (BUILD's pcollect, 1 ms; the input: the first M MiB, default 24,
   of the shared libraries in /usr/lib/x86_64-linux-gnu), then finalizes copies of it with
   both builds' pfinalize, interleaved (benchlib.py), N rounds (default 15): with a cold
   symbol cache (PCOLLECT_NO_CACHE=1) and a warm one (each build its own cache directory).
   Prints the CPU time (user + sys) medians and paired ratios, then each build's hottest
   rows in `preport -view hotspots`."""
import glob
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

import benchlib


def arg(name, default):
    if name in sys.argv:
        i = sys.argv.index(name)
        v = sys.argv[i + 1]
        del sys.argv[i:i + 2]
        return int(v)
    return default


def main():
    rounds = arg("--rounds", 15)
    mb = arg("--mb", 24)
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    builds = {"new": os.path.abspath(sys.argv[1]), "base": os.path.abspath(sys.argv[2])}
    xz = shutil.which("xz")
    if not xz:
        sys.exit("xz is not installed (Debian: xz-utils)")
    tmp = tempfile.mkdtemp(prefix="pcollect-bench-stripped.")
    try:
        data = os.path.join(tmp, "input")
        with open(data, "wb") as out:
            left = mb << 20
            for path in sorted(glob.glob("/usr/lib/x86_64-linux-gnu/*.so*")):
                if left <= 0:
                    break
                if os.path.isfile(path):
                    with open(path, "rb") as f:
                        chunk = f.read(left)
                    out.write(chunk)
                    left -= len(chunk)
        res = os.path.join(tmp, "res")
        subprocess.run([os.path.join(builds["new"], "collector", "pcollect"), "-collect",
                        "hotspots", "-r", res, "-knob", "sampling-interval=1",
                        "-finalization-mode=none", "-quiet", "--", xz, "-9", "-k", "-c", data],
                       stdout=subprocess.DEVNULL, check=True)
        variants = []
        for name, build in builds.items():
            copy = os.path.join(tmp, "res-" + name)
            shutil.copytree(res, copy)
            pfin = os.path.join(build, "finalizer", "pfinalize")
            cache = os.path.join(tmp, "cache-" + name)
            variants.append((name + " cold", lambda p=pfin, c=copy: [
                "env", "PCOLLECT_NO_CACHE=1", "DEBUGINFOD_URLS=", p, "-q", "-r", c]))
            variants.append((name + " warm", lambda p=pfin, c=copy, k=cache: [
                "env", "-u", "PCOLLECT_NO_CACHE", "PCOLLECT_CACHE_DIR=" + k, "DEBUGINFOD_URLS=",
                p, "-q", "-r", c]))
        times = benchlib.interleaved(variants, rounds, "finalizer-stripped")
        print("xz -9 on %d MiB, %d rounds; CPU time (user + sys) of pfinalize" % (mb, rounds))
        print("%-10s %12s %12s %10s %12s" % ("cache", "base cpu s", "new cpu s", "new/base",
                                             "paired x"))
        for mode in ("cold", "warm"):
            b = [c for _, c in times["base " + mode]]
            n = [c for _, c in times["new " + mode]]
            paired = statistics.median(x / y for x, y in zip(n, b))
            print("%-10s %12.4f %12.4f %10.3f %12.3f" % (
                mode, statistics.median(b), statistics.median(n),
                statistics.median(n) / statistics.median(b), paired))
        for name, build in builds.items():
            print("\n%s: preport -view hotspots -limit 6" % name)
            sys.stdout.flush()
            subprocess.run([os.path.join(build, "report", "preport"), "-r",
                            os.path.join(tmp, "res-" + name), "-view", "hotspots", "-limit", "6",
                            "-width", "100"], check=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
