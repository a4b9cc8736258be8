#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Work under the call that started it (issue 24, item 4): tests/progs/stitch-threads, whose
main calls start_work(), which creates two workers of 1 and 2 units of CPU time (150 ms each)
and joins them, then burns 1 unit in own_work(). Known answers: with -stitch the top-down
tree has one root, main, with the 4 units; main > start_work holds the workers' 3 units
(worker_burn under it); main > own_work its unit. Without -stitch the view is as before: the
workers are a root of their own (worker, 3 units) and start_work holds nothing of theirs.
result.db names each worker's creator and its stack there (threads.parent_thread_id,
parent_stack_id: main > start_work). Times within e2elib.Sampled's tolerance. The program's
output and exit code are the same with and without pcollect."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2elib as e  # noqa: E402

UNIT_MS = 150


def main():
    unit = UNIT_MS * 1000000
    with e.Workdir("stitch-threads") as w:
        # Its output is known (stitch-threads.c): it is not run alone first to learn it.
        res = e.collect(w, "res", [e.prog("stitch-threads"), UNIT_MS], interval=1,
                        stdout="units=4\n", finalize=True)
        stats = e.db_sampled(res)

        # result.db: each worker's creator is main's thread, at main > start_work.
        db = e.Db(res)
        rows = res.db("SELECT t.id, t.parent_thread_id, t.parent_stack_id, p.tid "
                      "FROM threads t LEFT JOIN threads p ON p.id = t.parent_thread_id")
        pid = db.threads[rows[0][0]][1]
        made = [r for r in rows if r[2] is not None]
        e.check(len(made) == 2 and all(r[3] == pid for r in made),
                "two threads created by main's thread (%s)" % (rows,))
        for r in made:
            names = [f["name"] for f in db.stack(r[2])]
            e.check(names[-2:] == ["main", "start_work"],
                    "a worker's creating stack is main > start_work, where it called "
                    "pthread_create, the agent's frames left out (%s)" % names)

        # -stitch: one tree, the workers' time under the call that created them.
        st = e.topdown_paths(res, "-stitch")
        roots = {k[0]: v for k, v in st.items() if len(k) == 1}
        e.check(max(roots, key=roots.get) == "main", "-stitch: main is the root (%s)" % roots)
        e.check(sum(v for k, v in roots.items() if k != "main") <= stats.quantum_ns,
                "-stitch: no other root holds time (%s)" % roots)
        e.check_time(stats, roots["main"], 4 * unit, "-stitch: main", stretches=4)
        e.check_time(stats, st.get(("main", "start_work"), 0), 3 * unit,
                     "-stitch: main > start_work", stretches=4)
        under = sum(v for k, v in st.items() if k[:2] == ("main", "start_work") and
                    k[-1] == "worker_burn")
        e.check_time(stats, under, 3 * unit, "-stitch: worker_burn under start_work",
                     stretches=4)
        e.check_time(stats, st.get(("main", "own_work"), 0), unit, "-stitch: main > own_work",
                     stretches=2)

        # The default view is as it was: the workers are a root of their own.
        plain = e.topdown_paths(res)
        e.check_time(stats, plain.get(("worker",), 0), 3 * unit, "default: the worker root",
                     stretches=4)
        e.check(plain.get(("main", "start_work"), 0) <= stats.quantum_ns,
                "default: start_work holds none of the workers' time (%.3f s)" %
                (plain.get(("main", "start_work"), 0) / 1e9))
        e.check_time(stats, plain.get(("main",), 0), unit, "default: main", stretches=2)
    print("ok: %s" % stats)


if __name__ == "__main__":
    main()
