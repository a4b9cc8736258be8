#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A result from elsewhere is data, not instructions (issue 22, items 10, 11 and 13).

source: a result whose source_files name a root-only canary file (and /etc/shadow) makes no
view or format read it: not the source view, not the HTML page; a result made here by this
user still shows its source where the build left it; another user's result (made by
'nobody' with pcollect, then edited) and a copy do not; -source-search-dir and the result's
archive/src/ are read, a '..' path and a link in archive/src/ are not.
schema: a result.db with a recursive view or a trigger in place of our tables, or a view or
trigger beside them, is refused at once by every view, naming the file and the cause (exit
1), and the database is left unchanged.
output: -report-output that is a symbolic link (to a file of another user) or a FIFO with
no reader is refused at once (exit 2) and the link's target is left unchanged; a regular
file is replaced whole.

Argument: the part to run (source, schema, output)."""
import os
import shutil
import sqlite3
import stat
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2elib as e  # noqa: E402

CANARY = "CANARY-7f3a9c-never-to-be-read"
TIMEOUT = 20  # s for one preport: a hang fails the test, it does not stall it


def preport_run(*args):
    """preport ARGS, its CompletedProcess; a hang fails the test."""
    try:
        return e.run([e.tool("preport")] + [str(a) for a in args], timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        e.fail("preport %s: still running after %d s" % (" ".join(map(str, args)), TIMEOUT))


def nobody_ids():
    import pwd
    pw = pwd.getpwnam("nobody")
    return pw.pw_uid, pw.pw_gid


def as_nobody():
    uid, gid = nobody_ids()
    os.setgroups([])
    os.setgid(gid)
    os.setuid(uid)


def retarget(db, path):
    """Point the source file of medium (report-split.c) at path, as a hostile result would."""
    con = sqlite3.connect(db)
    with con:
        con.execute("UPDATE source_files SET path = ? WHERE id = (SELECT source_file_id FROM "
                    "functions WHERE name = 'medium')", (path,))
    con.close()


def source_outputs(w, res, tag, extra=()):
    """What preport shows of medium's source: the source view and the HTML page, together."""
    out = []
    for fmt in ("csv",):
        cp = preport_run("-r", res, "-view", "source", "-source-object", "function=medium",
                         "-format", fmt, *extra)
        e.check(cp.returncode == 0, "%s: -view source -format %s runs (%d: %s)"
                % (tag, fmt, cp.returncode, cp.stderr.strip()[-300:]))
        out.append(cp.stdout)
    page = w.join(tag + ".html")
    cp = preport_run("-r", res, "-format", "html", "-report-output", page, *extra)
    e.check(cp.returncode == 0, "%s: -format html runs (%d: %s)"
            % (tag, cp.returncode, cp.stderr.strip()[-300:]))
    with open(page, errors="replace") as f:
        out.append(f.read())
    return "\n".join(out)


def part_source(w):
    if os.geteuid() != 0:
        e.skip("needs root: another user's result is made by 'nobody'")
    os.chmod(w.path, 0o711)
    prog = e.prog("report-split")
    secret = w.join("secret.c")
    with open(secret, "w") as f:
        f.writelines("%s line %d\n" % (CANARY, i) for i in range(1, 80))
    os.chmod(secret, 0o600)  # root's: nobody cannot read it, root can

    own = e.collect(w, "own", [prog, "once", "40"], stdout="", finalize=True)
    text = source_outputs(w, own, "own")
    e.check("burn:medium" in text, "own result: its source read where the build left it")

    # Another user's result, made here by 'nobody', then pointed at root's secret.
    home = w.join("nobody")
    os.mkdir(home)
    os.chown(home, *nobody_ids())
    theirs = os.path.join(home, "res")
    r = e.pcollect([prog, "once", "40"], result=theirs, finalization="full",
                   preexec_fn=as_nobody)
    e.check(r.returncode == 0 and os.stat(theirs).st_uid == nobody_ids()[0],
            "nobody's result made (%d: %s)" % (r.returncode, r.stderr.strip()[-300:]))
    retarget(os.path.join(theirs, "result.db"), secret)
    text = source_outputs(w, theirs, "theirs")
    e.check(CANARY not in text, "another user's result: the file it names is not read (source "
            "view, HTML)")
    e.check("not found" in text, "another user's result: the source is said to be missing")

    # A copy of one's own result pointed at the secret and at /etc/shadow.
    for tag, path in (("copy-secret", secret), ("copy-shadow", "/etc/shadow")):
        copy = w.join(tag)
        shutil.copytree(own, copy, symlinks=True)
        retarget(os.path.join(copy, "result.db"), path)
        text = source_outputs(w, copy, tag)
        e.check(CANARY not in text and "root:" not in text,
                "%s: a copied result's path (%s) is not read" % (tag, path))

    # Places the user chose: -source-search-dir, and the result's archive/src/.
    copy = w.join("copy-secret")
    src = os.path.join(e.SOURCE, "tests", "progs", "report-split.c")
    retarget(os.path.join(copy, "result.db"), "/elsewhere/tree/report-split.c")
    sdir = w.join("srcs")
    os.makedirs(sdir)
    shutil.copy(src, sdir)
    text = source_outputs(w, copy, "search-dir", ["-source-search-dir", sdir])
    e.check("burn:medium" in text, "a copy: its source read from -source-search-dir")
    arch = os.path.join(copy, "archive", "src", "elsewhere", "tree")
    os.makedirs(arch)
    shutil.copy(src, arch)
    text = source_outputs(w, copy, "archive")
    e.check("burn:medium" in text, "a copy: its source read from its archive/src/")
    os.unlink(os.path.join(arch, "report-split.c"))
    os.symlink(secret, os.path.join(arch, "report-split.c"))
    text = source_outputs(w, copy, "archive-link")
    e.check(CANARY not in text, "a link in archive/src/ to another file is not followed")
    shutil.rmtree(os.path.join(copy, "archive"))
    os.makedirs(os.path.join(copy, "archive"))
    os.symlink(os.path.dirname(secret), os.path.join(copy, "archive", "src"))
    retarget(os.path.join(copy, "result.db"), "/secret.c")
    text = source_outputs(w, copy, "archive-dir-link")
    e.check(CANARY not in text, "archive/src as a link to another directory is not followed")
    # A path that climbs out of the search directory.
    retarget(os.path.join(copy, "result.db"), "/x/../../%s/secret.c" % os.path.basename(w.path))
    text = source_outputs(w, copy, "climb", ["-source-search-dir", sdir])
    e.check(CANARY not in text, "a path with '..' is not looked for in -source-search-dir")


# Every view and format a hostile result must not hang, crash or mislead.
VIEWS = [["-view", v] for v in ("summary", "hotspots", "top-down", "bottom-up", "callstacks",
                                "timeline", "mpi")] + [
    ["-view", "caller-callee", "-function", "medium"],
    ["-view", "source", "-source-object", "function=medium"],
    ["-format", "html"], ["-format", "csv", "-view", "hotspots"],
    ["-format", "json", "-view", "top-down"]]

# (tag, SQL that makes a pristine result.db hostile, word the refusal must say)
HOSTILE_SCHEMAS = [
    ("recursive-view",
     "ALTER TABLE frames RENAME TO frames_real; CREATE VIEW frames AS WITH RECURSIVE "
     "r(id, function_id, module_id, address, inline_depth, source_file_id, line) AS "
     "(SELECT * FROM frames_real UNION ALL SELECT id + 1, function_id, module_id, address, "
     "inline_depth, source_file_id, line FROM r) SELECT * FROM r", "view 'frames'"),
    ("view-for-meta",
     "ALTER TABLE meta RENAME TO meta_real; CREATE VIEW meta AS WITH RECURSIVE "
     "r(key, value) AS (SELECT key, value FROM meta_real UNION ALL SELECT key || 'x', value "
     "FROM r) SELECT * FROM r", "view 'meta'"),
    ("view-beside", "CREATE VIEW extra AS WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL "
     "SELECT x + 1 FROM r) SELECT x FROM r", "view 'extra'"),
    ("trigger", "CREATE TABLE log_(x); CREATE TRIGGER grow AFTER INSERT ON log_ BEGIN "
     "INSERT INTO log_ VALUES (new.x + 1); END", "trigger 'grow'"),
]


def sha(path):
    import hashlib
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def part_schema(w):
    prog = e.prog("report-split")
    own = e.collect(w, "own", [prog, "once", "40"], stdout="", finalize=True)
    for tag, sql, word in HOSTILE_SCHEMAS:
        res = w.join(tag)
        shutil.copytree(own, res)
        db = os.path.join(res, "result.db")
        con = sqlite3.connect(db)
        con.executescript(sql)
        con.close()
        before = sha(db)
        for args in VIEWS:
            cp = preport_run("-r", res, *args, "-report-output", w.join("out"))
            e.check(cp.returncode == 1 and db in cp.stderr and word in cp.stderr,
                    "%s: preport %s refused at once, naming the file and its %s (%d: %s)"
                    % (tag, " ".join(args), word, cp.returncode, cp.stderr.strip()[-300:]))
        e.check(sha(db) == before, "%s: the database is left as it was" % tag)


def part_output(w):
    if os.geteuid() != 0:
        e.skip("needs root: the link is made by 'nobody'")
    os.chmod(w.path, 0o711)
    prog = e.prog("report-split")
    own = e.collect(w, "own", [prog, "once", "40"], stdout="", finalize=True)
    victim = w.join("victim")
    with open(victim, "w") as f:
        f.write("root's own file\n")
    shared = w.join("shared")  # a sticky world-writable directory, as /tmp
    os.mkdir(shared)
    os.chmod(shared, 0o1777)
    theirs = os.path.join(shared, "report.html")
    r = e.run(["ln", "-s", victim, theirs], preexec_fn=as_nobody)
    e.check(r.returncode == 0 and os.lstat(theirs).st_uid == nobody_ids()[0],
            "nobody's link made in the shared directory")
    mine = w.join("mine.txt")
    os.symlink(victim, mine)
    fifo = w.join("fifo")
    os.mkfifo(fifo)
    for out, what in ((theirs, "another user's symbolic link"), (mine, "a symbolic link"),
                      (fifo, "a FIFO with no reader"), (w.path, "a directory")):
        for args in (["-view", "hotspots"], ["-format", "html"], ["-format", "csv"]):
            cp = preport_run("-r", own, *args, "-report-output", out)
            e.check(cp.returncode == 2 and "will not write the report to '%s'" % out in
                    cp.stderr, "%s %s: refused at once, exit 2 (%d: %s)"
                    % (what, " ".join(args), cp.returncode, cp.stderr.strip()[-300:]))
    with open(victim) as f:
        e.check(f.read() == "root's own file\n", "the links' target is left unchanged")
    e.check(os.path.islink(theirs) and os.path.islink(mine), "the links are left in place")
    plain = w.join("plain.txt")
    with open(plain, "w") as f:
        f.write("AN-OLDER-REPORT\n" * 10000)
    for args in (["-view", "hotspots"], ["-format", "html"]):
        cp = preport_run("-r", own, *args, "-report-output", plain)
        with open(plain) as f:
            text = f.read()
        e.check(cp.returncode == 0 and "medium" in text and "AN-OLDER-REPORT" not in text,
                "a regular file is replaced whole (%s)" % " ".join(args))
    left = [n for n in os.listdir(w.path) + os.listdir(shared) if ".tmp." in n]
    e.check(not left, "no temporary file left behind (%s)" % left)


PARTS = {"source": part_source, "schema": part_schema, "output": part_output}

if len(sys.argv) != 2 or sys.argv[1] not in PARTS:
    e.fail("usage: report-hostile.py %s" % "|".join(PARTS))
with e.Workdir("hostile-" + sys.argv[1]) as w:
    PARTS[sys.argv[1]](w)
