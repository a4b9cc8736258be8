# SPDX-License-Identifier: MIT
"""The one helper module of the end-to-end scripts: run the tools (collect, finalize, report)
one way, read their answers (preport's rows, result.db, the raw streams), and judge a sampled
answer against the known one (Sampled, below).

A case runs as uftrace's TestBase runs one: collect() starts the program under pcollect and
fails the test unless pcollect exits as expected, finalizes when asked, and returns the
result directory (a Result: a path that also reads its own rows, database and streams).

The collector's tests read the raw streams directly (through tests/progs/raw-dump) and name
program counters with `nm` of the module files, so they test the collector alone.
"""
import atexit
import bisect
import csv
import glob
import io
import json
import math
import os
import resource
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time

# tests/e2e/meson.build has the scripts' modules compiled once into the build directory;
# the programs and tools a test starts write no bytecode anywhere, as they always did.
if os.environ.pop("PYTHONPYCACHEPREFIX", None) is not None:
    os.environ["PYTHONDONTWRITEBYTECODE"] = "1"

BUILD = os.environ.get("PCOLLECT_BUILD", "")
SOURCE = os.environ.get("PCOLLECT_SOURCE", "")
# PCOLLECT_TEST_CALLS=FILE: each run() appends the test, the CPU and wall seconds it took (the
# process and its children waited for) and its command to FILE (docs/testing.md)
CALLS = os.environ.get("PCOLLECT_TEST_CALLS", "")

SKIP = 77

# What ./scripts/dev test provides (packages it installs, the interpreters it prepares, the
# build itself): a test skipped for want of one of these fails instead (skip(needs=...)).
STRICT = set(os.environ.get("PCOLLECT_TEST_STRICT", "").split())

# ---- a sanitizer build (meson -Db_sanitize=...; tests/e2e/meson.build sets these) -----------
# Every sanitizer report of the tools, the agent or the programs goes to a file in one
# directory (log_path), and a test that leaves one fails, whatever it checked: a report is
# a bug even when the run's answer was right. AddressSanitizer must be the first library a
# program loads: the programs pcollect starts get it preloaded (PRELOAD), ahead of the agent
# (common/preload.h keeps it there across exec).
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


# The symbol cache (pfinalize's, finalizer/sym-cache.c), never the user's ~/.cache/pcollect.
# The tests of one build share one, BUILD/test-cache/<pfinalize's mtime and size> (a new
# pfinalize, a new cache; the old ones removed), as a user's runs share theirs: libpython's
# DWARF and a module's method tables are then read once a run, not once a test (0.45 s of CPU
# a Python result, docs/testing.md). The finalize-* tests, which test that reading, each
# have a directory of their own, removed at their end, and so does a run without BUILD. A test
# that sets PCOLLECT_CACHE_DIR itself keeps its own.
def _cache_dir():
    name = os.path.basename(sys.argv[0])
    try:
        st = os.stat(os.path.join(BUILD, "finalizer", "pfinalize"))
    except OSError:
        st = None
    if st is None or name.startswith("finalize-"):
        d = tempfile.mkdtemp(prefix="pcollect-cache.")
        atexit.register(shutil.rmtree, d, ignore_errors=True)
        return d
    top = os.path.join(BUILD, "test-cache")
    key = "%d-%d" % (st.st_mtime_ns, st.st_size)
    d = os.path.join(top, key)
    if not os.path.isdir(d):
        for old in glob.glob(os.path.join(top, "*")):
            if os.path.basename(old) != key:
                shutil.rmtree(old, ignore_errors=True)
        os.makedirs(d, exist_ok=True)
    return d


if "PCOLLECT_CACHE_DIR" not in os.environ:
    os.environ["PCOLLECT_CACHE_DIR"] = _cache_dir()


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
STACK_TRUNCATED, STACK_UNWIND_ERROR, STACK_FIRST_IS_PC, STACK_AGENT = 1, 2, 4, 8


# ---- verdicts ----------------------------------------------------------------------------------

def fail(msg):
    print("FAIL: " + msg, flush=True)
    sys.exit(1)


def skip(reason, needs=()):
    """Exit 77 (meson's "skipped") saying why. needs names what would let the test run, as
    ./scripts/dev knows it (a Debian package, "sid-pythons", "speedscope", "build"): where
    that is in PCOLLECT_TEST_STRICT (./scripts/dev test sets it to what it provided), the
    skip is a failure: the suite was meant to run this test here."""
    needs = [needs] if isinstance(needs, str) else list(needs)
    provided = [n for n in needs if n in STRICT]
    if provided:
        fail("%s; but ./scripts/dev test provides %s (PCOLLECT_TEST_STRICT): this test must "
             "run here" % (reason, " ".join(provided)))
    print("SKIP: " + reason, flush=True)
    sys.exit(SKIP)


def check(cond, msg):
    if not cond:
        fail(msg)
    print("ok: " + msg, flush=True)


# ---- how far a sampled answer may lie from the known one --------------------------------------

TICK_NS = 4000000  # the kernel tick here (../shared/NOTES.md): CPU-time timers are checked at it
Z = 4.5  # standard deviations: two-sided 7e-6 a check
# A task-clock event runs on perf's clock of the thread, which stops at the scheduler's perf
# hooks a little before each context switch and starts a little after it; the thread's CPU
# clock (THREAD_END, getrusage) runs through the switch. Measured here beside busy loops:
# 8 to 14 us a switch (cpu-split, 300 to 700 switches); twice that is the allowance.
SWITCH_NS = 20000


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
        uniform: standard deviation L sqrt(k / 6) when every lump is L, never more than k
        times the largest lump. The lump over an end is the one a random instant of CPU
        time falls in (size-biased: a lump of w intervals is met w times as often), plus a
        tick for the check that comes late; L is its mean, sum w^2 / sum w intervals. The
        largest lump can be far larger than L: a virtual machine whose host takes its CPU
        away for tens of ms counts that time as the running thread's (no steal time
        accounted here), and the thread's first sample after it weighs it all (seen: one
        sample of 32 ms among 2 ms ones, 28 ms of it before the function it was taken in;
        one of 102 ms among 1 ms ones, taken just past the end of the OpenMP region that
        ran when the host stopped it: the region short by 0.101 s, its own clock 0.04 s
        over). So each end's error has the variance of a uniform draw within a
        size-biased lump, E[l^2] / 3 - (E[l] / 2)^2, E[l^2] = sum w^3 / sum w: a stretch
        (two ends) sqrt(2 E[l^2] / 3 - L^2 / 2), which is L sqrt(1 / 6) when every lump is L
        and grows with the largest ones, as the part's possible error does.
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

    A known answer is a budget of CPU time that includes the clock reads the program makes to
    keep it (tests/progs/burn.h reads getrusage every 0.1 ms; 1% of the time on a quiet
    machine here, 4% seen on a busy one): a function's share is judged on the samples with
    the function anywhere on their stack (under()), never on its own leaf samples alone.

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
        cube = sum(w * w * w for w in weights)
        self.n = self.weight * self.weight / sq if sq else 0.0
        self.lump_ns = (sq / self.weight * interval_ns if self.weight else 0.0) + TICK_NS
        # E[l^2] of the size-biased lump l = w x interval + a tick, in ns^2
        self.lump_sq_ns = ((cube * interval_ns + 2 * TICK_NS * sq) * interval_ns / self.weight
                           if self.weight else 0.0) + TICK_NS * TICK_NS
        self.max_lump_ns = max(weights, default=0) * interval_ns + TICK_NS
        self.quantum_ns = threads * (interval_ns + 2 * TICK_NS)

    def __str__(self):
        return "%.0f effective samples, lumps of %.1f ms (the largest %.1f), %.3f s sampled" % (
            self.n, self.lump_ns / 1e6, self.max_lump_ns / 1e6, self.total_ns / 1e9)

    def part_tolerance_ns(self, share, stretches=None):
        """Half-width, ns, of the sampled CPU time of a part holding share (0..1) of these
        samples around the part's true CPU time (stretches: see the class)."""
        if self.n <= 0:
            return self.quantum_ns
        edge = min(0.5 / self.n, 0.5)
        share = min(max(share, edge), 1.0 - edge)
        tol = Z * math.sqrt(share * (1.0 - share) / self.n) * self.total_ns
        if stretches:
            # a stretch's variance: its two ends, each a uniform draw within its lump
            stretch_var = max(2.0 * self.lump_sq_ns / 3.0 - self.lump_ns ** 2 / 2.0, 0.0)
            tol = min(tol, stretches * self.max_lump_ns, Z * math.sqrt(stretches * stretch_var))
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


def cpu_close(got_ns, want_ns, interval_ns, rel=0.10, intervals=3):
    """A sampled CPU time agrees with a measured one within a stated relative tolerance (the
    MPI tests' 10%), plus a few sampling intervals (at least a kernel tick each) for the
    first and last samples' rounding. Sampled's tolerances are the finer judge where the
    samples themselves are at hand."""
    slack = rel * want_ns + intervals * max(interval_ns, TICK_NS)
    return abs(got_ns - want_ns) <= slack


def check_short_waits(got_ns, known, what):
    """The recorded total got_ns of tests/progs/waits' 300 short sleeps against the program's
    figures (known): it timed each call, and so holds what the agent does around the sleep
    as well (a sleep of 10 us lasts about 100 us on a VM, many reach the 100 us threshold,
    and each of those is recorded alone, with an unwind of its stack: tens of microseconds),
    on a CPU or waiting for one: at most the loop's time on a CPU or runnable (the program
    reads its schedstat) below the program's total. Else within 5% + 3 ms, the tolerance of
    every wait the program measures."""
    want, around = known["short_ns"], known["short_cpu_ns"] + known["short_runnable_ns"]
    tol = 0.05 * want + 3000000
    check(want - around - tol <= got_ns <= want + tol,
          "%s: the short sleeps total %.3f ms, the program measured %.3f ms, %.3f ms of its "
          "loop on a CPU or runnable (the agent's work around the calls: at most that less)"
          % (what, got_ns / 1e6, want / 1e6, around / 1e6))


def shares(values):
    """Each value's share of their sum, in percent."""
    total = sum(values)
    return [100.0 * v / total if total else 0.0 for v in values]


CLK_TCK_NS = 1e9 / os.sysconf("SC_CLK_TCK")


def stat_cpu_ns(pid, tid=None):
    """utime + stime of process pid (/proc/PID/stat fields 14 and 15), or of its thread tid
    (/proc/PID/task/TID/stat), ns: each counted in clock ticks, so a reading is less than two
    ticks (CLK_TCK_NS) behind."""
    path = "/proc/%d/stat" % pid if tid is None else "/proc/%d/task/%d/stat" % (pid, tid)
    with open(path) as f:
        rest = f.read().rsplit(")", 1)[1].split()
    return (int(rest[11]) + int(rest[12])) * CLK_TCK_NS


def attach(argv, pid, env=None, timeout=120):
    """Run argv (pcollect -target-pid pid ...) between two readings of the CPU time of pid's
    main thread. Returns the run and the window: (CPU ns before, CPU ns after, wall ns from
    one reading to the other), for check_attached()."""
    before, t0 = stat_cpu_ns(pid, pid), time.monotonic_ns()
    r = run(argv, env=env, timeout=timeout)
    t1, after = time.monotonic_ns(), stat_cpu_ns(pid, pid)
    return r, (before, after, t1 - t0)


def check_attached(window, stream, what):
    """The CPU time the agent measured in the target's main thread while attached (stream's
    THREAD_END) against what the kernel counted around the whole pcollect run (attach()):
    never more, and less by at most what the thread can have used in the wall time the run
    lasted beyond the stream's own span (pcollect starting, attaching, detaching, ending),
    each give or take the kernel's rounding (two ticks a reading)."""
    before, after, wall = window
    used, agent = after - before, stream.cpu_ns()
    ends = {r["type"]: r["time"] for r in stream.records if r["type"] in ("thread_start",
                                                                         "thread_end")}
    outside = wall - (ends["thread_end"] - ends["thread_start"])
    check(agent <= used + 2 * CLK_TCK_NS and used - agent <= outside + 2 * CLK_TCK_NS,
          "%s: the agent measured %.3f s of CPU in the target's main thread while attached; "
          "the kernel counted %.3f s around the pcollect run, whose %.3f s of wall time "
          "outside the stream's span bound the difference (/proc/PID/task/PID/stat)"
          % (what, agent / 1e9, used / 1e9, outside / 1e9))


# ---- running the tools ---------------------------------------------------------------------------

def tool(name):
    """Path of a tool in the build tree: pcollect, pfinalize, preport."""
    sub = {"pcollect": "collector", "pfinalize": "finalizer", "preport": "report"}[name]
    path = os.path.join(BUILD, sub, name)
    if not os.access(path, os.X_OK):
        skip("%s not built at %s" % (name, path), needs="build")
    return path


def prog(name):
    """Path of a known-behaviour program in the build tree."""
    path = os.path.join(BUILD, "tests", "progs", name)
    if not os.access(path, os.X_OK):
        fail("test program %s not built at %s" % (name, path))
    return path


def omp_program(names):
    """The OpenMP test program of the runtime this test is run for (its argument: gomp or
    libomp, names: {runtime: program}), as (runtime, path); a test of a runtime whose program
    is not built skips, naming the packages scripts/dev installs for it."""
    if len(sys.argv) != 2 or sys.argv[1] not in names:
        fail("usage: %s gomp|libomp" % os.path.basename(sys.argv[0]))
    runtime = sys.argv[1]
    path = os.path.join(BUILD, "tests", "progs", names[runtime])
    if not os.access(path, os.X_OK):
        skip("%s not built: %s" % (names[runtime], "no OpenMP in the C compiler"
                                   if runtime == "gomp" else "no clang with libomp"),
             needs=["gcc"] if runtime == "gomp" else ["clang", "libomp-dev"])
    return runtime, path


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


def run(argv, cwd=None, env=None, timeout=120, stdin=None, preexec_fn=None):
    """Run argv, capturing its output as text. pcollect gets tool_env(): in a sanitizer
    build the programs it starts must load the sanitizer's runtime first."""
    argv = [str(a) for a in argv]
    e = dict(os.environ)
    if os.path.basename(argv[0]) == "pcollect":
        env = tool_env(env)
    if env:
        e.update(env)
    if CALLS:
        t0, r0 = time.monotonic(), resource.getrusage(resource.RUSAGE_CHILDREN)
    p = subprocess.run(argv, cwd=cwd, env=e, timeout=timeout, stdin=stdin,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       errors="replace", preexec_fn=preexec_fn)
    if CALLS:
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        with open(CALLS, "a") as f:
            f.write("%s\t%.3f\t%.3f\t%s\n" % (
                os.path.basename(sys.argv[0]), r1.ru_utime + r1.ru_stime - r0.ru_utime -
                r0.ru_stime, time.monotonic() - t0, " ".join(argv)[:300]))
    return p


def run_bounded(argv, timeout, env=None, preexec_fn=None):
    """run() in a session of its own, for a run that may hang: on timeout everything it
    started (pcollect and the program, which holds the output pipe open) is killed, and the
    test fails saying so instead of waiting on the pipe."""
    argv = [str(a) for a in argv]
    e = dict(os.environ)
    e.update(tool_env(env) if os.path.basename(argv[0]) == "pcollect" else (env or {}))

    def start():
        os.setsid()
        if preexec_fn:
            preexec_fn()
    p = subprocess.Popen(argv, env=e, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, errors="replace",
                         preexec_fn=start)
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, 9)
        out, err = p.communicate()
        fail("%s: still running after %d s: it hangs (killed)\n%s%s"
             % (" ".join(argv), timeout, out[-2000:], err[-2000:]))
    return subprocess.CompletedProcess(argv, p.returncode, out, err)


def run_ok(argv, code=0, **kw):
    """run(), failing the test unless argv exits with code (its output printed)."""
    cp = run(argv, **kw)
    if cp.returncode != code:
        fail("%s: exit %d, expected %d\n%s%s" % (" ".join(str(a) for a in argv),
                                                 cp.returncode, code, cp.stdout, cp.stderr))
    return cp


class Run:
    def __init__(self, cp, result):
        self.returncode = cp.returncode
        self.stdout = cp.stdout
        self.stderr = cp.stderr
        self.result = result


def pcollect(target, result=None, options=(), cwd=None, env=None, timeout=120,
             finalization="none", quiet=True, analysis="hotspots", preexec_fn=None):
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
    cp = run(argv, cwd=cwd, env=tool_env(env), timeout=timeout, preexec_fn=preexec_fn)
    return Run(cp, result)


def copy_result(src, dst):
    """A copy of the result directory src at dst, without its result.db: the same raw data to
    finalize again, or to damage. Returns the Result."""
    shutil.copytree(src, dst)
    if os.path.exists(os.path.join(dst, "result.db")):
        os.unlink(os.path.join(dst, "result.db"))
    return Result(dst)


def pfinalize(result, options=(), env=None, timeout=120):
    """Run pfinalize -r result [options]. Returns the CompletedProcess."""
    return run([tool("pfinalize"), "-r", result] + list(options), env=env, timeout=timeout)


def finalize(result, options=("-quiet",), env=None, timeout=120):
    """pfinalize -r result [options], failing the test unless it exits 0. Returns its
    stderr (the summary, without -quiet)."""
    return run_ok([tool("pfinalize"), "-r", result] + list(options), env=env,
                  timeout=timeout).stderr


_finalize = finalize


class Result(str):
    """A result directory (the path itself), with the run of pcollect that made it (stdout,
    stderr, returncode; None when it was made otherwise) and its readers."""

    def __new__(cls, path, run=None):
        self = str.__new__(cls, path)
        self.run = run
        return self

    @property
    def stdout(self):
        return self.run.stdout

    @property
    def stderr(self):
        return self.run.stderr

    @property
    def returncode(self):
        return self.run.returncode

    def preport(self, *args, code=0, env=None):
        return preport("-r", self, *args, code=code, env=env)

    def rows(self, *args, env=None):
        return rows(self, *args, env=env)

    def json_rows(self, *args):
        return json_rows(self, *args)

    def db(self, sql, args=()):
        return db_rows(self, sql, args)

    def meta(self):
        return read_meta(self)

    def streams(self):
        return load_streams(self)

    def agent_log(self):
        return agent_log(self)


def pcollect_code(returncode):
    """The status pcollect ends with for a program that ended with returncode (as
    subprocess gives it): the same, and, for a program killed by a signal, by TERM, INT or
    HUP the same signal (pcollect ends by it after finalizing: docs/pcollect.md), by another
    one 128 + its number."""
    if returncode >= 0 or -returncode in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        return returncode
    return 128 - returncode


def collect(w, name, target, options=(), analysis="hotspots", interval=None, code=0,
            stdout=None, native=False, finalize=False, finalization="none", quiet=True,
            env=None, cwd=None, timeout=120, preexec_fn=None):
    """The one way a test profiles a program: pcollect -collect ANALYSIS -r W/NAME on target
    (a list; numbers are made text), sampling every interval ms when given, options after.
    The test fails unless pcollect exits with code (None: any) and, when stdout is given,
    the program printed exactly that; native: the program is run alone first, and pcollect
    must exit as it did (128 + the signal it died of) with the same output. finalize runs
    pfinalize -quiet after it (which must succeed). Returns the Result."""
    if native:
        alone = run(target, env=env, cwd=cwd, timeout=timeout, preexec_fn=preexec_fn)
        code = pcollect_code(alone.returncode)
        stdout = alone.stdout
    res = w.join(name) if name else None
    opts = (["-knob", "sampling-interval=%s" % interval] if interval is not None else []) + \
        list(options)
    r = pcollect([str(x) for x in target], result=res, options=opts, cwd=cwd, env=env,
                 timeout=timeout, finalization=finalization, quiet=quiet, analysis=analysis,
                 preexec_fn=preexec_fn)
    if code is not None and r.returncode != code:
        fail("%s: pcollect -collect %s exits %d, expected %d%s\n%s%s" % (
            name, analysis, r.returncode, code, " (as without it)" if native else "",
            r.stdout[-2000:], r.stderr[-3000:]))
    if stdout is not None:
        check(r.stdout == stdout, "%s: exit %d and output as %s (%r)" % (
            name, r.returncode, "without the collector" if native else "expected", stdout))
    out = Result(res or "", r)
    if finalize:
        _finalize(out, timeout=timeout)
    return out


def preport(*args, code=0, env=None, timeout=120):
    """preport ARGS, failing the test unless it exits with code. The CompletedProcess."""
    return run_ok([tool("preport")] + list(args), code=code, env=env, timeout=timeout)


def rows(res, *args, env=None):
    """The rows of preport -r res -format csv ARGS, as dicts."""
    out = preport("-r", res, "-format", "csv", *args, env=env).stdout
    return list(csv.DictReader(io.StringIO(out)))


def check_job_ranks(res, plan, ranks):
    """tests/progs/job-synth's known answers per rank (its plan: its JSON) in res's -view
    hotspots -group-by rank: a row per rank, CPU Time and MPI Calls exact, MPI Time within
    the ms printed. The rows by rank."""
    got = {int(r["Rank"]): r for r in rows(res, "-view", "hotspots", "-group-by", "rank")}
    check(sorted(got) == list(range(ranks)), "a row per rank (%s)" % sorted(got))
    for p in plan:
        r = got[p["rank"]]
        check(ms(r["CPU Time:Self"]) * 1000000 == p["cpu_ns"],
              "rank %d: CPU Time %s s is %d ns" % (p["rank"], r["CPU Time:Self"], p["cpu_ns"]))
        check(abs(ns(r["MPI Time:Self"]) - p["mpi_ns"]) <= 500000,
              "rank %d: MPI Time %s s is %d ns (printed to the ms)"
              % (p["rank"], r["MPI Time:Self"], p["mpi_ns"]))
        check(int(r["MPI Calls:Self"]) == p["mpi_calls"],
              "rank %d: MPI Calls %s is %d" % (p["rank"], r["MPI Calls:Self"], p["mpi_calls"]))
    return got


def topdown_paths(res, *args):
    """{tuple of function names from a root: CPU Time:Total ns} of the top-down view (below
    its Total row), args added to its options."""
    out, path = {}, []
    for r in rows(res, "-view", "top-down", "-threshold", "0", *args):
        d = int(r["Depth"])  # 0: the Total row
        if d < 1:
            continue
        path[d - 1:] = [r["Function Stack"]]
        out[tuple(path)] = out.get(tuple(path), 0) + ns(r["CPU Time:Total"])
    return out


def folded(res, *args):
    """The callstacks view of res (every stack, ARGS added): (frames outermost first, self
    CPU time in seconds) per stack."""
    return [(r["Call Stack"].split(";"), secs(r)) for r in
            rows(res, "-view", "callstacks", "-threshold", "0", *args)]


def json_rows(res, *args):
    """The rows of preport -r res -format json ARGS."""
    return json.loads(preport("-r", res, "-format", "json", *args).stdout)["rows"]


# ---- preport's numbers as CSV prints them --------------------------------------------------------

def ns(v):
    """A CSV time ("1.234", s to the ns as preport prints it) in ns; empty is 0."""
    return round(float(v) * 1e9) if v not in ("", None) else 0


def ms(v):
    """Seconds as printed ("1.234") to whole milliseconds; empty is 0."""
    return round(float(v) * 1000) if v not in ("", None) else 0


def num(v):
    return float(v) if v not in ("", None) else 0.0


def secs(row, col="CPU Time:Self"):
    """A row's time column in seconds; empty or absent is 0."""
    return float(row[col]) if row.get(col) else 0.0


def summary_value(text, label):
    """The value of label in preport's text summary (what follows "label:" on its line)."""
    for line in text.splitlines():
        if line.strip().startswith(label + ":"):
            return line.split(":", 1)[1].strip()
    fail("summary has no '%s' line:\n%s" % (label, text))


def by(rows_, key, col, conv=ms):
    return {r[key]: conv(r[col]) for r in rows_}


def text_bytes(v):
    """Bytes as text shows them: "512 B", "1.5 KiB", "3.0 MiB"."""
    v = int(v)
    if abs(v) < 1024:
        return "%d B" % v
    x, u = float(abs(v)), -1
    units = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"]
    while x >= 1024 and u < 5:
        x /= 1024
        u += 1
    if x >= 1023.95 and u < 5:
        x /= 1024
        u += 1
    return "%s%.1f %s" % ("-" if v < 0 else "", x, units[u])


def at_terminal(argv, cols, rows_=50):
    """Run argv with a pseudo-terminal of cols columns as its output; returns what it wrote."""
    import fcntl
    import pty
    import struct
    import termios

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows_, cols, 0, 0))
    p = subprocess.Popen(argv, stdout=slave, stderr=slave, stdin=subprocess.DEVNULL,
                         close_fds=True)
    os.close(slave)
    out = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO once the program has closed its side
            break
        if not chunk:
            break
        out += chunk
    os.close(master)
    if p.wait(timeout=60) != 0:
        fail("%s at a terminal: exit %d\n%s" % (" ".join(argv), p.returncode,
                                                 out.decode(errors="replace")))
    return out.decode(errors="replace").replace("\r\n", "\n")


# ---- result.db ---------------------------------------------------------------------------------

def db_rows(result, sql, args=()):
    """Rows of a query on result/result.db."""
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
    (innermost) function."""
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


class Db:
    """result.db loaded for stack walks: per sample the frames, outermost first."""

    def __init__(self, res):
        q = lambda sql: db_rows(res, sql)  # noqa: E731
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

    def own_split(self, *names):
        """CPU time (ns) of the agent's own samples, of the program's, and of the program's
        whose stack holds a function of names; the agent's must be a root of their own."""
        own = prog = hit = 0
        for _t, sid, _c, _weight, value in self.samples:
            frames = [f["name"] for f in self.stack(sid)]
            if "[pcollect agent]" in frames:
                check(frames == ["[pcollect agent]"],
                      "the agent's samples are a root of their own (%s)" % frames)
                own += value
                continue
            prog += value
            if any(n in frames for n in names):
                hit += value
        return own, prog, hit

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

    def under(self, names):
        """CPU Time weight of the samples with each of names anywhere on their stack (the
        function and what it calls: the burn loop's clock read, getrusage), and the total
        weight; a sample with two of names counts for the innermost (under() for raw
        samples)."""
        w = {n: 0 for n in names}
        total = 0
        for _t, sid, _c, weight, _v in self.samples:
            total += weight
            for f in reversed(self.stack(sid)):
                if f["name"] in w:
                    w[f["name"]] += weight
                    break
        return w, total

    def timeline(self):
        """(time_ns since the start, tid, pid, stack id, weight) of every sample."""
        return [(t, self.threads[th][0], self.threads[th][1], st, w) for t, th, st, w in
                db_rows(self.res, "SELECT t.time_ns, t.thread_id, t.stack_id, t.value / "
                        "(SELECT value FROM meta WHERE key = 'interval_ns') FROM timeline t "
                        "JOIN metrics m ON m.id = t.metric_id AND m.name = 'CPU Time'")]

    def meta(self, key):
        r = db_rows(self.res, "SELECT value FROM meta WHERE key = ?", (key,))
        return r[0][0] if r else None

    def notes(self):
        """{kind: count} of the python_notes table."""
        out = {}
        for kind, count in db_rows(self.res,
                                   "SELECT kind, SUM(count) FROM python_notes GROUP BY kind"):
            out[kind] = count
        return out


# ---- raw streams -------------------------------------------------------------------------------

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


def agent_log(result):
    """What the agents of a result wrote in its log/ directory, one text."""
    text = ""
    for path in sorted(glob.glob(os.path.join(result, "log", "*"))):
        with open(path, errors="replace") as f:
            text += f.read()
    return text


def sampled_ns(streams):
    """CPU time the samples of these streams stand for: weight x their header's interval."""
    return sum(s.weight() * s.header["interval_ns"] for s in streams)


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
    """(stream, weight, names leaf first, stack flags) for every sample of every stream; the
    agent's own samples (STACK_AGENT) are named "[pcollect agent]", as pfinalize names them."""
    sym = sym or Symbolizer(streams)
    out = []
    for s in streams:
        cache = {}
        for r in s.samples():
            sid = r["stack"]
            if sid not in s.stacks:
                fail("%s: sample names undefined stack %d" % (s.path, sid))
            if sid not in cache:
                # The agent's own work has no frames: pfinalize's one root names it.
                cache[sid] = (sym.stack_names(s, s.stacks[sid]) or
                              (["[pcollect agent]"] if s.stacks[sid]["flags"] & STACK_AGENT
                               else []))
            out.append((s, r["weight"], cache[sid], s.stacks[sid]["flags"]))
    return out


def under(samples, names):
    """Weight of the named_samples() with each of names anywhere on their stack (the function
    and what it calls: the burn loop's clock read, getrusage), and the total weight. A
    sample with two of names counts for the innermost."""
    w = {n: 0 for n in names}
    total = 0
    for _s, weight, stack, _f in samples:
        total += weight
        for f in stack:
            if f in w:
                w[f] += weight
                break
    return w, total
