#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Issue 26: a job's summary, -view mpi and -view hotspots -group-by rank read the short
stacks pfinalize writes into the job database (agg_stacks, agg_samples: a node's samples on
the frames those views read), not every rank's stacks and samples. A simulated job of 64
ranks over 8 nodes (tests/progs/job-synth, no MPI run) finalized by `pfinalize -r res`.
Known answers: every node has its short stacks, far fewer samples rows than its full ones;
the three views, as text, CSV and JSON, take the short path (preport -verbose says so) and
print byte for byte what they print from the full tables, read from a copy of the job
database without the short stacks (as an older pfinalize wrote it: preport falls back to the
full tables, and says so) and from the node databases; each rank's CPU Time and MPI Calls
are the generator's exactly (MPI Time within the ms printed); a view the short stacks do not serve (-view hotspots, -view
top-down, a filter) reads the full tables. No program is profiled here, so there is no
output of one to compare."""
import json
import os
import shutil
import sqlite3
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2elib as e  # noqa: E402

RANKS, NODES, SAMPLES, STACKS, SITES = 64, 8, 400, 300, 24
VIEWS = {"summary": [], "mpi": ["-view", "mpi"],
         "rank": ["-view", "hotspots", "-group-by", "rank"]}
FORMATS = {"text": [], "csv": ["-format", "csv"], "json": ["-format", "json"]}
SHORT = "reading the short stacks of job database"
NO_SHORT = "has no short stacks of every node: reading its full stacks and samples"


def report(res, args):
    """(stdout, stderr) of preport -verbose on res."""
    cp = e.preport("-r", res, "-verbose", *args)
    return cp.stdout, cp.stderr


with e.Workdir("job-short-stacks") as w:
    res = w.join("res")
    job_db = res + ".job.db"
    cp = e.run_ok([e.prog("job-synth"), res, str(RANKS), str(NODES), str(SAMPLES), str(STACKS),
                   str(SITES)])
    plan = json.loads(cp.stdout)
    e.finalize(res, options=("-quiet", "-j", "2"))
    with sqlite3.connect(job_db) as db:
        agg = db.execute("SELECT count(*), sum(samples), sum(stacks) FROM job_agg").fetchone()
        full = db.execute("SELECT (SELECT count(*) FROM samples), "
                          "(SELECT count(*) FROM stacks)").fetchone()
    e.check(agg[0] == NODES, "every node has its short stacks (%d of %d)" % (agg[0], NODES))
    e.check(agg[1] * 2 < full[0] and agg[2] * 10 < full[1],
            "short samples and stacks are few: %d of %d samples rows, %d of %d stacks"
            % (agg[1], full[0], agg[2], full[1]))

    # The full path: a copy of the job database without the short stacks (an older
    # pfinalize's), then the node databases alone.
    fast = {}
    for view, args in VIEWS.items():
        for fmt, fargs in FORMATS.items():
            out, err = report(res, args + fargs)
            e.check(SHORT in err, "%s %s: preport reads the short stacks:\n%s"
                    % (view, fmt, err[-800:]))
            e.check(len(out) > 100, "%s %s: an answer (%d bytes)" % (view, fmt, len(out)))
            fast[view, fmt] = out
    shutil.copy(job_db, job_db + ".new")
    with sqlite3.connect(job_db) as db:
        db.execute("DROP TABLE job_agg")
        db.execute("DROP TABLE agg_stacks")
        db.execute("DROP TABLE agg_samples")
    for view, args in VIEWS.items():
        for fmt, fargs in FORMATS.items():
            out, err = report(res, args + fargs)
            e.check(SHORT not in err and NO_SHORT in err and
                    "reading job database '%s' (%d node results)" % (job_db, NODES) in err,
                    "%s %s: an older job database: its full tables read, and said:\n%s"
                    % (view, fmt, err[-800:]))
            e.check(out == fast[view, fmt],
                    "%s %s: the short stacks answer as the full tables:\n%s\n---\n%s"
                    % (view, fmt, fast[view, fmt][:1500], out[:1500]))
    os.rename(job_db, job_db + ".old")
    for view, args in VIEWS.items():
        out, err = report(res, args)
        e.check(SHORT not in err and out == fast[view, "text"],
                "%s: the short stacks answer as the node databases" % view)
    os.rename(job_db + ".new", job_db)

    # Known answers per rank, from the short stacks.
    e.check_job_ranks(res, plan, RANKS)

    # Views that read frames further up the stacks: the full tables.
    for args in (["-view", "hotspots"], ["-view", "top-down"],
                 ["-view", "mpi", "-filter", "rank=3"], ["-time-filter", "0:1"]):
        _, err = report(res, args)
        e.check(SHORT not in err and "reading job database" in err,
                "%s: the full tables of the job database" % " ".join(args))
