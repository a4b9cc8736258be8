# SPDX-License-Identifier: MIT
"""python3 -m pcollect: profile a Python program started the way cProfile starts one.

    python3 -m pcollect [options] script.py [args]
    python3 -m pcollect [options] -m module [args]

    -o FILE    also write the profile as a pstats file (cProfile's -o): snakeviz, gprof2dot,
               python3 -m pstats FILE; without -r the result directory is a temporary one
    -s SORT    the table printed at the end: tottime (the default) or cumulative
    -r DIR     the result directory (default: pcollect's next free r000hs, ...)
    any other pcollect option (-collect threading, -knob sampling-interval=1, -quiet, ...)

The program runs under pcollect with this same interpreter (sys.executable: a venv's or
pyenv's python profiles itself), its stdout, stdin and exit status its own; what pcollect
prints, and the hotspots table at the end, go to stderr. docs/api.md says how the module
gets where an interpreter finds it.
"""
import os
import shutil
import signal
import subprocess
import sys
import tempfile

from pcollect import _tools

# pcollect's options that take no value (collector/pcollect/pcollect.c, tests check it).
FLAGS = {"quiet", "q", "verbose", "v", "follow-child", "no-follow-child", "archive",
         "trace-mpi", "start-paused", "target-loads-agent"}
SORTS = {"tottime": "CPU Time:Self", "time": "CPU Time:Self",
         "cumulative": "CPU Time:Total", "cumtime": "CPU Time:Total"}
USAGE = "usage: python3 -m pcollect [-o FILE] [-s SORT] [pcollect options] " \
        "(script.py | -m module) [args]"


def usage_error(msg):
    print("pcollect: %s\n%s" % (msg, USAGE), file=sys.stderr)
    sys.exit(2)


def tool(name):
    try:
        return _tools.tool(name)
    except _tools.ToolMissing as e:
        print("pcollect: %s" % e, file=sys.stderr)
        sys.exit(2)


def parse(argv):
    """(pcollect's options, -o, -s, -r, the program's words) from our command line."""
    opts, out, sort, res, i = [], None, None, None, 0
    while i < len(argv):
        a = argv[i]
        if a == "--":
            i += 1
            break
        if not a.startswith("-") or a == "-":
            break
        if a in ("-h", "-help", "--help"):
            print(__doc__.strip())
            sys.exit(0)
        if a == "-m":
            if i + 1 >= len(argv):
                usage_error("option '-m' needs a module name")
            return opts, out, sort, res, ["-m"] + argv[i + 1:]
        name, eq, value = a.lstrip("-").partition("=")
        if name in FLAGS:
            opts.append(a)
            i += 1
            continue
        if not eq:
            if i + 1 >= len(argv):
                usage_error("option '%s' needs a value" % a)
            value = argv[i + 1]
            i += 1
        i += 1
        if name in ("o", "outfile"):
            out = value
        elif name == "s" or name == "sort":
            if value not in SORTS:
                usage_error("option '-s' takes %s, not '%s' (a sampler counts no calls)"
                            % (", ".join(sorted(SORTS)), value))
            sort = value
        elif name in ("r", "result-dir"):
            res = value
        else:
            opts += ["-" + name, value]
    if i >= len(argv):
        usage_error("no script to profile")
    return opts, out, sort, res, argv[i:]


def main(argv):
    opts, out, sort, res, program = parse(argv)
    if "-collect" not in opts and "-c" not in opts:
        opts = ["-collect", "hotspots"] + opts
    quiet = "-quiet" in opts or "-q" in opts
    tmp = None
    if res is None and out is not None:
        tmp = tempfile.mkdtemp(prefix="pcollect-")
        res = os.path.join(tmp, "res")
    before = results_here() if res is None else None
    argv = [tool("pcollect")] + opts + (["-r", res] if res else []) + ["--", sys.executable]
    try:
        code = run(argv + program)
        if res is None:
            # pcollect named the next free directory (one past the highest rNNN here).
            made = sorted(results_here() - before)
            res = made[-1] if made else ""
        if res and os.path.exists(os.path.join(res, "result.db")):
            report = [tool("preport"), "-r", res]
            if out is not None:
                subprocess.run(report + ["-format", "pstats", "-report-output", out],
                               stdout=sys.stderr, check=False)
            if not quiet:
                sys.stderr.flush()
                subprocess.run(report + ["-view", "hotspots", "-limit", "20", "-sort-desc",
                                         SORTS[sort or "tottime"]],
                               stdout=sys.stderr, check=False)
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)
    if code < 0:
        # pcollect ended by the signal that ended the program (TERM, INT, HUP): so do we.
        sys.stdout.flush()
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    return code


def results_here():
    """The default-named result directories here (r000hs, r001tr, ...)."""
    return {n for n in os.listdir(".") if len(n) >= 4 and n[0] == "r" and n[1:4].isdigit()}


def run(argv):
    """Run pcollect (signals from the terminal reach it in our process group as they reach
    us): its exit status, the program's, or minus the signal that ended it."""
    p = subprocess.Popen(argv)
    while True:
        try:
            code = p.wait()
            break
        except KeyboardInterrupt:
            continue  # pcollect got the SIGINT too and passes it on: wait for its end
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
