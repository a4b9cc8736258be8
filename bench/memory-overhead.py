#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""memory-consumption's overhead, side by side in one run, against heaptrack.

bench/malloc-pairs.c (built here with cc -O2 -g) makes N small malloc/free pairs from three
call sites (default 20 million pairs; issue 15's figure is for 100 million). It runs plain,
under pcollect -collect memory-consumption exact (the default) and sampled
(-knob sampling=bytes:N, default one sample per 512 KiB), collection only
(-finalization-mode=none, launcher included), and under heaptrack (its recording only:
`heaptrack -r`, the raw data not interpreted). The runs are interleaved
round-robin (bench/benchlib.py); printed: minimum, median and paired ratios to the plain run,
then each recording's size on disk and the agent's own memory (result.db's process_memory,
finalized once after the timing).

usage: bench/memory-overhead.py [BUILD_DIR] [ROUNDS] [PAIRS] [SAMPLE_BYTES]
       (defaults: build, 5, 20000000, 524288)
"""
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402

WHO = "memory-overhead"
HERE = os.path.dirname(os.path.abspath(__file__))


def du(path):
    if os.path.isfile(path):
        return os.path.getsize(path)
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(path) for f in fs)


def main():
    build = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build")
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    pairs = sys.argv[3] if len(sys.argv) > 3 else "20000000"
    sample = sys.argv[4] if len(sys.argv) > 4 else "524288"
    pcollect = os.path.join(build, "collector", "pcollect")
    pfinalize = os.path.join(build, "finalizer", "pfinalize")
    for x in (pcollect, pfinalize):
        if not os.access(x, os.X_OK):
            sys.exit("%s: missing '%s': build first" % (WHO, x))
    heaptrack = shutil.which("heaptrack")
    if not heaptrack:
        sys.exit("%s: heaptrack not installed (apt-get install heaptrack)" % WHO)
    work = tempfile.mkdtemp(prefix="memory-overhead.")
    try:
        prog = [os.path.join(work, "malloc-pairs"), pairs]
        subprocess.run(["cc", "-O2", "-g", "-o", prog[0], os.path.join(HERE, "malloc-pairs.c")],
                       check=True)

        def pc(name, *knobs):
            return lambda: [pcollect, "-collect", "memory-consumption", "-quiet",
                            "-finalization-mode=none", *knobs, "-r", benchlib.fresh(work, name),
                            "--", *prog]

        def ht():
            out = benchlib.fresh(work, "heaptrack")
            os.mkdir(out)
            return [heaptrack, "-r", "-o", os.path.join(out, "ht"), *prog]

        variants = [
            ("plain", lambda: prog),
            ("pcollect-exact", pc("exact")),
            ("pcollect-sampled", pc("sampled", "-knob", "sampling=bytes:" + sample)),
            ("heaptrack", ht),
        ]
        times = benchlib.interleaved(variants, rounds, WHO)
        print("workload: malloc-pairs %s (small malloc/free pairs), sampled mode: one per %s "
              "bytes on average; %d interleaved rounds" % (pairs, sample, rounds))
        benchlib.print_table(times, [name for name, _ in variants])
        print()
        for name, res in (("pcollect exact", "exact"), ("pcollect sampled", "sampled")):
            path = os.path.join(work, res)
            subprocess.run([pfinalize, "-quiet", "-r", path], check=True)
            con = sqlite3.connect(os.path.join(path, "result.db"))
            agent, = con.execute("select max(agent_peak_bytes) from process_memory").fetchone()
            con.close()
            print("%-18s raw data %9d bytes, agent's memory at its peak %9d bytes"
                  % (name, du(os.path.join(path, "raw")), agent or 0))
        print("%-18s raw data %9d bytes" % ("heaptrack", du(os.path.join(work, "heaptrack"))))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
