#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Issue 22, item 3: under an address-space limit (ulimit -v
262144, RLIMIT_AS set in preexec_fn) a program creates 16 threads and allocates 100 MB: with
the collector it must create every thread and get its memory as without it, same stdout and
exit code. Before, each of our threads' first free() gave it a malloc arena (64 MiB of
address space) and its stack table took 2.2 MiB: 0 to 7 of 16 threads, malloc failed; under
memory-consumption the agent reserved 1 GiB for its file, then each thread's
pthread_getattr_np() (which allocates) gave it an arena: 13 or 14 of 16 threads."""
import resource

import e2elib as e

LIMIT = 256 << 20  # bytes: ulimit -v 262144


def limited():
    resource.setrlimit(resource.RLIMIT_AS, (LIMIT, resource.getrlimit(resource.RLIMIT_AS)[1]))


with e.Workdir("as-limit") as w:
    alone = e.run_bounded([e.prog("as-limit")], 10, preexec_fn=limited)
    e.check(alone.returncode == 0 and "16 of 16" in alone.stdout and "ok" in alone.stdout,
            "alone under the limit: 16 threads and 100 MB (%d %r)"
            % (alone.returncode, alone.stdout))
    for analysis in ("hotspots", "threading", "memory-consumption"):
        res = w.join(analysis)
        r = e.run_bounded([e.tool("pcollect"), "-collect", analysis, "-r", res, "-quiet",
                           "-finalization-mode=none", "--", e.prog("as-limit")], 10,
                          preexec_fn=limited)
        e.check(r.returncode == alone.returncode and r.stdout == alone.stdout,
                "%s under the limit: exit %d and stdout as alone (%r)\n%s"
                % (analysis, r.returncode, r.stdout, r.stderr[-2000:]))
        f = e.pfinalize(res)
        e.check(f.returncode == 0, "%s: the result finalizes\n%s" % (analysis, f.stderr))
