#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Robustness: a target killed with SIGKILL mid-run, a stream cut in the middle of a chunk,
a 1 ms program, a directory that is not a result (exit 2), an interrupted finalize leaving the
previous database in place."""
import os
import signal
import sqlite3
import struct
import subprocess
import time

import e2elib as e

with e.Workdir("fin-robust") as w:
    # 1. The target SIGKILLs itself after its loops: finalize what was written.
    res = w.join("killed")
    r = e.pcollect([e.prog("fin-lines"), "300", "kill"], result=res)
    e.check(r.returncode != 0, "the target died of SIGKILL (pcollect returned %d)" % r.returncode)
    f = e.pfinalize(res)
    e.check(f.returncode == 0, "pfinalize of a killed target exits 0 (%s)" % f.stderr.strip())
    print(f.stderr)
    n = e.db_rows(res, "SELECT COALESCE(SUM(count), 0) FROM samples")[0][0]
    raw = e.db_rows(res, "SELECT SUM(samples) FROM streams")[0][0]
    e.check(n == raw, "every sample written is in the database (%d of %d)" % (n, raw))

    # 2. A stream cut inside a chunk: the valid chunks are kept, the damage is counted.
    res = w.join("cut")
    r = e.pcollect([e.prog("fin-lines"), "200"], result=res,
                   options=["-knob", "sampling-interval=1"])
    e.check(r.returncode == 0, "pcollect runs fin-lines")
    f = e.pfinalize(res, ["-quiet"])
    full = e.db_rows(res, "SELECT SUM(count) FROM samples")[0][0]
    streams = [os.path.join(res, "raw", s) for s in os.listdir(os.path.join(res, "raw"))]
    big = max(streams, key=os.path.getsize)
    # Cut in the middle of the stream's largest chunk, its samples (docs/raw-format.md: chunk
    # headers of 24 bytes, magic then size, on 8-byte boundaries after the file header). Not
    # the file's last bytes: the last chunk may be a short one without samples (the thread's
    # end, closed apart), and cutting it loses none.
    with open(big, "rb") as fh:
        data = fh.read()
    chunks, off = [], struct.unpack_from("<H", data, 14)[0]
    while off + 24 <= len(data):
        magic, size = struct.unpack_from("<II", data, off)
        if magic != 0x4b484350:
            off += 8
            continue
        chunks.append((size, off))
        off += (24 + size + 7) // 8 * 8
    e.check(chunks, "the stream %s has chunks" % big)
    size, at = max(chunks)
    with open(big, "r+b") as fh:
        fh.truncate(at + 24 + size // 2)
    f = e.pfinalize(res)
    e.check(f.returncode == 0, "pfinalize of a cut stream exits 0")
    print(f.stderr)
    cut = e.db_rows(res, "SELECT SUM(count) FROM samples")[0][0] or 0
    e.check(0 <= cut < full, "fewer samples after the cut (%d < %d)" % (cut, full))
    dmg = e.db_rows(res, "SELECT bytes_skipped, chunks_damaged, problem FROM streams"
                         " WHERE path LIKE ?", ("%" + os.path.basename(big),))
    e.check(dmg and dmg[0][0] > 0 and dmg[0][1] >= 1 and dmg[0][2],
            "the streams table records the damage (%s)" % (dmg,))
    e.check("damaged:" in f.stderr, "the summary reports the damaged stream")

    # 3. A program that runs for a millisecond: a valid database, maybe without samples.
    res = w.join("short")
    r = e.pcollect(["/bin/true"], result=res)
    e.check(r.returncode == 0, "pcollect runs /bin/true")
    f = e.pfinalize(res)
    e.check(f.returncode == 0, "pfinalize of a 1 ms run exits 0 (%s)" % f.stderr.strip())
    e.check(e.db_rows(res, "SELECT value FROM meta WHERE key = 'schema_version'") == [("2",)],
            "the database is complete (schema_version is set)")

    # 4. Not a result: a clear message and exit 2.
    os.mkdir(w.join("empty"))
    f = e.pfinalize(w.join("empty"))
    e.check(f.returncode == 2 and "is not a result directory" in f.stderr,
            "a directory that is not a result: exit 2 (%d: %s)" % (f.returncode, f.stderr.strip()))
    f = e.pfinalize(w.join("nonexistent"))
    e.check(f.returncode == 2, "a missing directory: exit 2")

    # 5. An interrupted finalize leaves the previous database untouched.
    res = w.join("cut")
    before = e.db_rows(res, "SELECT SUM(count) FROM samples")[0][0]
    ino = os.stat(os.path.join(res, "result.db")).st_ino
    p = subprocess.Popen([e.tool("pfinalize"), "-r", res, "-quiet"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(0.005)
    p.send_signal(signal.SIGKILL)
    p.wait()
    db = os.path.join(res, "result.db")
    con = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
    ok = con.execute("PRAGMA integrity_check").fetchone()[0]
    after = con.execute("SELECT SUM(count) FROM samples").fetchone()[0]
    con.close()
    e.check(ok == "ok" and after == before,
            "after a killed finalize, result.db is whole (integrity %s, %s samples)" % (ok, after))
    e.check(not any(n == "result.db-journal" for n in os.listdir(res)), "no journal left")
