#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Starting the way Python users start (issue 24), on one interpreter (the argument):
- `python -m pcollect -o out.pstats -r res split.py`: the program's stdout and exit status
  its own, a pstats file that this interpreter's pstats reads, with split.py's known 60/30/10
  of spin_a, spin_b, spin_c, the same figures as the result's, and the hotspots table on
  stderr;
- `python -m pcollect -m module` run by a venv's interpreter that finds the module through a
  .pth file (docs/api.md), in a directory with a result already there: the program's exit
  status (3) its own, the next free rNNNhs made and its hotspots printed;
- `pcollect python split.py` with no -collect: hotspots, said on stderr, the stdout the
  program's.
"""
import importlib.util
import json
import os
import re
import sys

import e2elib as e
import pylib

ROUNDS = 4  # tests/progs/python/split.py
NAMES = ["spin_a", "spin_b", "spin_c"]
PSTATS = """
import json, pstats, sys
s = pstats.Stats(sys.argv[1])
out = {}
for (f, line, name), (cc, nc, tt, ct, callers) in s.stats.items():
    out[name] = out.get(name, 0) + tt
print(json.dumps(out))
"""
MODULE = """
import sys
from split import main
main()
sys.exit(3)
"""


def module_dir():
    return os.path.join(e.BUILD, "api", "python")


def same_output(got, want):
    """split.py prints one number, which depends on how many loops its time budgets took:
    the same output is one number on one line (and nothing of ours)."""
    return got.strip().isdigit() and want.strip().isdigit() and got.count("\n") == 1 == \
        want.count("\n")


def venv_python(python, venv):
    """A venv of python that finds the module through a .pth file, as docs/api.md says, and
    the environment to run it with. Debian unstable's 3.14 and 3.15 run here through a
    wrapper of their own loader (scripts/sid-pythons), which a venv's link cannot be: there
    the module comes by PYTHONPATH, the other way docs/api.md gives."""
    e.run_ok([python, "-m", "venv", "--without-pip", venv])
    vpy = os.path.join(venv, "bin", "python")
    if e.run([vpy, "-c", "import sys; sys.exit(sys.prefix == sys.base_prefix)"]).returncode:
        print("note: %s cannot run from a venv here (a wrapper of an unpacked build): the "
              "module through PYTHONPATH" % python)
        return python, {"PYTHONPATH": module_dir()}
    purelib = e.run_ok([vpy, "-c", "import sysconfig; print(sysconfig.get_paths()"
                        "['purelib'])"]).stdout.strip()
    with open(os.path.join(purelib, "pcollect.pth"), "w") as f:
        f.write(module_dir() + "\n")
    return vpy, {"PYTHONPATH": ""}


def check_flags():
    """The module's list of pcollect options that take no value is pcollect -help's."""
    sys.path.insert(0, module_dir())
    spec = importlib.util.spec_from_file_location(
        "pcollect_main", os.path.join(module_dir(), "pcollect", "__main__.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    flags = set()
    for line in e.run_ok([e.tool("pcollect"), "-help"]).stdout.splitlines():
        m = re.match(r"  (-[a-z][-a-z, ]*?)( [A-Z][A-Z=|]*)?(  |$)", line)
        if m and not m.group(2):
            flags |= {w.strip().lstrip("-") for w in m.group(1).split(",")}
    flags -= {"help", "h", "version", "finalize"}  # pcollect's own actions, not a collection's
    e.check(flags == mod.FLAGS, "the options without a value the module knows %s are pcollect "
            "-help's %s" % (sorted(mod.FLAGS), sorted(flags)))


def main():
    check_flags()
    label = pylib.label_arg()
    python = pylib.interpreter(label)
    src = pylib.program("split.py")
    progs = os.path.dirname(src)
    with e.Workdir("py-start") as w:
        env = e.tool_env({"PYTHONPATH": module_dir()})

        # -o FILE beside -r DIR
        want_code, want_out = 0, "1\n"  # split.py prints one number
        cp = e.run([python, "-m", "pcollect", "-o", "out.pstats", "-r", "res", "-knob",
                    "sampling-interval=1", src, 12], cwd=w.path, env=env)
        print(cp.stderr[-3000:])
        e.check(cp.returncode == want_code and same_output(cp.stdout, want_out),
                "python -m pcollect -o: the program's stdout and exit status (%d) as without "
                "us (got %d)" % (want_code, cp.returncode))
        e.check("Function" in cp.stderr and "spin_a" in cp.stderr,
                "the hotspots table is printed on stderr at the end")
        got = json.loads(e.run_ok([python, "-c", PSTATS, w.join("out.pstats")]).stdout)
        res = e.Result(w.join("res"))
        stats = e.db_sampled(res)
        spin = sum(got.get(n, 0) for n in NAMES)
        e.check(spin > 0, "this interpreter's pstats reads out.pstats: spin_* tottime %s"
                % {n: got.get(n) for n in NAMES})
        for n, want in zip(NAMES, [0.6, 0.3, 0.1]):
            e.check_share(stats, got[n] / spin, want, "pstats tottime of " + n,
                          stretches=ROUNDS)
        hs = {r["Function"]: e.secs(r) for r in e.rows(res, "-view", "hotspots")}
        for n in NAMES:
            e.check(abs(hs[n] - got[n]) < 0.0015, "%s: pstats %.3f s, the result %.3f s"
                    % (n, got[n], hs[n]))

        # -m module through a venv, with a result there already
        venv = w.join("venv")
        vpy, venv_env = venv_python(python, venv)
        with open(w.join("startmod.py"), "w") as f:
            f.write("import sys\nsys.path.insert(0, %r)\n%s" % (progs, MODULE))
        os.mkdir(w.join("r004hs"))
        want_code, want_out = 3, "1\n"  # MODULE: split.py's number, then exit 3
        cp = e.run([vpy, "-m", "pcollect", "-m", "startmod", 5], cwd=w.path,
                   env=e.tool_env(venv_env))
        print(cp.stderr[-1500:])
        e.check(cp.returncode == want_code and same_output(cp.stdout, want_out),
                "%s -m pcollect -m module: stdout and exit status 3 as without us (got %d)"
                % (vpy, cp.returncode))
        e.check(os.path.exists(w.join("r005hs", "result.db")) and "spin_a" in cp.stderr,
                "the result is the next free r005hs, finalized, its hotspots printed")

        # pcollect with no -collect
        cp = e.run([e.tool("pcollect"), "-r", "res2", "--", python, src, 5], cwd=w.path)
        want_code, want_out = 0, "1\n"  # split.py prints one number
        e.check(cp.returncode == want_code and same_output(cp.stdout, want_out),
                "pcollect with no -collect: the program's stdout and exit status")
        e.check("collecting hotspots (no -collect given" in cp.stderr,
                "pcollect says on stderr that it runs hotspots: %s" % cp.stderr[:200])
        fns = {r["Function"] for r in e.rows(e.Result(w.join("res2")), "-view", "hotspots")}
        e.check("spin_a" in fns, "the result holds hotspots")


if __name__ == "__main__":
    sys.exit(main())
