#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Issue 10, item 2: `ulimit -f 100` (RLIMIT_FSIZE of 100 blocks) must not kill the program.
A program writes a 64 KiB file and burns 2.5 s of CPU in ever new deep stacks (much raw data,
sampled at 1 ms): with the limit it exits 0 with the same output and file as without the
collector; its stream stops short of the limit with a LOST record of reason file-size-limit,
which pfinalize (run without the limit) reports; what was written before reads cleanly."""
import os
import resource

import e2elib as e

LIMIT = 100 * 1024  # bytes: ulimit -f 100
# What fsize-work writes and prints, as it does alone under the limit (fsize-work.c: 16
# blocks of 4096 'z'): known, so it is not run alone first (2.5 s of CPU time).
FILE = b"z" * (16 * 4096)
OUT = "file=%d\ndone\n" % len(FILE)


def limited():
    resource.setrlimit(resource.RLIMIT_FSIZE, (LIMIT, resource.getrlimit(
        resource.RLIMIT_FSIZE)[1]))


def run_limited(argv):
    import subprocess
    return subprocess.run(argv, preexec_fn=limited, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, timeout=120, env=e.tool_environ())


with e.Workdir("fsize") as w:
    res = w.join("res")
    r = run_limited([e.tool("pcollect"), "-collect", "hotspots", "-r", res, "-quiet",
                     "-finalization-mode=none", "-knob", "sampling-interval=1",
                     "-knob", "stack-depth=1024", "--",
                     e.prog("fsize-work"), w.join("out.prof"), "2500"])
    e.check(r.returncode == 0, "profiled under the limit: exit 0, not SIGXFSZ (%d: %s)"
            % (r.returncode, r.stderr.strip()))
    e.check(r.stdout == OUT, "stdout as without the collector (%r)" % r.stdout)
    with open(w.join("out.prof"), "rb") as b:
        e.check(b.read() == FILE, "the program's own file is whole")
    streams = e.load_streams(res)
    e.check(all(os.path.getsize(s.path) <= LIMIT for s in streams),
            "no stream passes the limit (%s)" % [os.path.getsize(s.path) for s in streams])
    e.check(all(s.stats["bytes_skipped"] == 0 for s in streams), "every stream reads cleanly")
    lost = [x for s in streams for x in s.of_type("lost") if x["reason"] == 6]
    e.check(lost and sum(x["count"] for x in lost) > 0,
            "a LOST record of reason file-size-limit (6) counts the samples not written (%s)"
            % lost)
    f = e.pfinalize(res)
    e.check(f.returncode == 0, "pfinalize (without the limit) exits 0")
    rows = e.db_rows(res, "SELECT reason, SUM(count) FROM lost GROUP BY reason")
    e.check(("file-size-limit", sum(x["count"] for x in lost)) in rows,
            "the lost table names the reason: %s" % rows)
    e.check("the file size limit (RLIMIT_FSIZE) was reached" in f.stderr,
            "the summary says why the stream stopped: %s"
            % [l for l in f.stderr.splitlines() if "note:" in l])
