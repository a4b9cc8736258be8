# SPDX-License-Identifier: MIT
"""Shared helpers for the end-to-end scripts: run the tools, read raw streams, name frames.

The collector's tests read the raw streams directly (through tests/progs/raw-dump) and name
program counters with `nm` of the module files, so they test the collector alone.
"""
import bisect
import json
import os
import shutil
import subprocess
import sys
import tempfile

BUILD = os.environ.get("PCOLLECT_BUILD", "")
SOURCE = os.environ.get("PCOLLECT_SOURCE", "")

SKIP = 77

# enum raw_process_origin, enum raw_module_kind, enum raw_lost_reason, raw_stack_flags
ORIGIN_START, ORIGIN_FORK, ORIGIN_EXEC = 0, 1, 2
MODULE_FILE, MODULE_ANON, MODULE_VDSO = 0, 1, 2
LOST_BUFFER, LOST_UNWIND, LOST_DATA_LIMIT, LOST_STACK_TABLE, LOST_BUSY = 1, 2, 3, 4, 5
STACK_TRUNCATED, STACK_UNWIND_ERROR, STACK_FIRST_IS_PC = 1, 2, 4


def fail(msg):
    print("FAIL: " + msg, flush=True)
    sys.exit(1)


def skip(reason):
    print("SKIP: " + reason, flush=True)
    sys.exit(SKIP)


def check(cond, msg):
    if not cond:
        fail(msg)
    print("ok: " + msg, flush=True)


def tool(name):
    """Path of a tool in the build tree: pcollect, pfinalize, preport."""
    sub = {"pcollect": "collector", "pfinalize": "finalizer", "preport": "report"}[name]
    path = os.path.join(BUILD, sub, name)
    if not os.access(path, os.X_OK):
        skip("%s not built at %s" % (name, path))
    return path


def prog(name):
    """Path of a known-behaviour program in the build tree."""
    path = os.path.join(BUILD, "tests", "progs", name)
    if not os.access(path, os.X_OK):
        fail("test program %s not built at %s" % (name, path))
    return path


class Workdir:
    """A temporary directory, removed when the test passes (kept for a look when it fails)."""

    def __init__(self, tag="e2e"):
        self.path = tempfile.mkdtemp(prefix="pcollect-%s." % tag)

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            shutil.rmtree(self.path, ignore_errors=True)
        else:
            print("work directory kept: " + self.path)
        return False

    def join(self, *parts):
        return os.path.join(self.path, *parts)


class Run:
    def __init__(self, cp, result):
        self.returncode = cp.returncode
        self.stdout = cp.stdout
        self.stderr = cp.stderr
        self.result = result


def run(argv, cwd=None, env=None, timeout=120, stdin=None):
    e = dict(os.environ)
    if env:
        e.update(env)
    return subprocess.run(argv, cwd=cwd, env=e, timeout=timeout, stdin=stdin,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          errors="replace")


def pcollect(target, result=None, options=(), cwd=None, env=None, timeout=120,
             finalization="none", quiet=True):
    """Run pcollect -collect hotspots on target (a list). Returns a Run (result: the
    directory path, or None when -r was not given)."""
    argv = [tool("pcollect"), "-collect", "hotspots"]
    if result:
        argv += ["-r", result]
    if finalization:
        argv.append("-finalization-mode=" + finalization)
    if quiet:
        argv.append("-quiet")
    argv += list(options) + ["--"] + list(target)
    cp = run(argv, cwd=cwd, env=env, timeout=timeout)
    return Run(cp, result)


class Stream:
    """One raw stream: its header, its records in order, and the reader's stats. kind is
    "thread" (samples of one thread) or "process" (process and module records of an image)."""

    def __init__(self, path, lines):
        self.path = path
        self.header = lines[0]
        self.kind = self.header.get("kind", "thread")
        self.records = lines[1:-1]
        self.stats = lines[-1]
        self.pid = self.header["pid"]
        self.tid = self.header["tid"]
        self.generation = self.header["generation"]
        self.image = (self.pid, self.generation)
        self.stacks = {r["id"]: r for r in self.records if r["type"] == "stack"}

    def of_type(self, t):
        return [r for r in self.records if r["type"] == t]

    def samples(self):
        return self.of_type("sample")

    def weight(self):
        return sum(r["weight"] for r in self.samples())

    def cpu_ns(self):
        return sum(r["cpu_ns"] for r in self.of_type("thread_end"))


def thread_streams(streams):
    """The streams that hold one thread's samples (not the process streams)."""
    return [s for s in streams if s.kind == "thread"]


def load_streams(result):
    """Every raw stream of a result directory, dumped with tests/progs/raw-dump: the threads'
    and the process streams (module records); thread_streams() keeps the former."""
    raw = os.path.join(result, "raw")
    if not os.path.isdir(raw):
        fail("no raw/ directory in " + result)
    streams = []
    for name in sorted(os.listdir(raw)):
        if not name.endswith(".praw"):
            continue
        path = os.path.join(raw, name)
        cp = run([prog("raw-dump"), path])
        if cp.returncode != 0:
            fail("raw-dump failed on %s: %s" % (path, cp.stderr.strip()))
        lines = [json.loads(l) for l in cp.stdout.splitlines() if l.strip()]
        streams.append(Stream(path, lines))
    return streams


_nm_cache = {}


def nm_symbols(path):
    """Sorted (address, name) of the functions defined in an ELF file (symtab, else dynsym)."""
    if path in _nm_cache:
        return _nm_cache[path]
    syms = []
    for extra in ([], ["-D"]):
        cp = run(["nm", "-C", "--defined-only"] + extra + [path])
        if cp.returncode != 0:
            continue
        for line in cp.stdout.splitlines():
            parts = line.split(None, 2)
            if len(parts) == 3 and parts[1] in "tTwWiu":
                syms.append((int(parts[0], 16), parts[2]))
        if syms:
            break
    syms.sort()
    _nm_cache[path] = ([a for a, _ in syms], [n for _, n in syms])
    return _nm_cache[path]


class Symbolizer:
    """Names program counters of one result with the MODULE_LOAD records of each image."""

    def __init__(self, streams):
        self.modules = {}  # image -> list of (load time, unload time, module record)
        for s in streams:
            mods = self.modules.setdefault(s.image, [])
            for r in s.records:
                if r["type"] == "module_load":
                    mods.append([s.header["origin_ns"] + r["time"], None, r])
        for s in streams:
            for r in s.records:
                if r["type"] != "module_unload":
                    continue
                t = s.header["origin_ns"] + r["time"]
                for m in self.modules.get(s.image, []):
                    if m[2]["base"] == r["base"] and m[2]["path"] == r["path"] and \
                            m[0] <= t and (m[1] is None or m[1] > t):
                        m[1] = t
                        break

    def module_of(self, image, addr, when=None):
        best = None
        for load, unload, m in self.modules.get(image, []):
            if when is not None and (load > when or (unload is not None and unload < when)):
                continue
            for start, size, _off, _prot in m["segs"]:
                if start <= addr < start + size:
                    best = m
        return best

    def name(self, image, addr, when=None):
        m = self.module_of(image, addr, when)
        if m is None:
            return "[unknown]"
        if m["kind"] != MODULE_FILE:
            return "[%s]" % m["path"].strip("[]")
        addrs, names = nm_symbols(m["path"])
        i = bisect.bisect_right(addrs, addr - m["base"]) - 1
        if i < 0:
            return "[%s]" % os.path.basename(m["path"])
        return names[i]

    def stack_names(self, stream, stack, when=None):
        """Function names of a stack record, leaf first (callers looked up at ip - 1)."""
        out = []
        for i, ip in enumerate(stack["ips"]):
            exact = i == 0 and stack["flags"] & STACK_FIRST_IS_PC
            out.append(self.name(stream.image, ip if exact else ip - 1, when))
        return out


def named_samples(streams, sym=None):
    """(stream, weight, names leaf first, stack flags) for every sample of every stream."""
    sym = sym or Symbolizer(streams)
    out = []
    for s in streams:
        cache = {}
        for r in s.samples():
            sid = r["stack"]
            if sid not in s.stacks:
                fail("%s: sample names undefined stack %d" % (s.path, sid))
            if sid not in cache:
                cache[sid] = sym.stack_names(s, s.stacks[sid])
            out.append((s, r["weight"], cache[sid], s.stacks[sid]["flags"]))
    return out


def leaf_weights(samples, names):
    """Weight of samples whose leaf function is each of names, and the total weight."""
    w = {n: 0 for n in names}
    total = 0
    for _s, weight, stack, _f in samples:
        total += weight
        if stack and stack[0] in w:
            w[stack[0]] += weight
    return w, total


def read_meta(result):
    """The launcher's metadata file(s) of a result, merged: dict of key -> value."""
    meta = {}
    d = os.path.join(result, "meta")
    for name in sorted(os.listdir(d)):
        if name.endswith(".meta"):
            with open(os.path.join(d, name)) as f:
                for line in f:
                    line = line.rstrip("\n")
                    if line and not line.startswith("#") and "=" in line:
                        k, v = line.split("=", 1)
                        meta[k] = v
    return meta


# ---- finalizer helpers (added by the finalizer engineer) ------------------------------------

def pfinalize(result, options=(), env=None, timeout=120):
    """Run pfinalize -r result [options]. Returns the CompletedProcess."""
    return run([tool("pfinalize"), "-r", result] + list(options), env=env, timeout=timeout)


def db_rows(result, sql, args=()):
    """Rows of a query on result/result.db."""
    import sqlite3
    con = sqlite3.connect("file:%s?mode=ro" % os.path.join(result, "result.db"), uri=True)
    try:
        return con.execute(sql, args).fetchall()
    finally:
        con.close()


def source_line(path, marker):
    """The 1-based line of path that contains marker (a comment such as 'LOOP-A')."""
    with open(path) as f:
        for i, line in enumerate(f, 1):
            if marker in line:
                return i
    fail("marker %s not found in %s" % (marker, path))


LEAF_SQL = """
SELECT f.name, fr.inline_depth, fr.line, pf.name, pfr.line, SUM(s.count)
FROM samples s JOIN stacks st ON st.id = s.stack_id
JOIN frames fr ON fr.id = st.frame_id JOIN functions f ON f.id = fr.function_id
LEFT JOIN stacks ps ON ps.id = st.parent_id LEFT JOIN frames pfr ON pfr.id = ps.frame_id
LEFT JOIN functions pf ON pf.id = pfr.function_id
GROUP BY f.name, fr.inline_depth, fr.line, pf.name, pfr.line
"""


def leaf_samples(result):
    """Per distinct leaf: (function, inline_depth, line, parent function, parent line, count)."""
    return db_rows(result, LEAF_SQL)


# ---- known answers in CPU time (added for the collector's safety tests) ----------------------

def cpu_close(got_ns, want_ns, interval_ns, rel=0.10, intervals=3):
    """A sampled CPU time agrees with a measured one: within rel of it, plus a few sampling
    intervals (at least a 4 ms kernel tick each) for the first and last samples' rounding."""
    slack = rel * want_ns + intervals * max(interval_ns, 4000000)
    return abs(got_ns - want_ns) <= slack


def sampled_ns(streams):
    """CPU time the samples of these streams stand for: weight x their header's interval."""
    return sum(s.weight() * s.header["interval_ns"] for s in streams)
