#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Two threads dlopen/dlclose a library in a loop while a third burns CPU, sampled at 1 ms:
no hang, no crash, every stream reads cleanly, the loaders themselves are sampled.
CI runs 3 x 3 s; bench/collector-dlopen-stress.sh runs the full 20 x 10 s.
Environment: STRESS_RUNS, STRESS_SECONDS override the defaults."""
import os
import subprocess

import e2elib as e

RUNS = int(os.environ.get("STRESS_RUNS", "3"))
SECONDS = float(os.environ.get("STRESS_SECONDS", "3"))

with e.Workdir("dlopen-stress") as w:
    lib = os.path.join(e.BUILD, "tests", "progs", "libdl-work-lib.so")
    for i in range(RUNS):
        res = w.join("res%d" % i)
        try:
            r = e.pcollect([e.prog("dlopen-stress"), lib, str(SECONDS)], result=res,
                           options=["-knob", "sampling-interval=1"],
                           timeout=SECONDS * 4 + 60)
        except subprocess.TimeoutExpired:
            e.fail("run %d: hung (no exit within %d s)" % (i, SECONDS * 4 + 60))
        e.check(r.returncode == 0 and r.stdout == "dlopen_cycles=1\n",
                "run %d: exit 0 and the program's output (%d, %r, %s)"
                % (i, r.returncode, r.stdout, r.stderr.strip()))
        streams = e.load_streams(res)
        e.check(all(s.stats["bytes_skipped"] == 0 for s in streams),
                "run %d: %d streams read cleanly" % (i, len(streams)))
        loads = sum(len(s.of_type("module_load")) for s in streams)
        unloads = sum(len(s.of_type("module_unload")) for s in streams)
        busy = sum(x["count"] for s in streams for x in s.of_type("lost")
                   if x["reason"] == e.LOST_BUSY)
        sampled = [s for s in streams if s.weight() > 0]
        print("run %d: %d module loads, %d unloads, %d samples skipped inside the loader"
              % (i, loads, unloads, busy))
        e.check(unloads > 10 and loads > unloads, "run %d: dlopen/dlclose cycles recorded" % i)
        e.check(len(sampled) >= 3, "run %d: the loaders and the burner are sampled (%d "
                "threads with samples)" % (i, len(sampled)))
