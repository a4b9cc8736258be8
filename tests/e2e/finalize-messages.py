#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Issue 10, item 12: every message says what really happened.
  - a result with no samples says why: its streams are damaged (not "less than one sampling
    interval"), the program died of a signal before its first sample, or it used less CPU
    time than one interval;
  - samples not taken past -data-limit are counted as lost for that reason: the summaries say
    the limit stopped sampling, never that timer signals came late;
  - -data-limit under one chunk of raw data (1e-7) is a usage error naming the smallest;
  - a database whose schema_version is newer (99) or no version at all (99x) is refused with
    what it says; raw streams of a newer format are refused by pfinalize naming the version;
  - a collection still running: preport refuses to finalize it (it would stay a partial
    result), pfinalize finalizes what is there and says so, and preport then warns;
  - 100 threads of a few ms each, sampled at a fraction of their CPU time: an aggregate
    undersampled line with the knob to use.
Programs run under the collector exit and print exactly as without it."""
import glob
import os
import re
import signal
import sqlite3
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2elib as e  # noqa: E402
from rawfile import RawFile  # noqa: E402

PREPORT = e.tool("preport")


def empty_says(res, tag, *words):
    """preport names the cause (words), not the old catch-all ('... or sampling failed')."""
    p = e.run([PREPORT, "-r", res])
    e.check(p.returncode == 1 and "holds no samples" in p.stderr and
            all(x in p.stderr for x in words) and "or sampling failed" not in p.stderr,
            "%s: preport says why there are no samples: %s" % (tag, p.stderr.strip()))


def schema(w, base):
    db = os.path.join(base, "result.db")
    for value, words in (("99", "schema version 99, newer than this preport reads (2)"),
                         ("99x", "schema version '99x', which no pfinalize writes")):
        res = w.join("schema-" + value)
        os.makedirs(res)
        with open(db, "rb") as a, open(os.path.join(res, "result.db"), "wb") as b:
            b.write(a.read())
        con = sqlite3.connect(os.path.join(res, "result.db"))
        con.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (value,))
        con.commit()
        con.close()
        p = e.run([PREPORT, "-r", res, "-view", "hotspots"])
        e.check(p.returncode == 1 and words in p.stderr,
                "schema_version=%s: refused: %s" % (value, p.stderr.strip()))


def raw_version(w, base):
    res = w.join("raw-version")
    os.makedirs(os.path.join(res, "raw"))
    for path in glob.glob(os.path.join(base, "raw", "*.praw")):
        rf = RawFile(path)
        rf.set_header(version=99, recompute_crc=True)
        rf.save(os.path.join(res, "raw", os.path.basename(path)))
    f = e.pfinalize(res)
    e.check(f.returncode == 1 and "raw stream format version 99, newer than this pfinalize "
            "reads (1 to 2)" in f.stderr,
            "streams of format 99: pfinalize refuses, naming both versions: %s"
            % f.stderr.strip())


def running(w):
    """crash join: two workers burn, then wait to be killed; meanwhile the result is read."""
    res = w.join("running")
    argv = [e.prog("crash"), "join", "50"]
    p = subprocess.Popen([e.tool("pcollect"), "-collect", "hotspots", "-r", res, "-quiet",
                          "-finalization-mode=none", "--"] + argv, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=dict(os.environ,
                                                                    **e.tool_env()))
    seen = 0
    while seen < 2:
        line = p.stderr.readline()
        if not line:
            e.fail("crash join ended before both workers burnt their CPU")
        seen += bool(re.match(r"(one|two)=\d+", line))
    q = e.run([PREPORT, "-r", res])
    e.check(q.returncode == 1 and "still being collected (pcollect, pid %d, is running)"
            % p.pid in q.stderr and not os.path.exists(os.path.join(res, "result.db")),
            "running: preport refuses to finalize it, naming pcollect: %s" % q.stderr.strip())
    f = e.pfinalize(res)
    e.check(f.returncode == 0 and "still being collected" in f.stderr,
            "running: pfinalize finalizes what is there and says so: %s"
            % [x for x in f.stderr.splitlines() if "collected" in x])
    q = e.run([PREPORT, "-r", res, "-view", "hotspots"])
    e.check(q.returncode == 0 and "finalized while it was still being collected" in q.stderr,
            "running: preport warns that the result was finalized during the collection")
    child = int(e.run(["pgrep", "-P", str(p.pid)]).stdout.split()[0])
    os.kill(child, signal.SIGTERM)
    p.communicate(timeout=60)
    # pcollect ends by its program's TERM itself, as the program did (docs/pcollect.md)
    e.check(p.returncode == -signal.SIGTERM,
            "running: the program ends as killed, and pcollect by the same signal (%d)"
            % p.returncode)
    f = e.pfinalize(res)
    q = e.run([PREPORT, "-r", res, "-view", "hotspots"])
    e.check(f.returncode == 0 and "still being collected" not in f.stderr + q.stderr,
            "running: once it ended, finalized again without a warning")


with e.Workdir("messages") as w:
    # A run to damage and to edit. What the programs below print alone is known (cpu-split.c,
    # crash.c, fsize-work.c): they are not run a second time to learn it.
    base = e.collect(w, "base", [e.prog("cpu-split"), "1", "20"], finalization="full",
                     quiet=False, stdout="rounds=1\n")

    # ---- no samples: damage, a crash before the first sample, a short run ----------------
    dmg = w.join("damaged")
    os.makedirs(os.path.join(dmg, "raw"))
    for path in glob.glob(os.path.join(base, "raw", "*.praw")):
        rf = RawFile(path)
        for off, size, _seq in rf.chunks():
            rf.flip(off + 24 + size // 2)
        rf.save(os.path.join(dmg, "raw", os.path.basename(path)))
    empty_says(dmg, "every chunk damaged", "raw streams could not be read",
               "checksum mismatch")
    res = e.collect(w, "abort", [e.prog("crash"), "abort", "0"], finalization="full",
                    interval=100, quiet=False, code=128 + signal.SIGABRT, stdout="worked\n")
    empty_says(res, "abort before the first sample", "died of signal 6",
               "before its first sample")
    res = e.collect(w, "short", [e.prog("cpu-split"), "1", "0.1"], finalization="full",
                    interval=50, quiet=False, stdout="rounds=1\n")
    empty_says(res, "5 ms of CPU at 50 ms", "less than one sampling interval (50 ms)",
               "-knob sampling-interval")

    # ---- -data-limit -----------------------------------------------------------------------
    # Deep stacks at 1 ms under the smallest limit: it is reached after about 80 samples
    # (0.33 s of CPU time on a quiet machine), and the rest of 0.8 s is lost to it
    res = e.collect(w, "data-limit", [e.prog("fsize-work"), w.join("out"), "800"],
                    interval=1, options=["-data-limit", "0.03125", "-knob", "stack-depth=1024"],
                    finalization="full", quiet=False, stdout="file=%d\ndone\n" % (64 * 1024))
    e.check(re.search(r"lost: +\d+ samples \([0-9.]+ s of CPU time\), data-limit", res.stderr)
            and "came late" not in res.stderr and "undersampled" not in res.stderr,
            "data limit: pfinalize counts the samples it stopped, blames no clock: %s"
            % [x for x in res.stderr.splitlines() if x.startswith("  ")])
    summary = e.run([PREPORT, "-r", res]).stdout
    e.check(re.search(r"Lost Samples \(data-limit\): +[1-9]", summary) and
            "reached -data-limit" in summary,
            "data limit: preport's summary counts them and says why")
    for value in ("1e-7", "0.03"):
        p = e.run([e.tool("pcollect"), "-collect", "hotspots", "-data-limit", value, "--",
                   "true"])
        e.check(p.returncode == 2 and "the smallest limit is 0.03125 MB" in p.stderr,
                "-data-limit %s: refused, naming the smallest: %s" % (value, p.stderr.strip()))

    # ---- versions ---------------------------------------------------------------------------
    schema(w, base)
    raw_version(w, base)

    # ---- a collection still running ---------------------------------------------------------
    running(w)

    # ---- many short threads -----------------------------------------------------------------
    # What it prints alone is known (threads-work.c): not run a second time to learn it.
    res = e.collect(w, "short-threads", [e.prog("threads-work"), "many", "100", "8"],
                    finalization="full", quiet=False, stdout="threads=100\n")
    m = re.search(r"undersampled: (\d+) threads of ([0-9.]+) ms of CPU time each on average: "
                  r"[0-9.]+ s of their [0-9.]+ s covered by samples \(([0-9.]+)%\); (.*)",
                  res.stderr)
    e.check(m and int(m.group(1)) >= 100 and "-knob sampling-interval" in m.group(4),
            "100 threads of 8 ms: one undersampled line for them, with the knob: %s"
            % [x for x in res.stderr.splitlines() if "undersampled" in x])
