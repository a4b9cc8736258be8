#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Synthetic result databases for preport tests and benchmarks, written per docs/schema.md.

known(dir): a small result whose every number is known in advance (see KNOWN below).
large(dir, stacks, samples): a result of the size the benchmark asks for.
Stdlib only, so tests need nothing beyond Python 3.
"""
import os
import random
import sqlite3

SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE processes (id INTEGER PRIMARY KEY, pid INTEGER, ppid INTEGER, parent_id INTEGER,
  origin TEXT, generation INTEGER, host TEXT, rank INTEGER, exe TEXT, command_line TEXT,
  start_ns INTEGER, end_ns INTEGER);
CREATE TABLE threads (id INTEGER PRIMARY KEY, process_id INTEGER, tid INTEGER, name TEXT,
  start_ns INTEGER, end_ns INTEGER, cpu_ns INTEGER, samples INTEGER, weight INTEGER,
  time_ns INTEGER);
CREATE TABLE modules (id INTEGER PRIMARY KEY, path TEXT, name TEXT, build_id TEXT, kind TEXT,
  resolved_path TEXT, debug_path TEXT, symbols TEXT, status TEXT);
CREATE TABLE source_files (id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE);
CREATE TABLE functions (id INTEGER PRIMARY KEY, name TEXT, mangled TEXT, module_id INTEGER,
  source_file_id INTEGER, line INTEGER, language TEXT, resolved INTEGER);
CREATE TABLE frames (id INTEGER PRIMARY KEY, function_id INTEGER, module_id INTEGER,
  address INTEGER, inline_depth INTEGER, source_file_id INTEGER, line INTEGER);
CREATE TABLE stacks (id INTEGER PRIMARY KEY, parent_id INTEGER, frame_id INTEGER,
  depth INTEGER);
CREATE TABLE samples (thread_id INTEGER, stack_id INTEGER, count INTEGER, weight INTEGER,
  time_ns INTEGER, PRIMARY KEY (thread_id, stack_id));
CREATE TABLE timeline (time_ns INTEGER, thread_id INTEGER, stack_id INTEGER, weight INTEGER);
CREATE TABLE lost (process_id INTEGER, thread_id INTEGER, reason TEXT, count INTEGER,
  weight INTEGER);
CREATE TABLE streams (path TEXT, process_id INTEGER, thread_id INTEGER, bytes INTEGER,
  bytes_skipped INTEGER, chunks INTEGER, chunks_damaged INTEGER, problem TEXT);
CREATE INDEX stacks_parent ON stacks(parent_id);
CREATE INDEX samples_stack ON samples(stack_id);
CREATE INDEX timeline_time ON timeline(time_ns);
CREATE INDEX timeline_thread ON timeline(thread_id);
CREATE INDEX frames_function ON frames(function_id);
CREATE INDEX functions_module ON functions(module_id);
"""

INTERVAL_NS = 1000000


class Builder:
    """Interns frames and stack nodes the way pfinalize does."""

    def __init__(self, path):
        if os.path.exists(path):
            os.unlink(path)
        self.db = sqlite3.connect(path)
        self.db.executescript(SCHEMA)
        self.modules = {}
        self.files = {}
        self.functions = {}
        self.frames = {}
        self.stacks = {}
        self.samples = {}
        self.timeline = []

    def module(self, name):
        if name not in self.modules:
            mid = len(self.modules) + 1
            self.modules[name] = mid
            self.db.execute("INSERT INTO modules VALUES (?,?,?,?,?,?,?,?,?)",
                            (mid, "/usr/lib/" + name if name.endswith(".so.6") else "/tmp/" + name,
                             name, None, "file", None, None, "dwarf", "ok"))
        return self.modules[name]

    def file(self, path):
        if path is None:
            return None
        if path not in self.files:
            self.files[path] = len(self.files) + 1
            self.db.execute("INSERT INTO source_files VALUES (?,?)", (self.files[path], path))
        return self.files[path]

    def function(self, name, module, path=None, line=None):
        key = (name, module)
        if key not in self.functions:
            fid = len(self.functions) + 1
            self.functions[key] = fid
            self.db.execute("INSERT INTO functions VALUES (?,?,?,?,?,?,?,?)",
                            (fid, name, None, self.module(module), self.file(path), line,
                             "native", 1))
        return self.functions[key]

    def frame(self, func, path=None, line=None, inline_depth=0):
        """func is (name, module, def_path, def_line)."""
        fid = self.function(*func)
        key = (fid, path, line, inline_depth)
        if key not in self.frames:
            frid = len(self.frames) + 1
            self.frames[key] = frid
            self.db.execute("INSERT INTO frames VALUES (?,?,?,?,?,?,?)",
                            (frid, fid, self.module(func[1]), 0x1000 + frid, inline_depth,
                             self.file(path), line))
        return self.frames[key]

    def stack(self, frames):
        """frames: list of frame ids, outermost first; returns the leaf node id."""
        parent = None
        for depth, fr in enumerate(frames):
            key = (parent, fr)
            if key not in self.stacks:
                sid = len(self.stacks) + 1
                self.stacks[key] = sid
                self.db.execute("INSERT INTO stacks VALUES (?,?,?,?)", (sid, parent, fr, depth))
            parent = self.stacks[key]
        return parent

    def sample(self, thread, stack, time_ns, weight=1):
        count, w = self.samples.get((thread, stack), (0, 0))
        self.samples[(thread, stack)] = (count + 1, w + weight)
        self.timeline.append((time_ns, thread, stack, weight))

    def finish(self, meta, processes, threads):
        self.db.executemany("INSERT INTO samples VALUES (?,?,?,?,?)",
                            [(t, s, c, w, w * INTERVAL_NS)
                             for (t, s), (c, w) in self.samples.items()])
        self.timeline.sort()
        self.db.executemany("INSERT INTO timeline VALUES (?,?,?,?)", self.timeline)
        self.db.executemany("INSERT INTO processes VALUES (?,?,?,?,?,?,?,?,?,?,?,?)", processes)
        self.db.executemany("INSERT INTO threads VALUES (?,?,?,?,?,?,?,?,?,?)", threads)
        weight = sum(w for _, w in self.samples.values())
        count = sum(c for c, _ in self.samples.values())
        meta = dict(meta)
        meta.update({"schema_version": "1", "analysis": "hotspots",
                     "interval_ns": str(INTERVAL_NS), "samples_total": str(count),
                     "weight_total": str(weight)})
        self.db.executemany("INSERT INTO meta VALUES (?,?)", sorted(meta.items()))
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


def known(result_dir, scale=1, source_dir=None):
    """Write result_dir/result.db for KNOWN; scale multiplies every weight (the 'twice' variant
    passes a dict {function: factor} instead)."""
    os.makedirs(result_dir, exist_ok=True)
    b = Builder(os.path.join(result_dir, "result.db"))
    app = (source_dir + "/app.c") if source_dir else APP
    t1 = t2 = 0
    for frames, thread, ms in KNOWN_STACKS:
        ids = []
        for name, line, depth in frames:
            f = F[name]
            if f[2] is not None:
                f = (f[0], f[1], app, f[3])
            ids.append(b.frame(f, app if line else None, line, depth))
        leaf = b.stack(ids)
        factor = scale.get(frames[-1][0], 1) if isinstance(scale, dict) else scale
        for _ in range(ms * factor):
            if thread == 1:
                b.sample(1, leaf, t1 * INTERVAL_NS)
                t1 += 1
            else:
                b.sample(2, leaf, (500 + t2) * INTERVAL_NS)
                t2 += 1
    b.db.execute("INSERT INTO lost VALUES (1, 1, 'buffer', 3, 3)")
    b.db.execute("INSERT INTO streams VALUES ('raw/1000.1001.praw', 1, 1, 4096, 0, 2, 0, NULL)")
    b.db.execute("INSERT INTO streams VALUES ('raw/1000.1002.praw', 1, 2, 1024, 0, 1, 0, NULL)")
    b.finish({"elapsed_ns": str(1250 * INTERVAL_NS), "cpu_count": "2",
              "command_line": "./app", "host": "testhost", "finalization_mode": "full"},
             [(1, 1000, 1, None, "start", 0, "testhost", None, "/tmp/app", "./app", 0,
               1250 * INTERVAL_NS)],
             [(1, 1, 1001, "app", 0, 1250 * INTERVAL_NS, 985 * INTERVAL_NS, 985, 985,
               985 * INTERVAL_NS),
              (2, 1, 1002, "worker", 500 * INTERVAL_NS, 600 * INTERVAL_NS, 15 * INTERVAL_NS,
               15, 15, 15 * INTERVAL_NS)])
    return result_dir


def large(result_dir, nstacks=100000, nsamples=1000000, nfunctions=5000, nthreads=8, seed=1,
          npaths=4000, worst=False):
    """A result of nstacks distinct leaf stacks and nsamples samples (weight 1 each).

    Like real profiles, distinct stacks mostly differ in their innermost frames (the sampled
    pc, the return address in the caller) below a few thousand call paths (npaths). worst=True
    makes every frame of every stack random instead (about 15 tree nodes per stack)."""
    os.makedirs(result_dir, exist_ok=True)
    rnd = random.Random(seed)
    b = Builder(os.path.join(result_dir, "result.db"))
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
