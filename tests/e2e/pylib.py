# SPDX-License-Identifier: MIT
"""The interpreter of a Python end-to-end test (tests/e2e/python-*.py and the others that take
a label).

Each test takes one argument, the interpreter's label: 3.10 ... 3.15 (a build that is not the
distribution's, a shared one first, such as pyenv's, or Debian unstable's 3.14 and 3.15 that
scripts/sid-pythons prepares) or debian-3.11 (the distribution's, the interpreter linked into
the executable); 3.9 is there for the degradation test. The interpreters are discovered
(tests/pythons.py: PATH, pyenv, PCOLLECT_TEST_PYTHONS); a label with none makes the test skip
(exit 77) and say why. Running, finalizing and reading the result: e2elib.
"""
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import e2elib as e  # noqa: E402
import pythons  # noqa: E402

PROGS = os.path.join(e.SOURCE, "tests", "progs", "python")


def provider(label):
    """What ./scripts/dev provides the interpreter of a label with (skip(needs=...)): the
    distribution's python3 package, Debian unstable's builds (scripts/sid-pythons); pyenv's
    builds are the machine's own."""
    minor, distro = pythons.parse_label(label)
    if distro:
        return "python3"
    return "sid-pythons" if minor >= 14 else ()


def interpreter(label):
    """The interpreter to run for a label, or skip the test saying what is missing."""
    if not pythons.parse_label(label):
        e.fail("unknown interpreter label '%s'" % label)
    p = pythons.for_label(label)
    if isinstance(p, str):
        e.skip("interpreter %s: %s" % (label, p), needs=provider(label))
    print("interpreter %s: %s" % (label, p.describe()), flush=True)
    return p.exe


def label_arg():
    if len(sys.argv) != 2:
        e.fail("usage: %s INTERPRETER-LABEL" % sys.argv[0])
    return sys.argv[1]


def program(name):
    path = os.path.join(PROGS, name)
    if not os.path.exists(path):
        e.fail("test program %s missing" % path)
    return path


def collect_stitched(w, name, unit_ms, stdout):
    """Run tests/progs/python/NAME (UNIT_MS FIGURES: it writes its threads' measured CPU
    seconds as JSON to FIGURES) at 1 ms with native frames, and finalize; it must exit 0 and
    print stdout: its known output, or None for what it prints alone with UNIT_MS 0 (its
    output is the same for every UNIT_MS, but not known from its source: a traceback through
    the standard library's functions; a run with no work costs little besides the start).
    Returns the figures, the result's sampled statistics and its -stitch top-down paths
    {path: ns}."""
    python = interpreter(label_arg())
    figures = w.join("cpu.json")
    if stdout is None:
        stdout = e.run_ok([python, program(name), 0, w.join("alone.json")]).stdout
    res = e.collect(w, "res", [python, program(name), unit_ms, figures], interval=1,
                    stdout=stdout, finalize=True)
    with open(figures) as f:
        cpu = json.load(f)
    return res, cpu, e.db_sampled(res), e.topdown_paths(res, "-stitch")


GO = object()  # attach_go()'s argv: where the file's path goes


def attach_go(w, argv, res, duration, settle, options=(), env=None):
    """Start argv (a program that prints "pid=N" once running and goes on until the file
    w/go, given in argv's place GO, appears), attach pcollect -collect hotspots -target-pid to it after settle seconds
    for duration seconds into res, then make the file: skips where ptrace is refused; fails
    unless pcollect exits 0. Returns (its stdout and stderr after "pid=", its exit code,
    its pid, e2elib.attach()'s window)."""
    go = w.join("go")
    p = subprocess.Popen([go if a is GO else a for a in argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, env=e.tool_environ(env))
    line = p.stdout.readline()
    if not line.startswith("pid="):
        e.fail("%s did not start: %r %s" % (os.path.basename(argv[1]), line, p.stderr.read()))
    time.sleep(settle)
    r, window = e.attach([e.tool("pcollect"), "-collect", "hotspots", "-target-pid", p.pid,
                          "-duration", duration, "-r", res, "-quiet",
                          "-finalization-mode=none"] + list(options), p.pid)
    open(go, "w").close()
    if r.returncode == 1 and "Operation not permitted" in r.stderr:
        p.kill()
        p.communicate()
        e.skip("ptrace to a process of our own is refused here: " + r.stderr.strip())
    e.check(r.returncode == 0, "pcollect -target-pid exits 0 (%d: %s)"
            % (r.returncode, r.stderr.strip()))
    out, err = p.communicate(timeout=240)
    return out, err, p.returncode, p.pid, window
