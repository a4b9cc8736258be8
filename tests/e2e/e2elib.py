# SPDX-License-Identifier: MIT
"""Shared helpers for the end-to-end scripts: run the tools, read raw streams, name frames,
and judge a sampled answer against the known one (Sampled, below).

The collector's tests read the raw streams directly (through tests/progs/raw-dump) and name
program counters with `nm` of the module files, so they test the collector alone.
"""
import atexit
import bisect
import glob
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile

BUILD = os.environ.get("PCOLLECT_BUILD", "")
SOURCE = os.environ.get("PCOLLECT_SOURCE", "")

SKIP = 77

# ---- a sanitizer build (meson -Db_sanitize=...; tests/e2e/meson.build sets these) -----------
# Every sanitizer report of the tools, the agent or the programs goes to a file in one
# directory (log_path), and a test that leaves one fails, whatever it checked: a report is
# a bug even when the run's answer was right. AddressSanitizer must be the first library a
# program loads: the programs pcollect starts get it preloaded (PRELOAD), ahead of the agent
# (collector/preload.h keeps it there across exec).
SANITIZE = os.environ.get("PCOLLECT_TEST_SANITIZE", "")
PRELOAD = os.environ.get("PCOLLECT_TEST_PRELOAD", "")
SANITIZER_LOGS = None


def _sanitizer_reports():
    """Fail the test (exit 1) if any sanitizer report was written, printing them."""
    reports = sorted(glob.glob(os.path.join(SANITIZER_LOGS, "*")))
    for path in reports:
        with open(path, errors="replace") as f:
            print("sanitizer report %s:\n%s" % (path, f.read()), flush=True)
    if reports:
        print("FAIL: %d sanitizer report(s) (%s)" % (len(reports), SANITIZE), flush=True)
        sys.stdout.flush()
        os._exit(1)
    shutil.rmtree(SANITIZER_LOGS, ignore_errors=True)


# GCC's UBSan runtime beside AddressSanitizer's writes its reports to stderr whatever log_path
# says, and both exit with status 1 after a report by default: a tool's ordinary failure. So a
# report ends a process with SANITIZER_EXIT, which no tool and no test program uses.
SANITIZER_EXIT = 86

if SANITIZE:
    SANITIZER_LOGS = tempfile.mkdtemp(prefix="pcollect-sanitizer.")
    os.environ["ASAN_OPTIONS"] = "detect_leaks=0:exitcode=%d:log_path=%s/asan" % (
        SANITIZER_EXIT, SANITIZER_LOGS)
    os.environ["UBSAN_OPTIONS"] = ("halt_on_error=1:print_stacktrace=1:exitcode=%d:"
                                   "log_path=%s/ubsan" % (SANITIZER_EXIT, SANITIZER_LOGS))
    atexit.register(_sanitizer_reports)


def tool_env(env=None):
    """The environment additions for running pcollect (env merged in): in a sanitizer build,
    the sanitizer runtime preloaded ahead of the agent."""
    out = dict(env or {})
    if PRELOAD:
        old = out.get("LD_PRELOAD", os.environ.get("LD_PRELOAD", ""))
        out["LD_PRELOAD"] = PRELOAD + (":" + old if old else "")
    return out

def tool_environ(env=None):
    """The whole environment for a subprocess that runs pcollect (os.environ, env and
    tool_env() merged)."""
    out = dict(os.environ)
    out.update(tool_env(env))
    return out

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


# ---- how far a sampled answer may lie from the known one --------------------------------------

TICK_NS = 4000000  # the kernel tick here (../shared/NOTES.md): CPU-time timers are checked at it
Z = 4.5  # standard deviations: two-sided 7e-6 a check


class Sampled:
    """The statistics of a set of samples, stated once for every test.

    CPU-time sampling is a systematic cut through a thread's CPU time: the thread is sampled
    when its CPU clock passes a multiple of the interval, at the next kernel tick (TICK_NS)
    that finds it running, and a sample's weight is the number of intervals since the last
    one. Whatever the machine's load, the samples then stand for CPU time the program really
    used; what remains uncertain is where each lump of CPU time (weight x interval) is
    credited, and the ends of the run:

    - Attribution, for a part of the profile (a function, a line, a worker): the lump is
      credited to the code running when the sample is taken.
      * Code mixed finer than a lump: each sample is a draw, and the part's share p is known
        to sqrt(p (1 - p) / n) (binomial), n the effective number of samples: Kish's
        (sum w)^2 / sum w^2, so a lump of four intervals counts as one draw, not four.
      * A part made of k stretches of CPU time, each longer than a lump (a function called
        k times, each time for tens of ms): only the lump over each end of a stretch is
        shared with the neighbour, so the error is a sum of k terms each within one lump,
        uniform: standard deviation L sqrt(k / 6), never more than k L. L is the lump a
        random instant of CPU time falls in: sum w^2 / sum w intervals (size-biased), plus a
        tick for the check that comes late.
      A share measured at 0 or 1 (every sample in the part, or none) is not known to be
      exactly that: the binomial bound takes it half a sample away from the edge, or a part
      holding all its thread's samples would get no room at all for the CPU time its ends
      share with the code before and after it.
      Both bounds hold on their own; the tolerance takes the smaller, at Z standard
      deviations. Z = 4.5 is 7e-6 two-sided a check: the suite judges a few hundred answers
      a run, so even where the binomial bound is reached (it is conservative for systematic
      samples) a correct collector fails a run less than once in 500.
    - Quantization, for a total: a thread's samples miss the part of its last interval that
      no sample closed, and each end may be checked a tick late: QUANTUM = one interval and
      two ticks, per thread.

    So: no raw count of samples, no wall time; a tolerance from n, the lumps and the
    interval, and nothing else.
    """

    def __init__(self, weights, interval_ns, threads=1):
        weights = [w for w in weights if w > 0]
        self.interval_ns = interval_ns
        self.threads = threads
        self.weight = sum(weights)
        self.total_ns = self.weight * interval_ns
        sq = sum(w * w for w in weights)
        self.n = self.weight * self.weight / sq if sq else 0.0
        self.lump_ns = (sq / self.weight * interval_ns if self.weight else 0.0) + TICK_NS
        self.quantum_ns = threads * (interval_ns + 2 * TICK_NS)

    def __str__(self):
        return "%.0f effective samples, lumps of %.1f ms, %.3f s sampled" % (
            self.n, self.lump_ns / 1e6, self.total_ns / 1e9)

    def part_tolerance_ns(self, share, stretches=None):
        """Half-width, ns, of the sampled CPU time of a part holding share (0..1) of these
        samples around the part's true CPU time (stretches: see the class)."""
        if self.n <= 0:
            return self.quantum_ns
        edge = min(0.5 / self.n, 0.5)
        share = min(max(share, edge), 1.0 - edge)
        tol = Z * math.sqrt(share * (1.0 - share) / self.n) * self.total_ns
        if stretches:
            tol = min(tol, min(stretches, Z * math.sqrt(stretches / 6.0)) * self.lump_ns)
        return tol + self.quantum_ns

    def share_tolerance(self, share, stretches=None):
        """Half-width of a part's sampled share (0..1) around its true share."""
        if self.total_ns <= 0:
            return 1.0
        return self.part_tolerance_ns(share, stretches) / self.total_ns

    def time_tolerance_ns(self, part_ns, stretches=None):
        """Half-width, ns, of a part's sampled time part_ns around its true CPU time (the
        whole: the samples' total against the CPU time the threads used)."""
        share = part_ns / self.total_ns if self.total_ns else 1.0
        return self.part_tolerance_ns(share, stretches)


def sampled_of(samples, interval_ns, threads=1):
    """Sampled of named_samples() rows (or of Stream samples' records)."""
    return Sampled([x[1] if isinstance(x, tuple) else x["weight"] for x in samples],
                   interval_ns, threads)


def check_share(stats, got, want, what, stretches=None):
    """Check a part's share got (0..1) against the known want, with stats' tolerance."""
    tol = stats.share_tolerance(want, stretches)
    check(abs(got - want) <= tol, "%s has %.1f%% (want %.1f%% +- %.1f; %s)"
          % (what, 100 * got, 100 * want, 100 * tol, stats))


def check_time(stats, got_ns, want_ns, what, stretches=None, extra_ns=0):
    """Check a part's sampled CPU time got_ns against the known (or measured) want_ns, with
    stats' tolerance; extra_ns for what the reference's own measurement adds."""
    tol = stats.time_tolerance_ns(got_ns, stretches) + extra_ns
    check(abs(got_ns - want_ns) <= tol, "%s: %.3f s sampled, %.3f s known (+- %.3f s; %s)"
          % (what, got_ns / 1e9, want_ns / 1e9, tol / 1e9, stats))


def check_split(stats_a, a_ns, stats_b, b_ns, want, what, stretches=None):
    """Check the share a / (a + b) of two parts sampled apart (two threads or processes, each
    with its own Sampled) against want (0..1): it errs only by what each time may err."""
    tol = (b_ns * stats_a.time_tolerance_ns(a_ns, stretches) +
           a_ns * stats_b.time_tolerance_ns(b_ns, stretches)) / (a_ns + b_ns) ** 2
    got = a_ns / (a_ns + b_ns)
    check(abs(got - want) <= tol, "%s: %.1f/%.1f, want %.1f/%.1f (+- %.1f)" % (
        what, 100 * got, 100 - 100 * got, 100 * want, 100 - 100 * want, 100 * tol))


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
    """Run argv, capturing its output as text. pcollect gets tool_env(): in a sanitizer
    build the programs it starts must load the sanitizer's runtime first."""
    e = dict(os.environ)
    if os.path.basename(argv[0]) == "pcollect":
        env = tool_env(env)
    if env:
        e.update(env)
    return subprocess.run(argv, cwd=cwd, env=e, timeout=timeout, stdin=stdin,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          errors="replace")


def pcollect(target, result=None, options=(), cwd=None, env=None, timeout=120,
             finalization="none", quiet=True, analysis="hotspots"):
    """Run pcollect -collect ANALYSIS (hotspots) on target (a list). Returns a Run (result:
    the directory path, or None when -r was not given)."""
    argv = [tool("pcollect"), "-collect", analysis]
    if result:
        argv += ["-r", result]
    if finalization:
        argv.append("-finalization-mode=" + finalization)
    if quiet:
        argv.append("-quiet")
    argv += list(options) + ["--"] + list(target)
    cp = run(argv, cwd=cwd, env=tool_env(env), timeout=timeout)
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


# Schema 2 (docs/schema.md): CPU Time rows only; a weight is value / interval_ns.
CPU_METRIC = "(SELECT id FROM metrics WHERE name = 'CPU Time')"
INTERVAL_NS = "(SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'interval_ns')"

LEAF_SQL = """
SELECT f.name, fr.inline_depth, fr.line, pf.name, pfr.line, SUM(s.count),
       SUM(s.value) / %s
FROM samples s JOIN stacks st ON st.id = s.stack_id
JOIN frames fr ON fr.id = st.frame_id JOIN functions f ON f.id = fr.function_id
LEFT JOIN stacks ps ON ps.id = st.parent_id LEFT JOIN frames pfr ON pfr.id = ps.frame_id
LEFT JOIN functions pf ON pf.id = pfr.function_id
WHERE s.metric_id = %s
GROUP BY f.name, fr.inline_depth, fr.line, pf.name, pfr.line
""" % (INTERVAL_NS, CPU_METRIC)


def db_leaf_weights(result):
    """CPU Time sample weight (intervals) of a finalized result by the name of the sampled
    (innermost) function (leaf_weights() does the same for raw samples)."""
    return dict(db_rows(result, "SELECT f.name, SUM(s.value) / %s FROM samples s"
                        " JOIN stacks st ON st.id = s.stack_id JOIN frames fr ON fr.id = "
                        "st.frame_id JOIN functions f ON f.id = fr.function_id"
                        " WHERE s.metric_id = %s GROUP BY f.name" % (INTERVAL_NS, CPU_METRIC)))


def leaf_samples(result):
    """Per distinct leaf: (function, inline_depth, line, parent function, parent line, count,
    weight)."""
    return db_rows(result, LEAF_SQL)


def db_sampled(result, where="1", args=()):
    """Sampled of the samples of a finalized result (its timeline), of the threads that a
    WHERE clause over threads t and processes p chooses (all by default)."""
    interval = db_rows(result, "SELECT value FROM meta WHERE key = 'collect.interval_ns'")
    join = ("FROM timeline tl JOIN threads t ON t.id = tl.thread_id "
            "JOIN processes p ON p.id = t.process_id WHERE tl.metric_id = " + CPU_METRIC +
            " AND (" + where + ")")
    weights = [w for (w,) in db_rows(result, "SELECT tl.value / %s " % INTERVAL_NS + join,
                                     args)]
    threads = db_rows(result, "SELECT COUNT(DISTINCT t.id) " + join, args)[0][0]
    return Sampled(weights, int(interval[0][0]), max(threads, 1))


# ---- raw streams' CPU time -------------------------------------------------------------------

def cpu_close(got_ns, want_ns, interval_ns, rel=0.10, intervals=3):
    """A sampled CPU time agrees with a measured one within a stated relative tolerance (the
    MPI tests' 10%), plus a few sampling intervals (at least a kernel tick each) for the
    first and last samples' rounding. Sampled's tolerances are the finer judge where the
    samples themselves are at hand."""
    slack = rel * want_ns + intervals * max(interval_ns, TICK_NS)
    return abs(got_ns - want_ns) <= slack


def sampled_ns(streams):
    """CPU time the samples of these streams stand for: weight x their header's interval."""
    return sum(s.weight() * s.header["interval_ns"] for s in streams)
