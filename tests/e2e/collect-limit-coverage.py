#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""-data-limit does not overstate coverage (issue 22, item 9). threads-work makes 160
threads of 4 ms of CPU time each, 8 at a time, and prints the process's CPU time as the
kernel counts it (getrusage, every thread's) on stderr. At 1 ms under the smallest
-data-limit (32 KiB: a stream per thread), sampling stops after about 120 of them: the
threads made after that have no stream. The CPU time "the threads used" (pfinalize's
summary, preport's CPU Time Measured by Threads) must still be the process's whole: within
10% of what the program measured, so the sampled share it gives is true."""
import re

import e2elib as e

with e.Workdir("limit-coverage") as w:
    target = [e.prog("threads-work"), "many", "160", "4"]
    res = e.collect(w, "res", target, interval=1, stdout="threads=160\n",  # threads-work.c
                    options=["-data-limit", "0.03125"])
    known = int(re.search(r"process cpu_ns=(\d+)", res.stderr).group(1))
    e.check(res.meta().get("data_limit_hit") == "1", "the data limit was hit")
    summary = e.finalize(res, options=())
    m = re.search(r"([0-9.]+) s sampled of ([0-9.]+) s the threads used", summary)
    e.check(m, "pfinalize gives the coverage (%s)" % summary.strip().splitlines())
    used = float(m.group(2)) * 1e9
    e.check(abs(used - known) <= 0.10 * known,
            "pfinalize: the threads used %.3f s, the program measured %.3f s (within 10%%)"
            % (used / 1e9, known / 1e9))
    got = e.ns(e.summary_value(res.preport("-view", "summary").stdout,
                               "CPU Time Measured by Threads").rstrip("s"))
    e.check(abs(got - known) <= 0.10 * known,
            "preport: CPU Time Measured by Threads %.3f s, the program measured %.3f s "
            "(within 10%%)" % (got / 1e9, known / 1e9))
