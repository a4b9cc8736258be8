#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Python thread names (issue 23, item 2), on one interpreter (the argument): names.py runs
ten threads named CustomThreadName-0..9 (py-spy's thread_names test), each burning a CPU
budget of its own, one thread renamed after it started (a name of 29 bytes), and MainThread
burning its own. Under -collect threading, every name must be the thread's label wherever
threads are listed: preport -group-by thread (text and CSV), the timeline, the summary's
Thread Time; each name on the row of its own thread (the TID the program reports for it)
with the CPU time that thread measured under spin_for (e2elib's tolerances). The OS name
may stand beside a Python name ("name [python3.12]") only where it says something else: 3.14+
gives a thread the first 15 bytes of its Python name, which must not be shown as another
name. The program's output and exit code are those it has without the collector."""
import json
import re

import e2elib as e
import pylib

UNIT_MS = 10
RENAMED = "RenamedAfterStart-ALongerName"
LABEL = re.compile(r"^(.*?)(?: \[([^\]]*)\])?$")


def split_label(text):
    """(Python or OS name, the OS name beside it or None) of a thread's name as shown."""
    m = LABEL.match(text.strip())
    return m.group(1), m.group(2)


def main():
    python = pylib.interpreter(pylib.label_arg())
    with e.Workdir("py-names") as w:
        out = w.join("names.json")
        res = e.collect(w, "res", [python, pylib.program("names.py"), out, UNIT_MS],
                        analysis="threading", interval=1, finalize=True,
                        stdout="done: 12 threads named\n")  # 10 workers, renamed, main
        with open(out) as f:
            ref = json.load(f)
        want = ["MainThread", RENAMED] + ["CustomThreadName-%d" % i for i in range(10)]
        e.check(sorted(ref) == sorted(want), "names.py reports the threads %s" % sorted(ref))
        tid_of = {name: ref[name]["tid"] for name in want}

        # -group-by thread, CSV: every name on its own thread's row
        rows = e.rows(res, "-view", "hotspots", "-group-by", "thread")
        # (a TID may have two rows: a wrapper's image before its exec, the interpreter after)
        shown = {}
        for r in rows:
            shown.setdefault(int(r["TID"]), []).append(split_label(r["Thread"]))
        for name in want:
            got = [x for x in shown.get(tid_of[name], []) if x[0] == name]
            e.check(len(got) == 1, "-group-by thread (CSV): thread %d is '%s' (shown: %s)"
                    % (tid_of[name], name, shown.get(tid_of[name])))
            if got and got[0][1] is not None:
                e.check(got[0][1] != name[:15],
                        "%s: its OS name beside it is not its own first 15 bytes (%s)"
                        % (name, got[0][1]))
        # the same in text, the timeline and the summary
        text = res.preport("-view", "hotspots", "-group-by", "thread").stdout
        tl = e.rows(res, "-view", "timeline")
        tl_names = {}
        for r in tl:
            tl_names.setdefault(int(r["TID"]), set()).add(split_label(r["Thread"])[0])
        summary = res.preport().stdout
        for name in want:
            tid = tid_of[name]
            e.check(re.search(r"^%s(\s| \[)" % re.escape(name) + r".*\b%d\b" % tid, text,
                              re.M) is not None,
                    "-group-by thread (text) shows %s on thread %d" % (name, tid))
            e.check(name in tl_names.get(tid, ()), "timeline: thread %d is %s (shown: %s)"
                    % (tid, name, tl_names.get(tid)))
            e.check(re.search(r"^\s*%s( \[[^\]]*\])? \(TID %d\) CPU Time:" % (re.escape(name), tid),
                              summary, re.M) is not None,
                    "summary: Thread Time of %s (TID %d)" % (name, tid))

        # each thread's spin_for time, as it measured it
        db = e.Db(res)
        spin = {name: 0 for name in want}
        name_of = {tid: name for name, tid in tid_of.items()}
        for th, sid, _count, _weight, t_ns in db.samples:
            name = name_of.get(db.threads[th][0])
            if name and any(f["name"] == "spin_for" for f in db.python_frames(sid)):
                spin[name] += t_ns
        for name in want:
            stats = e.db_sampled(res, "t.tid = ?", (tid_of[name],))
            # a short thread: the CPU time after its last sample (up to an interval, at the
            # tick) is never sampled, nor what its timer's first tick leaves; on a busy
            # machine those ends are a large part of a 10-100 ms thread
            e.check_time(stats, spin[name], ref[name]["cpu"] * 1e9, "%s: spin_for" % name,
                         stretches=1, extra_ns=3 * e.TICK_NS)


if __name__ == "__main__":
    main()
