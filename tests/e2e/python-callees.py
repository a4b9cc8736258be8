#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The C callable a Python line stands calling, named from the interpreter's own data on 3.14+
(the frame's value stack: docs/python.md), on one interpreter (the argument):
tests/progs/python/callees.py spends a budget it measures (time.process_time around each
call, 3 rounds of each) in sorted(), dict.get, str.join, str.replace and str.encode are functions the method tables do not always name (their
PyMethodDef's function tail-calls another: no native frame starts at it; which ones depends on
the build), so before 3.14 their time may stay in the calling line. On 3.14+ each of the five
must be a frame right under the Python line that calls it, with the CPU time the program
measured around its calls, within the tolerance of e2elib.Sampled plus 3 ms for the Python
call around it. Before 3.14 the test checks the two the method tables name on every build
(python-methods) and prints what each of the others got. The program's output and exit
code are the same with and without pcollect."""
import json
import subprocess

import e2elib as e
import pylib

ROUNDS = 3  # tests/progs/python/callees.py: calls per phase
CALL_NS = 3000000  # the Python call and loop around the C function, in the measured time
# (name, calling function, the program's key); the method tables name the first two on
# every interpreter (python-methods), the others on some builds only
CALLEES = [("{built-in method builtins.sorted}", "call_sorted", "sorted"),
           ("{method 'get' of 'dict' objects}", "call_get", "get"),
           ("{method 'join' of 'str' objects}", "call_join", "join"),
           ("{method 'replace' of 'str' objects}", "call_replace", "replace"),
           ("{method 'encode' of 'str' objects}", "call_encode", "encode")]
BY_TABLES = 2


def callees_output():
    """What callees.py prints at scale 1 (alone as under pcollect; known, so it is not run
    alone first to learn it): sorted()'s first and last of range(150000), dict.get's 12000
    hits, the lengths of the join of 750,000 "p<i % 97>", of "abc " * 1,000,000 with each
    "b" made "xy", and of its UTF-16 (a 2-byte BOM, 2 bytes a character)."""
    n = 750000
    lens = [len("p%d" % k) for k in range(97)]
    cycles, rest = divmod(n, 97)
    join = cycles * sum(lens) + sum(lens[:rest]) + n - 1
    text = 4 * 1000000
    return "sorted 0 149999 get 12000 join %d replace %d encode %d\n" % (
        join, text + 1000000, 2 + 2 * text)


def main():
    python = pylib.interpreter(pylib.label_arg())
    minor = int(subprocess.run([python, "-c", "import sys; print(sys.version_info[1])"],
                               stdout=subprocess.PIPE, text=True, check=True).stdout)
    with e.Workdir("py-callees") as w:
        times = w.join("times.json")
        res = e.collect(w, "res", [python, pylib.program("callees.py"), times], interval=1,
                        finalize=True, stdout=callees_output())
        with open(times) as f:
            used = json.load(f)
        print("measured: %s" % used)
        stacks = e.folded(res)
        stats = e.db_sampled(res)
        want = CALLEES if minor >= 14 else CALLEES[:BY_TABLES]
        for name, caller, key in CALLEES:
            under = sum(t for s, t in stacks for k in range(len(s) - 1)
                        if s[k] == caller and s[k + 1] == name)
            line = sum(t for s, t in stacks if s[-1] == caller)
            if (name, caller, key) not in want:
                print("not named from the stack on 3.%d (the frame keeps no stack pointer "
                      "across calls), only where a method table names a native frame: %s, "
                      "%.3f s of its %.3f s named, %.3f s in the calling line"
                      % (minor, name, under, used[key], line))
                continue
            e.check_time(stats, under * 1e9, used[key] * 1e9,
                         "%s right under %s, against the CPU time its calls took"
                         % (name, caller), stretches=ROUNDS, extra_ns=CALL_NS)
        if minor >= 14:
            kinds = dict(e.db_rows(res, "SELECT name, kind FROM functions WHERE name IN (%s)" %
                                   ",".join("'%s'" % n.replace("'", "''")
                                            for n, *_ in CALLEES)))
            e.check(all(kinds.get(n) == "method" for n, *_ in CALLEES),
                    "the database: each is a function of kind 'method' (%s)" % kinds)


if __name__ == "__main__":
    main()
