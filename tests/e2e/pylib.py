# SPDX-License-Identifier: MIT
"""Helpers of the Python end-to-end tests (tests/e2e/python-*.py).

Each test takes one argument, the interpreter's label: 3.10, 3.11, 3.12, 3.13 (a build that is
not the distribution's, a shared one first, such as pyenv's) or debian-3.11 (the
distribution's, the interpreter linked into the executable); 3.9 is there for the degradation
test. The interpreters are discovered (tests/pythons.py: PATH, pyenv, PCOLLECT_TEST_PYTHONS);
a label with none makes the test skip (exit 77) and say why.

The programs run under the whole pipeline: pcollect -> pfinalize -> preport (CSV), and the
checks read preport's CSV and result.db.
"""
import csv
import io
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import e2elib as e  # noqa: E402
import pythons  # noqa: E402

PROGS = os.path.join(e.SOURCE, "tests", "progs", "python")


def interpreter(label):
    """The interpreter to run for a label, or skip the test saying what is missing."""
    if not pythons.parse_label(label):
        e.fail("unknown interpreter label '%s'" % label)
    p = pythons.for_label(label)
    if isinstance(p, str):
        e.skip("interpreter %s: %s" % (label, p))
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


def collect(w, name, python, script, args=(), interval="1", options=(), timeout=120,
            analysis="hotspots"):
    """Profile `python script args` with pcollect -collect ANALYSIS, finalize with pfinalize.
    Returns the result directory and the program's stdout."""
    res = w.join(name)
    opts = ["-knob", "sampling-interval=" + interval] + list(options)
    r = e.pcollect([python, program(script)] + [str(a) for a in args], result=res,
                   options=opts, timeout=timeout, analysis=analysis)
    if r.returncode != 0:
        e.fail("pcollect %s %s: exit %d\n%s%s" % (python, script, r.returncode, r.stdout,
                                                  r.stderr))
    f = e.pfinalize(res, ["-quiet"], timeout=timeout)
    if f.returncode != 0:
        e.fail("pfinalize %s: exit %d\n%s" % (res, f.returncode, f.stderr))
    return res, r.stdout


def preport(res, *args, ok=True):
    cp = e.run([e.tool("preport"), "-r", res] + list(args), timeout=60)
    if ok and cp.returncode != 0:
        e.fail("preport %s: exit %d\n%s%s" % (" ".join(args), cp.returncode, cp.stdout,
                                               cp.stderr))
    return cp


def rows(res, *args):
    """preport -format csv rows as dicts."""
    return list(csv.DictReader(io.StringIO(preport(res, "-format", "csv", *args).stdout)))


def secs(row, col="CPU Time:Self"):
    return float(row[col]) if row.get(col) else 0.0


class Db:
    """result.db loaded for stack walks: per sample the frames, outermost first."""

    def __init__(self, res):
        q = lambda sql: e.db_rows(res, sql)  # noqa: E731
        self.res = res
        self.files = dict(q("SELECT id, path FROM source_files"))
        self.modules = {i: (name, role) for i, name, role in
                        q("SELECT id, name, role FROM modules")}
        self.functions = {}
        for i, name, mod, lang, file_id, line in q(
                "SELECT id, name, module_id, language, source_file_id, line FROM functions"):
            self.functions[i] = {"name": name, "module": mod, "language": lang,
                                 "file": self.files.get(file_id), "line": line,
                                 "interp": mod is not None and self.modules[mod][1] ==
                                 "interpreter"}
        self.frames = {}
        for i, fn, mod, addr, depth, file_id, line in q(
                "SELECT id, function_id, module_id, address, inline_depth, source_file_id, "
                "line FROM frames"):
            f = dict(self.functions[fn])
            f.update(function_id=fn, address=addr, inline_depth=depth,
                     frame_file=self.files.get(file_id), frame_line=line)
            self.frames[i] = f
        self.stacks = {i: (p, fr) for i, p, fr in q("SELECT id, parent_id, frame_id FROM stacks")}
        self.threads = {i: (tid, pid) for i, tid, pid in q(
            "SELECT t.id, t.tid, p.pid FROM threads t JOIN processes p ON p.id = t.process_id")}
        # CPU samples (docs/schema.md): value = weight x interval, in ns
        self.samples = q("SELECT s.thread_id, s.stack_id, s.count, s.value / (SELECT value "
                         "FROM meta WHERE key = 'interval_ns'), s.value FROM samples s "
                         "JOIN metrics m ON m.id = s.metric_id AND m.name = 'CPU Time'")
        self._cache = {}

    def stack(self, sid):
        """Frames of a stack, outermost first."""
        if sid in self._cache:
            return self._cache[sid]
        out = []
        s = sid
        while s is not None:
            p, fr = self.stacks[s]
            out.append(self.frames[fr])
            s = p
        out.reverse()
        self._cache[sid] = out
        return out

    def python_frames(self, sid):
        return [f for f in self.stack(sid) if f["language"] == "python"]

    def timeline(self):
        """(time_ns since the start, tid, pid, stack id, weight) of every sample."""
        return [(t, self.threads[th][0], self.threads[th][1], st, w) for t, th, st, w in
                e.db_rows(self.res, "SELECT t.time_ns, t.thread_id, t.stack_id, t.value / "
                          "(SELECT value FROM meta WHERE key = 'interval_ns') FROM timeline t "
                          "JOIN metrics m ON m.id = t.metric_id AND m.name = 'CPU Time'")]

    def meta(self, key):
        r = e.db_rows(self.res, "SELECT value FROM meta WHERE key = ?", (key,))
        return r[0][0] if r else None

    def notes(self):
        """{kind: count} of the python_notes table."""
        out = {}
        for kind, count in e.db_rows(self.res,
                                     "SELECT kind, SUM(count) FROM python_notes GROUP BY kind"):
            out[kind] = count
        return out


def shares(values):
    total = sum(values)
    return [100.0 * v / total if total else 0.0 for v in values]
