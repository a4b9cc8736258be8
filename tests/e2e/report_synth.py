#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Synthetic result databases for preport tests and benchmarks, built from the real schema.

The tables come from finalizer/schema.sql, the file pfinalize embeds (its sections parsed by
finalizer/schema_sql.py), so the report tests exercise today's schema; schema=1 builds the
previous one (tests/e2e/schema-v1.sql, frozen) to test that preport still reads it.

known(dir): a small result whose every number is known in advance (see KNOWN below).
known3(dir): the same with three metrics: CPU Time, Wait Time, Allocated Bytes (KNOWN3).
large(dir, stacks, samples): a result of the size the benchmark asks for.
Stdlib only, so tests need nothing beyond Python 3.
"""
import importlib.util
import os
import random
import sqlite3

HERE = os.path.dirname(os.path.abspath(__file__))
SCHEMA = {2: os.path.join(HERE, "..", "..", "finalizer", "schema.sql"),
          1: os.path.join(HERE, "schema-v1.sql")}


def _schema_sql():
    spec = importlib.util.spec_from_file_location(
        "schema_sql", os.path.join(HERE, "..", "..", "finalizer", "schema_sql.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def schema_sections(version=2):
    """{section: SQL} of the schema of that version: tables, symbol_indexes, sample_indexes."""
    with open(SCHEMA[version]) as f:
        return {k: "\n".join(v) for k, v in _schema_sql().sections(f.read()).items()}


INTERVAL_NS = 1000000
CPU = ("CPU Time", "ns", "sum", "cpu", "CPU time of the sampled threads", 1)


class Builder:
    """Interns frames and stack nodes the way pfinalize does; writes schema 2 (or 1)."""

    def __init__(self, path, schema=2):
        if os.path.exists(path):
            os.unlink(path)
        self.schema = schema
        self.sql = schema_sections(schema)
        self.db = sqlite3.connect(path)
        # A test's scratch database: no wait on a busy disk for each of its statements.
        self.db.execute("PRAGMA synchronous = OFF")
        self.db.executescript(self.sql["tables"])
        self.modules = {}
        self.files = {}
        self.functions = {}
        self.frames = {}
        self.stacks = {}
        self.metrics = {}
        self.samples = {}
        self.timeline = []
        self.metric(*CPU)

    def metric(self, name, unit, aggregation, kind, description=None, main=0):
        """Declare a metric (schema 2 only has the table); returns its id."""
        if name not in self.metrics:
            mid = len(self.metrics) + 1
            self.metrics[name] = mid
            if self.schema >= 2:
                self.db.execute("INSERT INTO metrics (id, name, unit, aggregation, kind, "
                                "description, main, display_order) VALUES (?,?,?,?,?,?,?,?)",
                                (mid, name, unit, aggregation, kind, description, main, mid))
        return self.metrics[name]

    def module(self, name):
        if name not in self.modules:
            mid = len(self.modules) + 1
            self.modules[name] = mid
            self.db.execute("INSERT INTO modules (id, path, name, build_id, kind, resolved_path,"
                            " debug_path, symbols, status) VALUES (?,?,?,?,?,?,?,?,?)",
                            (mid, "/usr/lib/" + name if name.endswith(".so.6") else "/tmp/" + name,
                             name, None, "file", None, None, "dwarf", "ok"))
        return self.modules[name]

    def file(self, path):
        if path is None:
            return None
        if path not in self.files:
            self.files[path] = len(self.files) + 1
            self.db.execute("INSERT INTO source_files (id, path) VALUES (?,?)",
                            (self.files[path], path))
        return self.files[path]

    def function(self, name, module, path=None, line=None, language="native"):
        key = (name, module)
        if key not in self.functions:
            fid = len(self.functions) + 1
            self.functions[key] = fid
            self.db.execute("INSERT INTO functions (id, name, mangled, module_id, source_file_id,"
                            " line, language, resolved) VALUES (?,?,?,?,?,?,?,?)",
                            (fid, name, None, self.module(module) if module else None,
                             self.file(path), line, language, 1))
        return self.functions[key]

    def frame(self, func, path=None, line=None, inline_depth=0):
        """func is (name, module, def_path, def_line[, language])."""
        fid = self.function(*func)
        key = (fid, path, line, inline_depth)
        if key not in self.frames:
            frid = len(self.frames) + 1
            self.frames[key] = frid
            self.db.execute("INSERT INTO frames (id, function_id, module_id, address, "
                            "inline_depth, source_file_id, line) VALUES (?,?,?,?,?,?,?)",
                            (frid, fid, self.module(func[1]) if func[1] else None,
                             0x1000 + frid, inline_depth, self.file(path), line))
        return self.frames[key]

    def stack(self, frames):
        """frames: list of frame ids, outermost first; returns the leaf node id."""
        parent = None
        for depth, fr in enumerate(frames):
            key = (parent, fr)
            if key not in self.stacks:
                sid = len(self.stacks) + 1
                self.stacks[key] = sid
                self.db.execute("INSERT INTO stacks (id, parent_id, frame_id, depth) "
                                "VALUES (?,?,?,?)", (sid, parent, fr, depth))
            parent = self.stacks[key]
        return parent

    def sample(self, thread, stack, time_ns, weight=1, metric="CPU Time", value=None):
        """One event: a CPU sample of weight (value weight x interval), or value of metric."""
        mid = self.metrics[metric]
        if value is None:
            value = weight * INTERVAL_NS
        count, w, v = self.samples.get((mid, thread, stack), (0, 0, 0))
        self.samples[(mid, thread, stack)] = (count + 1, w + weight, v + value)
        self.timeline.append((time_ns, thread, mid, stack, weight, value))

    def finish(self, meta, processes, threads):
        if self.schema >= 2:
            self.db.executemany(
                "INSERT INTO samples (thread_id, stack_id, metric_id, context_id, count, value)"
                " VALUES (?,?,?,0,?,?)",
                [(t, s, m, c, v) for (m, t, s), (c, w, v) in sorted(self.samples.items())])
            self.timeline.sort()
            self.db.executemany(
                "INSERT INTO timeline (time_ns, thread_id, metric_id, stack_id, context_id, "
                "value) VALUES (?,?,?,?,0,?)",
                [(tm, t, m, s, v) for tm, t, m, s, w, v in self.timeline])
        else:
            if len(self.metrics) > 1:
                raise ValueError("schema 1 holds CPU time only")
            self.db.executemany(
                "INSERT INTO samples (thread_id, stack_id, count, weight, time_ns) "
                "VALUES (?,?,?,?,?)",
                [(t, s, c, w, w * INTERVAL_NS) for (m, t, s), (c, w, v) in self.samples.items()])
            self.timeline.sort()
            self.db.executemany("INSERT INTO timeline (time_ns, thread_id, stack_id, weight) "
                                "VALUES (?,?,?,?)",
                                [(tm, t, s, w) for tm, t, m, s, w, v in self.timeline])
        self.db.executemany("INSERT INTO processes (id, pid, ppid, parent_id, origin, generation,"
                            " host, rank, exe, command_line, start_ns, end_ns) "
                            "VALUES (?,?,?,?,?,?,?,?,?,?,?,?)", processes)
        self.db.executemany("INSERT INTO threads (id, process_id, tid, name, start_ns, end_ns, "
                            "cpu_ns, samples, weight, time_ns) VALUES (?,?,?,?,?,?,?,?,?,?)",
                            threads)
        cpu = self.metrics["CPU Time"]
        weight = sum(w for (m, _, _), (_, w, _) in self.samples.items() if m == cpu)
        count = sum(c for (m, _, _), (c, _, _) in self.samples.items() if m == cpu)
        meta = dict(meta)
        meta.update({"schema_version": str(self.schema), "analysis": "hotspots",
                     "interval_ns": str(INTERVAL_NS), "samples_total": str(count),
                     "weight_total": str(weight)})
        self.db.executemany("INSERT INTO meta VALUES (?,?)", sorted(meta.items()))
        self.db.executescript(self.sql["symbol_indexes"] + self.sql["sample_indexes"])
        self.db.commit()
        self.db.close()


APP = "/src/app/app.c"
F = {
    "_start": ("_start", "app", None, None),
    "__libc_start_main": ("__libc_start_main", "libc.so.6", None, None),
    "clone3": ("clone3", "libc.so.6", None, None),
    "start_thread": ("start_thread", "libc.so.6", None, None),
    "main": ("main", "app", APP, 10),
    "work": ("work", "app", APP, 20),
    "a": ("a", "app", APP, 30),
    "helper": ("helper", "app", APP, 60),
    "b": ("b", "app", APP, 40),
    "c": ("c", "app", APP, 50),
    "rec": ("rec", "app", APP, 70),
    "worker": ("worker", "app", APP, 80),
    "wait_io": ("wait_io", "app", APP, 90),
}

# Stacks of the known result, outermost first: (function, line, inline depth), thread, ms.
KNOWN_STACKS = [
    ([("_start", None, 0), ("__libc_start_main", None, 0), ("main", 12, 0), ("work", 22, 0),
      ("a", 31, 0)], 1, 400),
    ([("_start", None, 0), ("__libc_start_main", None, 0), ("main", 12, 0), ("work", 22, 0),
      ("a", 33, 0), ("helper", 61, 1)], 1, 200),
    ([("_start", None, 0), ("__libc_start_main", None, 0), ("main", 13, 0), ("b", 41, 0)], 1, 300),
    ([("_start", None, 0), ("__libc_start_main", None, 0), ("main", 14, 0), ("rec", 71, 0),
      ("rec", 71, 0), ("rec", 72, 0)], 1, 50),
    ([("_start", None, 0), ("__libc_start_main", None, 0), ("main", 15, 0), ("c", 51, 0)], 1, 30),
    ([("_start", None, 0)], 1, 5),
    ([("clone3", None, 0), ("start_thread", None, 0), ("worker", 81, 0), ("c", 52, 0)], 2, 15),
]

# What preport must print for the known result (milliseconds), default options.
KNOWN = {
    "total": 1000,
    "self": {"a": 400, "helper": 200, "b": 300, "rec": 50, "c": 45, "_start": 5},
    "total_by_function": {"main": 980, "work": 600, "a": 600, "helper": 200, "b": 300,
                          "rec": 50, "c": 45, "worker": 15, "_start": 5},
    "self_inline_off": {"a": 600, "b": 300, "rec": 50, "c": 45, "_start": 5},
    "total_all_frames": {"_start": 985, "__libc_start_main": 980, "clone3": 15,
                         "start_thread": 15, "main": 980},
    "threads": {1001: 985, 1002: 15},
}


# Three metrics: the known result's CPU samples, and these events of Wait Time (ms each) and
# Allocated Bytes (bytes each): (stack, thread, metric, [values], first time in ms).
START = [("_start", None, 0), ("__libc_start_main", None, 0)]
THREAD2 = [("clone3", None, 0), ("start_thread", None, 0)]
KNOWN3_EVENTS = [
    (START + [("main", 12, 0), ("work", 23, 0), ("wait_io", 91, 0)], 1, "Wait Time",
     [500, 500, 500, 500], 100),
    (START + [("main", 13, 0), ("b", 41, 0)], 1, "Wait Time", [50] * 5, 2100),
    (THREAD2 + [("worker", 82, 0), ("wait_io", 91, 0)], 2, "Wait Time", [500], 600),
    (START + [("main", 12, 0), ("work", 22, 0), ("a", 31, 0)], 1, "Allocated Bytes",
     [1048576] * 3, 10),
    (START + [("main", 13, 0), ("b", 41, 0)], 1, "Allocated Bytes", [1024], 500),
    (THREAD2 + [("worker", 81, 0), ("c", 52, 0)], 2, "Allocated Bytes", [512, 512], 550),
    (START + [("main", 14, 0), ("rec", 71, 0), ("rec", 71, 0), ("rec", 72, 0)], 1,
     "Allocated Bytes", [4096], 900),
]
WAIT = ("Wait Time", "ns", "sum", "wait", "time threads spent blocked")
ALLOC = ("Allocated Bytes", "bytes", "sum", "alloc", "bytes allocated")

# What preport must print for the three-metric result: CPU Time as KNOWN, and these
# (Wait Time in ms, Allocated Bytes in bytes).
KNOWN3 = {
    "totals": {"CPU Time": 1000, "Wait Time": 2750, "Allocated Bytes": 3151872},
    "self": {"Wait Time": {"wait_io": 2500, "b": 250},
             "Allocated Bytes": {"a": 3145728, "b": 1024, "c": 1024, "rec": 4096}},
    "total": {"Wait Time": {"main": 2250, "work": 2000, "wait_io": 2500, "b": 250,
                            "worker": 500},
              "Allocated Bytes": {"main": 3150848, "work": 3145728, "a": 3145728, "b": 1024,
                                  "rec": 4096, "c": 1024, "worker": 1024}},
    "counts": {"Wait Time": 10, "Allocated Bytes": 7},
}


def _known3_events(b, leaf_of):
    b.metric(*WAIT)
    b.metric(*ALLOC)
    for frames, thread, metric, values, first in KNOWN3_EVENTS:
        leaf = leaf_of(frames)
        for i, v in enumerate(values):
            b.sample(thread, leaf, (first + 100 * i) * INTERVAL_NS, metric=metric,
                     value=v * INTERVAL_NS if metric == "Wait Time" else v)


# With extra=True, two metrics more: Allocations (a count) and Peak Bytes (a peak: the live
# bytes of each stack at the moment of the process's peak), with these values per stack.
EXTRA = [("Allocations", "count", "sum", "alloc", "allocations made"),
         ("Peak Bytes", "bytes", "peak", "alloc", "live bytes at the peak")]
KNOWN3_EXTRA = {
    "Allocations": {"a": 3, "b": 1, "c": 2, "rec": 1},
    "Peak Bytes": {"a": 2097152, "c": 512},
}


def _extra_events(b, leaf_of):
    for m in EXTRA:
        b.metric(*m)
    for frames, thread, metric, values, first in KNOWN3_EVENTS:
        if metric != "Allocated Bytes":
            continue
        leaf, func = leaf_of(frames), frames[-1][0]
        for i in range(len(values)):
            b.sample(thread, leaf, (first + 100 * i) * INTERVAL_NS, metric="Allocations",
                     value=1)
        if func in KNOWN3_EXTRA["Peak Bytes"]:
            b.sample(thread, leaf, (first + 1) * INTERVAL_NS, metric="Peak Bytes",
                     value=KNOWN3_EXTRA["Peak Bytes"][func])


def known3(result_dir, source_dir=None, scale=1, extra=False):
    """The known result with three metrics (KNOWN3); extra adds EXTRA's two."""
    def events(b, leaf_of):
        _known3_events(b, leaf_of)
        if extra:
            _extra_events(b, leaf_of)
    return known(result_dir, scale=scale, source_dir=source_dir, metrics=events)


def known(result_dir, scale=1, source_dir=None, schema=2, metrics=None):
    """Write result_dir/result.db for KNOWN; scale multiplies every weight (the 'twice' variant
    passes a dict {function: factor} instead). metrics(builder, leaf_of) adds the events of
    other metrics before the result is written (known3); leaf_of(frames) makes a stack."""
    os.makedirs(result_dir, exist_ok=True)
    b = Builder(os.path.join(result_dir, "result.db"), schema)
    app = (source_dir + "/app.c") if source_dir else APP

    def leaf_of(frames):
        ids = []
        for name, line, depth in frames:
            f = F[name]
            if f[2] is not None:
                f = (f[0], f[1], app, f[3])
            ids.append(b.frame(f, app if line else None, line, depth))
        return b.stack(ids)

    t1 = t2 = 0
    for frames, thread, ms in KNOWN_STACKS:
        leaf = leaf_of(frames)
        factor = scale.get(frames[-1][0], 1) if isinstance(scale, dict) else scale
        for _ in range(ms * factor):
            if thread == 1:
                b.sample(1, leaf, t1 * INTERVAL_NS)
                t1 += 1
            else:
                b.sample(2, leaf, (500 + t2) * INTERVAL_NS)
                t2 += 1
    if metrics:
        metrics(b, leaf_of)
    b.db.execute("INSERT INTO lost VALUES (1, 1, 'buffer', 3, 3)")
    b.db.execute("INSERT INTO streams (path, process_id, thread_id, bytes, bytes_skipped, chunks,"
                 " chunks_damaged, problem) VALUES ('raw/1000.1001.praw', 1, 1, 4096, 0, 2, 0, "
                 "NULL)")
    b.db.execute("INSERT INTO streams (path, process_id, thread_id, bytes, bytes_skipped, chunks,"
                 " chunks_damaged, problem) VALUES ('raw/1000.1002.praw', 1, 2, 1024, 0, 1, 0, "
                 "NULL)")
    b.finish({"elapsed_ns": str(1250 * INTERVAL_NS), "cpu_count": "2",
              "command_line": "./app", "host": "testhost", "finalization_mode": "full"},
             [(1, 1000, 1, None, "start", 0, "testhost", None, "/tmp/app", "./app", 0,
               1250 * INTERVAL_NS)],
             [(1, 1, 1001, "app", 0, 1250 * INTERVAL_NS, 985 * INTERVAL_NS, 985, 985,
               985 * INTERVAL_NS),
              (2, 1, 1002, "worker", 500 * INTERVAL_NS, 600 * INTERVAL_NS, 15 * INTERVAL_NS,
               15, 15, 15 * INTERVAL_NS)])
    return result_dir


def split(result_dir, budgets, host="testhost"):
    """Write result_dir/result.db of a run in which main calls each function of budgets
    ({name: CPU ms}, whole ms) below it: one sample of that weight each, one after the other."""
    os.makedirs(result_dir, exist_ok=True)
    b = Builder(os.path.join(result_dir, "result.db"))
    main = b.frame(F["main"], APP, 12, 0)
    t = 0
    for k, (name, ms) in enumerate(sorted(budgets.items())):
        leaf = b.stack([main, b.frame((name, "app", APP, 100 + 10 * k), APP, 101 + 10 * k, 0)])
        b.sample(1, leaf, t * INTERVAL_NS, weight=int(ms))
        t += int(ms)
    b.finish({"elapsed_ns": str(t * INTERVAL_NS), "cpu_count": "2", "command_line": "./app",
              "host": host, "finalization_mode": "full"},
             [(1, 1000, 1, None, "start", 0, host, None, "/tmp/app", "./app", 0,
               t * INTERVAL_NS)],
             [(1, 1, 1001, "app", 0, t * INTERVAL_NS, t * INTERVAL_NS, len(budgets), t,
               t * INTERVAL_NS)])
    return result_dir


def large(result_dir, nstacks=100000, nsamples=1000000, nfunctions=5000, nthreads=8, seed=1,
          npaths=4000, worst=False, schema=2):
    """A result of nstacks distinct leaf stacks and nsamples samples (weight 1 each).

    Like real profiles, distinct stacks mostly differ in their innermost frames (the sampled
    pc, the return address in the caller) below a few thousand call paths (npaths). worst=True
    makes every frame of every stack random instead (about 15 tree nodes per stack)."""
    os.makedirs(result_dir, exist_ok=True)
    rnd = random.Random(seed)
    b = Builder(os.path.join(result_dir, "result.db"), schema)
    mods = ["app", "libm.so.6", "libc.so.6", "libsolver.so"]
    funcs = [("fn_%d" % i, mods[i % len(mods)], "/src/big/file%d.c" % (i % 200), 10 + i % 900)
             for i in range(nfunctions)]
    root = b.frame(("main", "app", "/src/big/main.c", 5), "/src/big/main.c", 7)

    def walk(depth):
        path, prev = [], 0
        for _ in range(depth):
            prev = (prev * 7 + rnd.randint(0, 6)) % nfunctions
            path.append(prev)
        return path

    paths = [walk(rnd.randint(6, 30)) for _ in range(npaths)]
    leaves = set()
    while len(leaves) < nstacks:
        if worst:
            fr = [root] + [b.frame(funcs[f], funcs[f][2], funcs[f][3] + rnd.randint(0, 3))
                           for f in walk(rnd.randint(6, 30))]
        else:
            p = rnd.choice(paths)
            fr = [root] + [b.frame(funcs[f], funcs[f][2], funcs[f][3] + 1) for f in p[:-2]]
            caller, leaf = funcs[p[-2]], funcs[p[-1]]
            fr.append(b.frame(caller, caller[2], caller[3] + 1 + rnd.randint(0, 3)))
            fr.append(b.frame(leaf, leaf[2], leaf[3] + 1 + rnd.randint(0, 63)))
        leaves.add(b.stack(fr))
    leaves = sorted(leaves)
    for i in range(nsamples):
        leaf = leaves[i % len(leaves)] if i < len(leaves) else rnd.choice(leaves)
        thread = 1 + (leaf * 31 + rnd.randint(0, 1)) % nthreads
        b.sample(thread, leaf, i * INTERVAL_NS // 4)
    threads = [(t, 1, 2000 + t, "thread-%d" % t, 0, nsamples * INTERVAL_NS // 4, 0, 0, 0, 0)
               for t in range(1, nthreads + 1)]
    b.finish({"elapsed_ns": str(nsamples * INTERVAL_NS // 4), "cpu_count": str(nthreads)},
             [(1, 4242, 1, None, "start", 0, "bench", None, "/tmp/big", "./big", 0,
               nsamples * INTERVAL_NS // 4)], threads)
    return result_dir


# Functions named as C++ and Python name them, with known self CPU time (ms): for the tests of
# names as people type them, and of text that must not be cut.
LONG = "physics::detail::Multigrid<std::complex<double>, 3ul>::smooth_" + "x" * 120 + "(int)"
NAMES = [
    ("physics::Grid<double>::relax(int)", "app", 10),
    ("physics::Grid<float>::relax(int)", "app", 20),
    ("physics::Solver::step() const", "app", 30),
    ("ns::S::operator()(int)", "app", 40),
    ("Simulation.step", None, 7),
    ("f.<locals>.<listcomp>", None, 3),  # how 3.11 names a list comprehension
    ("sqrt", "libm.so.6", 25),
    (LONG, "app", 5),
]
LONG_LINE = "    x = " + " + ".join("term_%d" % i for i in range(60)) + ";"


def names(result_dir, source_dir):
    """main calling each function of NAMES; source_dir/x.cc holds a line of 500 characters
    (line 12, where the long-named function spends its time)."""
    os.makedirs(result_dir, exist_ok=True)
    src = os.path.join(source_dir, "x.cc")
    with open(src, "w") as f:
        for i in range(1, 80):
            f.write((LONG_LINE if i == 12 else "// line %d" % i) + "\n")
    b = Builder(os.path.join(result_dir, "result.db"))
    main = b.frame(("main", "app", src, 1), src, 2)
    t = 0
    for i, (name, module, ms) in enumerate(NAMES):
        lang = "python" if module is None else "native"
        path = "/src/sim.py" if module is None else src
        line = 12 if name == LONG else 10 * i + 21
        leaf = b.stack([main, b.frame((name, module, path, line - 1, lang), path, line)])
        for _ in range(ms):
            b.sample(1, leaf, t * INTERVAL_NS)
            t += 1
    b.finish({}, [(1, 100, 1, None, "start", 0, "h", None, "/tmp/app", "./app", 0, t)],
             [(1, 1, 101, "app", 0, t * INTERVAL_NS, 0, 0, 0, 0)])
    return result_dir
