#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""pcollect -target-pid on a Python program it did not start (issue 18), on one interpreter
(the argument; skipped with the reason where it is missing, or where ptrace is refused).

tests/progs/python/attach.py burns CPU in phase_one until a file appears, then 0.1 s in
phase_two, in short regions "one" and "two" (the pcollect module, imported from PYTHONPATH as
an installed module would be); attached after 0.3 s for 0.5 s, the file made once pcollect has
let go. Checks: the CPU time the agent measured in the main thread against what the kernel
counted around the pcollect run (e2elib.check_attached), and the samples against it within
their tolerance; every sample has the Python frames <module> > main > phase_one, most of them
> spin_for > spin; the samples are in region "one", less at most the time the module takes to
find the agent (its RECHECK) and one chunk: [no region]; nothing in phase_two or "two"; the
program's output and exit code intact."""
import os

import e2elib as e
import pylib

RECHECK_NS = 50e6  # api/python/pcollect: between two looks for an agent
CHUNK_NS = 20e6  # tests/progs/python/attach.py


def main():
    python = pylib.interpreter(pylib.label_arg())
    with e.Workdir("attach-py") as w:
        env = dict(os.environ, PYTHONPATH=os.path.join(e.BUILD, "api", "python"))
        res = e.Result(w.join("res"))
        out, err, code, pid, window = pylib.attach_go(
            w, [python, pylib.program("attach.py"), pylib.GO, "100"], res, 0.5, 0.3, env=env)
        e.check(code == 0 and out.strip() == "attach done",
                "the program's output and exit code intact (%d: %r %s)"
                % (code, out, err.strip()))
        e.finalize(res)
        main_stream = [s for s in e.thread_streams(res.streams()) if s.tid == pid]
        e.check(len(main_stream) == 1, "the main thread has its stream")
        e.check_attached(window, main_stream[0], "attached")
        stats = e.db_sampled(res)
        e.check_time(stats, stats.total_ns, main_stream[0].cpu_ns(),
                     "the samples against the CPU time the agent measured while attached")
        db = e.Db(res)
        in_one = in_spin = total = 0
        own = 0
        for _th, sid, count, _w, _t in db.samples:
            # The agent's own work (Collector Overhead, a root of its own) is no program's.
            if db.stack(sid)[0]["name"] == "[pcollect agent]":
                own += count
                continue
            names = [fr["name"] for fr in db.python_frames(sid)]
            total += count
            if names[1:3] == ["main", "phase_one"]:
                in_one += count
                if names[-2:] == ["spin_for", "spin"]:
                    in_spin += count
        e.check(total > 0 and in_one == total,
                "%d of %d samples under the Python frames <module> > main > phase_one (an "
                "attached interpreter's frames; %d more the agent's own)" % (in_one, total, own))
        e.check(in_spin >= total / 2, "%d of them in spin_for > spin, where the time goes"
                % in_spin)
        by = {row["Region"]: e.secs(row) * 1e9
              for row in e.rows(res, "-view", "hotspots", "-group-by", "region")}
        e.check(set(by) <= {"one", "[no region]"} and
                by.get("[no region]", 0) <= RECHECK_NS + CHUNK_NS + 2 * e.TICK_NS,
                "regions: region one, and [no region] no longer than the module takes to "
                "find the agent (%s)" % by)


main()
