#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The agent's share of a dlopen-heavy start, measured beside perf in one run.

A Python program imports 100 C extension modules (one shared object exporting PyInit_m0 ..
PyInit_m99, built here with gcc against the interpreter's headers and copied to m0.so ..
m99.so: each a load of its own) and nothing else. Every import is a dlopen, which runs the
agent's module scan. Three variants run interleaved, round-robin (bench/benchlib.py): plain,
under pcollect -collect hotspots at 1 ms, and `perf record -F 1000 --call-graph dwarf` of
that same pcollect run. Printed:

- ours: the Collector Overhead pcollect's summary gives (the samples taken while the agent's
  code ran, [pcollect agent]) as a share of the CPU Time it sampled, summed over the rounds;
- perf's (`perf record -F 1000 --call-graph dwarf`: the agent has no frame pointers): the
  share of perf's samples of the program (comm python3) whose innermost frame of
  libpcollect-agent.so is the agent's own code (not an interposer passing the call on, as
  dlopen does to the loader), split by what it did: its module scan at a dlopen (scan), its
  start-up (start: its first scan included), the sampling handler, the record of a sample
  held back in the loader (held: its unwind at dlopen's return), the rest: what the agent
  cost as seen from outside, in the same runs;
- the wall and CPU time of pcollect's run against the plain run (paired medians).

usage: bench/dlopen-overhead.py [BUILD_DIR] [ROUNDS] [PYTHON]
       defaults: build, 10, /usr/bin/python3 (needs its headers: python3-dev)
"""
import os
import shutil
import subprocess
import sys
import tempfile

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(TOP, "bench"))
import benchlib  # noqa: E402

WHO = "dlopen-overhead"
N = 100
MASK = ("__pthread_sigmask", "pthread_sigmask", "sigprocmask", "__GI___pthread_sigmask")


def build_modules(work, py):
    inc = subprocess.run([py, "-c", "import sysconfig; print(sysconfig.get_paths()['include'])"],
                         capture_output=True, text=True, check=True).stdout.strip()
    if not os.path.exists(os.path.join(inc, "Python.h")):
        sys.exit("%s: no Python.h in %s (apt-get install python3-dev)" % (WHO, inc))
    src = os.path.join(work, "ext.c")
    with open(src, "w") as f:
        f.write("#include <Python.h>\n")
        for i in range(N):
            f.write("static struct PyModuleDef d%d = { PyModuleDef_HEAD_INIT, \"m%d\", NULL, -1,"
                    " NULL };\nPyMODINIT_FUNC PyInit_m%d(void) { return PyModule_Create(&d%d); }"
                    "\n" % (i, i, i, i))
    mods = os.path.join(work, "mods")
    os.mkdir(mods)
    first = os.path.join(mods, "m0.so")
    subprocess.run(["gcc", "-shared", "-fPIC", "-O2", "-I", inc, "-o", first, src], check=True)
    for i in range(1, N):
        shutil.copy(first, os.path.join(mods, "m%d.so" % i))
    script = os.path.join(work, "imp.py")
    with open(script, "w") as f:
        f.write("import sys\nsys.path.insert(0, %r)\nfor i in range(%d):\n"
                "    __import__('m%%d' %% i)\n" % (mods, N))
    return script


def summary(preport, res):
    out = subprocess.run([preport, "-r", res, "-view", "summary", "-format", "csv"],
                         capture_output=True, text=True, check=True).stdout
    vals = {}
    for line in out.splitlines()[1:]:
        cells = line.split(",")
        if len(cells) >= 3:
            vals[cells[1]] = cells[2]
    return float(vals.get("CPU Time", 0)), float(vals.get("Collector Overhead", 0))


# The agent's exported interposers that only pass a call on: a sample whose innermost agent
# frame is one of them is in the program's own call (the loader's work in dlopen), not ours.
PASS = ("dlopen", "dlmopen", "dlclose", "dl_iterate_phdr", "mmap", "mmap64", "mprotect",
        "agent_mmap", "agent_mmap64", "pthread_create", "read", "sigaction", "pthread_sigmask",
        "sigprocmask", "close", "dup2", "dup3", "pipe2")
# What the agent was doing, by a function of its on the stack (the first that matches).
KINDS = (("start", "agent_init"), ("scan", "modules_scan"), ("handler", "on_signal"),
         ("held", "agent_dl_return"))


def perf_shares(data):
    """Samples of comm python3: all, and those of the agent's own code by what it did (its
    module scan, its start-up, the sampling handler, the rest)."""
    out = subprocess.run(["perf", "script", "-i", data, "-F", "comm,ip,sym,dso"],
                         capture_output=True, text=True).stdout
    total = 0
    kinds = {k: 0 for k in ("scan", "start", "handler", "held", "other")}
    for block in out.split("\n\n"):
        lines = block.strip().splitlines()
        if not lines or lines[0].split()[0] != "python3":
            continue
        total += 1
        frames = [ln.split(None, 2) for ln in lines[1:]]
        ours = [f[1] for f in frames if len(f) == 3 and "libpcollect-agent" in f[2]]
        if not ours or ours[0] in PASS:
            continue
        kind = next((k for k, fn in KINDS if fn in ours), "other")
        kinds[kind] += 1
    return total, kinds


def main():
    build = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build")
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 10
    py = sys.argv[3] if len(sys.argv) > 3 else "/usr/bin/python3"
    pcollect = os.path.join(build, "collector", "pcollect")
    pfinalize = os.path.join(build, "finalizer", "pfinalize")
    preport = os.path.join(build, "report", "preport")
    if not shutil.which("perf"):
        sys.exit("%s: perf is not installed" % WHO)
    work = tempfile.mkdtemp(prefix="dlopen-overhead.")
    try:
        script = build_modules(work, py)
        n = {"res": 0}

        def collect(perf):
            n["res"] += 1
            res = os.path.join(work, "res%d" % n["res"])
            argv = [pcollect, "-collect", "hotspots", "-r", res, "-finalization-mode=none",
                    "-quiet", "-knob", "sampling-interval=1", "--", py, script]
            if perf:
                argv = ["perf", "record", "-q", "-F", "1000", "--call-graph", "dwarf", "-o",
                        os.path.join(work, "perf%d.data" % n["res"]), "--"] + argv
            return argv

        variants = [("plain", lambda: [py, script]), ("pcollect", lambda: collect(False)),
                    ("perf+pcollect", lambda: collect(True))]
        times = benchlib.interleaved(variants, rounds, WHO)
        cpu = own = 0.0
        ptotal = 0
        pkinds = {}
        for i in range(1, n["res"] + 1):
            res = os.path.join(work, "res%d" % i)
            subprocess.run([pfinalize, "-r", res, "-quiet"], check=True)
            c, o = summary(preport, res)
            cpu += c
            own += o
            data = os.path.join(work, "perf%d.data" % i)
            if os.path.exists(data):
                t, k = perf_shares(data)
                ptotal += t
                for key, v in k.items():
                    pkinds[key] = pkinds.get(key, 0) + v
        print("%d imports of %d extension modules each, %d runs under pcollect" %
              (rounds + 1, N, n["res"]))
        benchlib.print_table(times, ["plain", "pcollect", "perf+pcollect"])
        print("ours:  Collector Overhead %.3f s of %.3f s CPU Time sampled: %.2f%%" %
              (own, cpu, 100.0 * own / cpu if cpu else 0.0))
        pagent = sum(pkinds.values())
        print("perf:  %d of %d samples of python3 in the agent's own code: %.2f%%; of them "
              "%s" % (pagent, ptotal, 100.0 * pagent / max(ptotal, 1), ", ".join(
                  "%s %d (%.2f%%)" % (k, v, 100.0 * v / max(ptotal, 1))
                  for k, v in sorted(pkinds.items()))))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
