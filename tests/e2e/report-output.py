#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Issue 10, item 10: `preport -report-output` never writes over a file a result owns.
On a real collection: result.db, a raw stream, a metadata file, the job file, a new file
inside raw/, meta/ or log/, reached directly, through '..', through a symbolic link to the
directory, a symbolic link to the file, a dangling link into meta/, a hard link, with the
result given second in a difference report, and before the result is finalized: each is a
usage error (exit 2) naming the file and what it is, and the file is unchanged (nothing is
created). A new report file beside them in the result directory is written."""
import hashlib
import os
import shutil

import e2elib as e

PREPORT = e.tool("preport")


def digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def refused(res, out, what, extra=(), cwd=None, pre=None):
    """preport -r res ... -report-output out: exit 2, the message names out and what."""
    argv = (pre or [PREPORT]) + ["-r", res] + list(extra) + ["-report-output", out]
    before = digest(os.path.realpath(os.path.join(cwd or "", out))) \
        if os.path.exists(os.path.join(cwd or "", out)) else None
    cp = e.run(argv, cwd=cwd)
    e.check(cp.returncode == 2 and ("'%s'" % out) in cp.stderr and what in cp.stderr and
            "will not write the report" in cp.stderr,
            "-report-output %s: refused, exit 2 (%d): %s" % (out, cp.returncode,
                                                          cp.stderr.strip()))
    after = digest(os.path.realpath(os.path.join(cwd or "", out))) \
        if os.path.exists(os.path.join(cwd or "", out)) else None
    e.check(before == after, "-report-output %s: the file is as it was" % out)


with e.Workdir("report-output") as w:
    res = w.join("res")
    r = e.pcollect([e.prog("cpu-split"), "1", "10"], result=res, finalization="full")
    e.check(r.returncode == 0 and os.path.exists(os.path.join(res, "result.db")),
            "pcollect collects and finalizes cpu-split")
    db = os.path.join(res, "result.db")
    stream = sorted(os.listdir(os.path.join(res, "raw")))[0]
    meta = sorted(os.listdir(os.path.join(res, "meta")))[0]
    refused(res, db, "the database (result.db)")
    refused(res, os.path.join(res, "raw", stream), "the raw streams (raw/)")
    refused(res, os.path.join(res, "meta", meta), "the collection metadata (meta/)")
    refused(res, os.path.join(res, "pcollect.job"), "the job file")
    refused(res, os.path.join(res, "log", "report.txt"), "the logs (log/)")
    e.check(not os.path.exists(os.path.join(res, "log", "report.txt")),
            "nothing was created inside log/")
    refused(res, os.path.join(res, "raw", "..", "result.db"), "the database")
    os.symlink(res, w.join("alias"))
    refused(res, w.join("alias", "result.db"), "the database")
    os.symlink(db, w.join("link.txt"))
    refused(res, "link.txt", "the database", cwd=w.path)
    os.symlink(os.path.join(res, "meta", "new.meta"), w.join("dangling.txt"))
    refused(res, "dangling.txt", "the collection metadata", cwd=w.path)
    e.check(not os.path.exists(os.path.join(res, "meta", "new.meta")),
            "the dangling link's target was not created")
    os.link(db, w.join("hard.txt"))
    refused(res, w.join("hard.txt"), "the database (result.db)")
    # VTune's spelling goes the same way.
    refused(res, db, "the database", pre=[e.tool("pcollect"), "-report", "hotspots"])
    # Either result of a difference report.
    other = w.join("other")
    shutil.copytree(res, other)
    refused(other, db, "of result '%s'" % res, extra=["-r", res, "-view", "hotspots"])
    # Not finalized yet: refused before finalizing, and nothing is finalized.
    raw_only = w.join("raw-only")
    shutil.copytree(res, raw_only)
    os.unlink(os.path.join(raw_only, "result.db"))
    refused(raw_only, os.path.join(raw_only, "result.db"), "the database")
    e.check(not os.path.exists(os.path.join(raw_only, "result.db")),
            "the unfinalized result was not finalized over")

    # The database still reads, and a new report beside it is written (twice: its own file).
    out = os.path.join(res, "hotspots.txt")
    for _ in range(2):
        cp = e.run([PREPORT, "-r", res, "-view", "hotspots", "-report-output", out])
        e.check(cp.returncode == 0 and os.path.exists(out),
                "a new report file in the result directory is written (%s)" % cp.stderr.strip())
    with open(out) as f:
        text = f.read()
    e.check("work_sixty" in text, "the report holds the program's functions")
