#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""OpenMP waits (tests/progs/omp-work.c) with one runtime, read from the raw streams: "gcc"
(libgomp, through its interposed entry points) or "clang" (libomp, through OMPT). Four
parallel regions where thread 0 has twice the work of the other three: each thread's
openmp-barrier waits on the region's object are what the program measured between its
arrival and the region's end (thread 0, last, hardly waits; the others half the region),
within 5% + 3 ms each; OMP_REGION records give the four regions of four threads with that
object. An explicit barrier thread 0 reaches late, a critical section and an omp_lock thread
0 holds for 60 ms: each waiting thread's wait of the right kind, in the window the program
timed, is what it measured.

Usage: collect-waits-omp.py gcc|clang"""
import os
import sys

import e2elib as e

REL, ABS_NS = 0.05, 3000000
KIND = {"region": "openmp-barrier", "barrier": "openmp-barrier", "critical": "openmp-lock",
        "lock": "openmp-lock"}

if len(sys.argv) != 2 or sys.argv[1] not in ("gcc", "clang"):
    e.fail("usage: collect-waits-omp.py gcc|clang")
name = "omp-work-" + sys.argv[1]
path = os.path.join(e.BUILD, "tests", "progs", name)
if not os.access(path, os.X_OK):
    e.skip("%s not built: %s" % (name, "gcc without OpenMP" if sys.argv[1] == "gcc" else
                                 "clang or libomp-dev (LLVM's OpenMP runtime) not installed"),
           needs=["gcc"] if sys.argv[1] == "gcc" else ["clang", "libomp-dev"])

with e.Workdir("waits-omp") as w:
    res = w.join("res")
    r = e.pcollect([path], result=res, analysis="threading",
                   options=["-knob", "sampling-interval=1"])
    e.check(r.returncode == 0, "pcollect exits 0 (%d: %s)" % (r.returncode, r.stderr.strip()))
    told = []
    for line in r.stdout.splitlines():
        if line.startswith("wait "):
            f = dict(x.split("=") for x in line.split()[1:])
            told.append((f["kind"], int(f["tid"]), int(f["start"]), int(f["end"])))
    e.check(len(told) == 4 * 4 + 4 + 3 + 3, "the program reported its %d waits" % len(told))
    streams = e.load_streams(res)
    e.check(all(s.stats["bytes_skipped"] == 0 and s.stats["records_malformed"] == 0
                for s in streams), "every stream reads cleanly")
    by_tid = {s.tid: s for s in e.thread_streams(streams)}
    regions = sorted((s.header["origin_ns"] + rec["time"], rec) for s in streams
                     for rec in s.of_type("omp_region"))
    e.check(len(regions) == 7, "seven OMP_REGION records, one per region (%d)" % len(regions))
    imbalanced = regions[0][1]["object"]
    e.check(all(rec["object"] == imbalanced and rec["threads"] == 4
                for _t, rec in regions[:4]),
            "the first four are the imbalanced region's, of four threads each")
    for kind, tid, start, end in told:
        s = by_tid.get(tid)
        e.check(s is not None, "%s: thread %d has a stream" % (kind, tid))
        origin = s.header["origin_ns"]
        # The waits that began while the program waited (the end is when the thread runs
        # again, which the program may not see: a worker at an implicit barrier).
        mine = [rec for rec in s.records if rec["type"] == "wait" and rec["kind"] == KIND[kind]
                and start - ABS_NS <= origin + rec["time"] <= end]
        if kind == "region":
            mine = [rec for rec in mine if rec["object"] == imbalanced]
        got = sum(rec["duration"] for rec in mine)
        want = end - start
        # A wait under the threshold is counted in a WAIT_SUM, with no time to place it.
        ok = abs(got - want) <= REL * want + ABS_NS
        e.check(ok, "%s: thread %d waited %.3f ms, the program measured %.3f ms" % (
            kind, tid, got / 1e6, want / 1e6))
    sums = [rec for s in e.thread_streams(streams) for rec in s.of_type("wait_sum")
            if rec["kind"] == "openmp-barrier" and rec["object"] == imbalanced]
    e.check(sum(r["count"] for r in sums) + sum(
        1 for s in e.thread_streams(streams) for rec in s.of_type("wait")
        if rec["kind"] == "openmp-barrier" and rec["object"] == imbalanced) == 16,
        "every thread's barrier wait of every region is counted: 16")
