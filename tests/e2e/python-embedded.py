#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A native program that links libpython (issue 23, item 10: perf does, for its scripts).
tests/progs/embed-python.c:

idle: burns 300 ms of CPU in C and never starts the interpreter: the summary has no Python
  section (no "Samples Without Python Frames (no-thread-state)" for a program that runs no
  Python), and c_burn holds the CPU time it took.
run: starts the interpreter and burns 300 ms in the Python function py_burn, then 300 ms in
  C: the Python section is there, py_burn and c_burn each within the sampling tolerance of
  the 300 ms they were given.
dlopen: tests/progs/dlopen-python.c, nothing of Python linked in, loads the same libpython
  with dlopen (as a plugin host does), starts the interpreter and burns 300 ms in py_burn:
  the interpreter is found at that dlopen (by its exported _PyRuntime, looked up in memory:
  the agent reads no loaded library's file otherwise), so the Python section is there and
  py_burn holds its 300 ms.
The program's output and exit code are those it has without the collector.
"""
import os
import re
import subprocess

import e2elib as e

MS = 300


def python_section(res):
    text = e.preport("-r", res, "-view", "summary").stdout
    return [line.strip() for line in text.splitlines() if "Python" in line]


def main():
    if not os.access(os.path.join(e.BUILD, "tests", "progs", "embed-python"), os.X_OK):
        e.skip("embed-python is not built: the build found no python3-embed (libpython3-dev)",
               needs="libpython3-dev")
    prog = e.prog("embed-python")
    with e.Workdir("embedded") as w:
        # What the programs print is known (embed-python.c, dlopen-python.c): they are not
        # run alone first to learn it.
        res = e.collect(w, "idle", [prog, "idle", MS], interval=2, stdout="idle: done\n",
                        finalize=True)
        lines = python_section(res)
        e.check(not lines, "idle: no Python section in the summary of a program that runs no "
                "Python (%s)" % lines)
        hs = {r["Function"]: e.secs(r, "CPU Time:Total") for r in
              e.rows(res, "-view", "hotspots")}
        stats = e.db_sampled(res)
        e.check_time(stats, hs.get("c_burn", 0) * 1e9, MS * 1e6, "idle: c_burn")

        res = e.collect(w, "run", [prog, "run", MS], interval=2, stdout="run: done\n",
                        finalize=True)
        lines = python_section(res)
        e.check(any(x.startswith("Python Version") for x in lines) and
                any(x.startswith("Samples With Python Frames") for x in lines),
                "run: the summary has a Python section: %s" % lines)
        hs = {r["Function"]: e.secs(r, "CPU Time:Total") for r in
              e.rows(res, "-view", "hotspots")}
        stats = e.db_sampled(res)
        e.check_time(stats, hs.get("py_burn", 0) * 1e9, MS * 1e6, "run: py_burn")
        e.check_time(stats, hs.get("c_burn", 0) * 1e9, MS * 1e6, "run: c_burn")

        # The libpython embed-python links, loaded by dlopen instead.
        ldd = subprocess.run(["ldd", prog], capture_output=True, text=True).stdout
        m = re.search(r"libpython\S* => (\S+)", ldd)
        e.check(m, "embed-python's libpython found in ldd's output:\n%s" % ldd)
        res = e.collect(w, "dlopen", [e.prog("dlopen-python"), m.group(1), MS], interval=2,
                        stdout="py_burn(%d): done\n" % MS, finalize=True)
        lines = python_section(res)
        e.check(any(x.startswith("Samples With Python Frames") for x in lines),
                "dlopen: the summary has a Python section: %s" % lines)
        hs = {r["Function"]: e.secs(r, "CPU Time:Total") for r in
              e.rows(res, "-view", "hotspots")}
        e.check_time(e.db_sampled(res), hs.get("py_burn", 0) * 1e9, MS * 1e6, "dlopen: py_burn")


if __name__ == "__main__":
    main()
