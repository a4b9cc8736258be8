#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Issue 10, item 12: a collection on a full file system harms nothing and says so.
The result goes to a small tmpfs the test mounts in a mount namespace of its own (as root;
elsewhere the test is skipped). The program writes its own file elsewhere.
  - Full at the start (a few KiB left): the program exits and prints as without the
    collector (the data counter, mapped by every process, was a hole whose first store was a
    SIGBUS in the program: exit 135); pcollect names what it could not write, with the
    system's error.
  - Room for the first windows only: the stream stops where it cannot grow; the program is
    unchanged; pcollect says the file system is full; finalized elsewhere, the samples it
    could not take are lost for reason disk-full, and the summaries say so."""
import atexit
import os
import shutil
import subprocess
import sys
import tempfile

import e2elib as e

if os.environ.get("PCOLLECT_TEST_MOUNT_NS") != "1":
    # A mount namespace of its own: the tmpfs goes away with the test, whatever happens.
    if os.geteuid() != 0 or not shutil.which("unshare"):
        e.skip("mounting a small tmpfs needs root and unshare(1)")
    env = dict(os.environ, PCOLLECT_TEST_MOUNT_NS="1")
    cp = subprocess.run(["unshare", "--mount", "--propagation", "private", "true"])
    if cp.returncode != 0:
        e.skip("unshare --mount is not permitted here")
    os.execvpe("unshare", ["unshare", "--mount", "--propagation", "private", sys.executable,
                           os.path.abspath(__file__)], env)

KIB = 1024
# What fsize-work writes and prints, as it does alone (fsize-work.c: 16 blocks of 4096 'z'):
# known, so it is not run alone first (its whole CPU burn again).
FILE = b"z" * (16 * 4096)
OUT = "file=%d\ndone\n" % len(FILE)


def unmount(d):
    e.run(["umount", d])
    os.rmdir(d)


def tmpfs(size_kib):
    d = tempfile.mkdtemp(prefix="pcollect-tmpfs.")
    cp = e.run(["mount", "-t", "tmpfs", "-o", "size=%dk" % size_kib, "tmpfs", d])
    if cp.returncode != 0:
        os.rmdir(d)
        e.skip("cannot mount a tmpfs: %s" % cp.stderr.strip())
    atexit.register(unmount, d)
    return d


def fill(d, leave_kib):
    """Fill the file system of d but leave_kib KiB."""
    st = os.statvfs(d)
    free = st.f_bavail * st.f_frsize
    with open(os.path.join(d, "fill"), "wb") as f:
        f.write(b"\0" * max(free - leave_kib * KIB, 0))


def on_fs(w, tag, fs, argv, options=()):
    """fsize-work (argv) under pcollect -r FS/res: the exit, output and file it has alone
    (FILE, OUT)."""
    res = os.path.join(fs, "res")
    r = e.pcollect(argv, result=res, options=list(options), quiet=False)
    e.check(r.returncode == 0 and r.stdout == OUT,
            "%s: exit code and stdout as without the collector (%d %r)"
            % (tag, r.returncode, r.stdout))
    with open(argv[1], "rb") as b:
        e.check(b.read() == FILE, "%s: the program's own file is whole" % tag)
    return res, r


with e.Workdir("disk-full") as w:
    # Full from the start: a few KiB left for the directories.
    fs = tmpfs(512)
    fill(fs, 12)
    res, r = on_fs(w, "full", fs, [e.prog("fsize-work"), w.join("out-full"), "300"])
    e.check("No space left on device" in r.stderr,
            "full: pcollect names what it could not write, with the cause: %s"
            % [x for x in r.stderr.splitlines() if "space" in x or "full" in x])

    # Room for the first windows only (a thread's is 256 KiB): the stream stops, reason disk-full.
    fs = tmpfs(512)
    res, r = on_fs(w, "fills", fs, [e.prog("fsize-work"), w.join("out-fills"), "3000"],
                 options=["-knob", "sampling-interval=1", "-knob", "stack-depth=1024"])
    e.check("is full (No space left on device)" in r.stderr,
            "fills: pcollect says the file system is full: %s"
            % [x for x in r.stderr.splitlines() if "full" in x])
    copy = w.join("res")
    shutil.copytree(res, copy)
    f = e.pfinalize(copy)
    e.check(f.returncode == 0, "fills: the copy finalizes (%s)" % f.stderr.strip()[-200:])
    lost = e.db_rows(copy, "SELECT coalesce(sum(count), 0) FROM lost WHERE reason = "
                           "'disk-full'")[0][0]
    notes = e.db_rows(copy, "SELECT detail FROM notes WHERE kind = 'stream-stopped'")
    e.check(lost > 0 and "disk-full" in f.stderr and notes and
            "No space left on device" in notes[0][0],
            "fills: %d samples lost for reason disk-full, the stop noted (%s)" % (lost, notes))
    p = e.run([e.tool("preport"), "-r", copy])
    e.check("file system of the result was full" in p.stdout,
            "fills: preport's summary says the file system was full")
