#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Issue 10, items 6-9: damaged or odd results are never trusted silently.
One collection of cpu-split (60/30/10, sampled at 1 ms) is copied and damaged in scripted ways;
pfinalize must detect each, say so in its summary and the streams table, and keep every sum
true: never more CPU time sampled than the threads used, never a wrapped sum.
  6  header flips (interval_ns, pid, generation) with and without the checksum made again,
     and a chunk's base_ns: detected, and the known answer kept (the file name and meta/ tell
     the truth);
  7  a copied stream and a repeated chunk: counted once; a chunk whose sample weights were
     changed and its checksum made again: the thread's samples are capped at the CPU time
     it measured, and named;
  8  one flipped byte in the first chunk of samples: only that chunk's samples are lost; later
     samples whose stack was defined there keep their weight as [damaged stack]; damage to the
     process stream costs only its module records; the summary names damage, never the clock;
  9  a FIFO or /dev/zero in place of a stream, a meta/ file and result.db: a clear message
     naming the file, no hang (every run under a timeout)."""
import os
import shutil
import sqlite3
import subprocess

import e2elib as e
from rawfile import RawFile

SHARES = {"work_sixty": 60, "work_thirty": 30, "work_ten": 10}
TIMEOUT = 60
ROUNDS = 5


def weights(res):
    """Sample weight by leaf function, and the CPU time sampled and used (ns)."""
    rows = e.db_leaf_weights(res)
    sampled, used = e.db_rows(res, "SELECT COALESCE(SUM(time_ns), 0), COALESCE(SUM(cpu_ns), 0)"
                                   " FROM threads")[0]
    return rows, sampled, used


def sane(res, tag):
    """No sum over 100% of what the threads used (beyond what sampling may add: e2elib's
    tolerance), none negative."""
    w, sampled, used = weights(res)
    stats = e.db_sampled(res)
    tol = stats.time_tolerance_ns(sampled)
    e.check(all(v >= 0 for v in w.values()) and 0 <= sampled <= used + tol,
            "%s: %.3f s sampled of %.3f s used (+ %.3f s): no sum over 100%%"
            % (tag, sampled / 1e9, used / 1e9, tol / 1e9))
    return w, sampled, used


def shares_ok(res, w, tag):
    total = sum(w.get(k, 0) for k in SHARES)
    e.check(total > 0, "%s: the work functions have samples" % tag)
    stats = e.db_sampled(res)
    # Each work function runs once a round: ROUNDS stretches of CPU time.
    for k, v in SHARES.items():
        e.check_share(stats, w.get(k, 0) / total, v / 100.0, "%s: %s" % (tag, k),
                      stretches=ROUNDS)


def problem(res, name):
    rows = e.db_rows(res, "SELECT problem FROM streams WHERE path LIKE ?", ("%/" + name,))
    return rows[0][0] if rows and rows[0][0] else ""


def thread_stream(res):
    raw = os.path.join(res, "raw")
    names = sorted(n for n in os.listdir(raw) if n.endswith(".praw") and ".proc." not in n)
    return os.path.join(raw, names[0])


def proc_stream(res):
    raw = os.path.join(res, "raw")
    return os.path.join(raw, [n for n in os.listdir(raw) if n.endswith(".proc.praw")][0])


def copy_result(w, tag):
    """The pristine raw result again, to damage, as W/TAG."""
    return e.copy_result(w.join("pristine"), w.join(tag))


with e.Workdir("damage") as w:
    base = e.collect(w, "base", [e.prog("cpu-split"), ROUNDS], interval=1)
    shutil.copytree(base, w.join("pristine"))
    e.finalize(base, (), timeout=TIMEOUT)
    w0, sampled0, used0 = sane(base, "undamaged")
    shares_ok(base, w0, "undamaged")
    total0 = sum(w0.values())

    # ---- 6: header fields -----------------------------------------------------------------
    for field, value in (("interval_ns", 1 << 40), ("pid", 4242), ("generation", 7)):
        for fix in (False, True):
            tag = "%s-%s" % (field, "crc-made-again" if fix else "flipped")
            res = copy_result(w, tag)
            rf = RawFile(thread_stream(res))
            rf.set_header(recompute_crc=fix, **{field: value})
            rf.save()
            err = e.finalize(res, (), timeout=TIMEOUT)
            wd, sampled, used = sane(res, tag)
            p = problem(res, os.path.basename(rf.path))
            e.check(p and "damaged:" in err,
                    "%s: the summary and the streams table name it: %s" % (tag, p))
            # The file name (pid, tid, generation) and meta/ (interval) tell the truth.
            e.check(sum(wd.values()) == total0, "%s: every sample kept with its weight (%d of %d)"
                    % (tag, sum(wd.values()), total0))
            shares_ok(res, wd, tag)

    # A chunk's base_ns is covered by its checksum: that chunk is dropped, named.
    res = copy_result(w, "base_ns")
    rf = RawFile(thread_stream(res))
    off, _size, _seq = rf.chunks()[1]
    rf.flip(off + 16 + 5)
    rf.save()
    err = e.finalize(res, (), timeout=TIMEOUT)
    sane(res, "base_ns")
    e.check("checksum mismatch" in problem(res, os.path.basename(rf.path)),
            "base_ns: the flipped chunk fails its checksum (%s)"
            % problem(res, os.path.basename(rf.path)))

    # ---- 7: copies --------------------------------------------------------------------------
    res = copy_result(w, "copied-stream")
    src = thread_stream(res)
    hdr = RawFile(src).header()
    copy = os.path.join(res, "raw", "%d.%d.praw" % (hdr["pid"], hdr["tid"] + 100000))
    shutil.copyfile(src, copy)
    err = e.finalize(res, (), timeout=TIMEOUT)
    wd, sampled, used = sane(res, "copied-stream")
    e.check(sum(wd.values()) == total0, "copied stream: counted once (%d, %d)"
            % (sum(wd.values()), total0))
    e.check("a copy of" in problem(res, os.path.basename(copy)) and "ignored:" in err,
            "copied stream: the copy is ignored and named (%s)"
            % problem(res, os.path.basename(copy)))

    res = copy_result(w, "repeated-chunk")
    rf = RawFile(thread_stream(res))
    chunks = rf.chunks()
    e.check(len(chunks) >= 3, "the thread stream has several chunks (%d)" % len(chunks))
    rf.append(rf.chunk_bytes(1))
    rf.save()
    err = e.finalize(res, (), timeout=TIMEOUT)
    wd, sampled, used = sane(res, "repeated-chunk")
    e.check(sum(wd.values()) == total0, "repeated chunk: counted once (%d, %d)"
            % (sum(wd.values()), total0))
    e.check("duplicate" in problem(res, os.path.basename(rf.path)),
            "repeated chunk: named (%s)" % problem(res, os.path.basename(rf.path)))
    dmg = e.db_rows(res, "SELECT chunks_damaged FROM streams WHERE path LIKE ?",
                    ("%/" + os.path.basename(rf.path),))
    e.check(dmg == [(1,)], "repeated chunk: counted in streams.chunks_damaged (%s)" % dmg)

    # A chunk whose sample weights were changed and its checksum made again: the checksums
    # cannot tell, the thread's CPU time can (its samples stood for more than it used).
    res = copy_result(w, "weights-rechecksummed")
    rf = RawFile(thread_stream(res))
    big = max(range(len(rf.chunks())), key=lambda i: rf.chunks()[i][1])
    n = rf.set_sample_weights(big, 100)
    rf.fix_chunk_crc(big)
    rf.save()
    err = e.finalize(res, (), timeout=TIMEOUT)
    wd, sampled, used = sane(res, "weights-rechecksummed")
    p = problem(res, os.path.basename(rf.path))
    e.check(n > 10 and "its thread used" in p and "scaled down to the thread's time" in p and
            "damaged:" in err,
            "weights changed in %d samples, checksum made again: caught by the thread's CPU "
            "time, capped and named (%s)" % (n, p))

    # ---- 8: one flipped byte costs what it touches ------------------------------------------
    res = copy_result(w, "flipped-byte")
    path = thread_stream(res)
    dump = e.load_streams(w.join("pristine"))
    rf = RawFile(path)
    chunks = rf.chunks()
    first = [c for c in chunks if c[1] > 64][0]  # the first chunk of samples (0 is the start)
    rf.flip(first[0] + 24 + first[1] // 2)
    rf.save()
    # What that chunk held, read from the undamaged copy by position.
    mine = [s for s in dump if s.path.endswith(os.path.basename(path))][0]
    err = e.finalize(res, (), timeout=TIMEOUT)
    wd, sampled, used = sane(res, "flipped-byte")
    lost = total0 - sum(wd.values())
    damaged = wd.get("[damaged stack]", 0)
    e.check(0 < lost < 0.75 * total0,
            "flipped byte: only the damaged chunk's samples are lost (%d of %d)"
            % (lost, total0))
    e.check(damaged > 0, "flipped byte: later samples whose stack was in it keep their weight "
                         "as [damaged stack] (%d)" % damaged)
    e.check("damaged:" in err and "timer signals came late" not in err and
            "task-clock event stopped early" not in err,
            "flipped byte: the summary names damage, not the clock: %s"
            % [l for l in err.splitlines() if "damaged" in l or "undersampled" in l])

    res = copy_result(w, "process-stream")
    rf = RawFile(proc_stream(res))
    off, size, _seq = rf.chunks()[0]
    rf.flip(off + 24 + size // 2)
    rf.save()
    err = e.finalize(res, (), timeout=TIMEOUT)
    wd, sampled, used = sane(res, "process-stream")
    e.check(sum(wd.values()) == total0,
            "process stream damaged: every sample kept (%d of %d)" % (sum(wd.values()), total0))
    e.check("damaged:" in err and "undersampled" not in err,
            "process stream damaged: named as damage, no thread blamed")

    # ---- 9: not regular files ---------------------------------------------------------------
    res = copy_result(w, "fifo")
    fifo = os.path.join(res, "raw", "99.99.praw")
    os.mkfifo(fifo)
    os.symlink("/dev/zero", os.path.join(res, "raw", "98.98.praw"))
    os.mkfifo(os.path.join(res, "meta", "1.meta"))
    os.symlink("/dev/zero", os.path.join(res, "meta", "2.meta"))
    err = e.finalize(res, (), timeout=TIMEOUT)
    wd, sampled, used = sane(res, "fifo")
    e.check(sum(wd.values()) == total0, "FIFO and /dev/zero streams: the rest is read whole")
    e.check("99.99.praw' not read: not a regular file" in err and
            "98.98.praw' not read: a symbolic link" in err,
            "FIFO and /dev/zero streams: named with their cause: %s"
            % [l for l in err.splitlines() if "not read" in l])
    e.check("1.meta': not a regular file" in err and "2.meta': a symbolic link" in err,
            "FIFO and /dev/zero metadata: named with their cause")
    for kind in ("fifo", "zero"):
        db = os.path.join(res, "result.db")
        os.replace(db, db + ".good") if os.path.exists(db) else None
        if kind == "fifo":
            os.mkfifo(db)
        else:
            os.symlink("/dev/zero", db)
        try:
            p = e.run([e.tool("preport"), "-r", res], timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            e.fail("preport hung on a %s in place of result.db" % kind)
        e.check(p.returncode != 0 and "result.db" in p.stderr and
                "not a regular file" in p.stderr,
                "preport refuses a %s in place of result.db: %s" % (kind, p.stderr.strip()))
        os.unlink(db)
        os.replace(db + ".good", db)
    con = sqlite3.connect(os.path.join(res, "result.db"))
    con.close()
