#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Issue 26: a parallel job finalized under mpirun into one job database (DIR.job.db) that
preport reads instead of the node databases. A simulated job of 64 ranks over 8 nodes
(tests/progs/job-synth: the raw streams of real ranks, no MPI run) is finalized by `mpirun
-np 2 pfinalize -r res` (Open MPI), each rank its share of the nodes. Known answers: the job
database is written once, by one rank; preport's summary, -view mpi and -group-by rank read
from it are byte for byte what it prints from the node databases; each rank's CPU Time, MPI
Calls and Bytes Sent are the generator's exactly (MPI Time within the ms preport prints); a
node finalized again makes preport read the node databases (the job database is out of
date), a single-process pfinalize -r res writes it again; and with every node database
overwritten in place (same size, time and inode) preport still answers the same: it reads one
file. No program is profiled here, so there is no output of one to compare."""
import json
import os
import sqlite3
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2elib as e  # noqa: E402
import mpilib  # noqa: E402

RANKS, NODES, SAMPLES, STACKS, SITES = 64, 8, 300, 200, 20
VIEWS = {"summary": [], "mpi": ["-view", "mpi"],
         "rank": ["-view", "hotspots", "-group-by", "rank"]}


def report(res, view):
    """The view's text, and whether preport said it read the job database (-verbose)."""
    cp = e.preport("-r", res, "-verbose", *VIEWS[view])
    return cp.stdout, "reading job database '%s.job.db' (%d node results)" % (res, NODES) in \
        cp.stderr


def reports(res, job_db):
    out = {}
    for name in VIEWS:
        out[name], read = report(res, name)
        e.check(read == job_db, "%s: preport reads %s" % (
            name, "the job database" if job_db else "the node databases"))
    return out


with e.Workdir("mpi-job-db") as w:
    mpirun = mpilib.launcher("openmpi")
    res = w.join("res")
    job_db = res + ".job.db"
    cp = e.run_ok([e.prog("job-synth"), res, str(RANKS), str(NODES), str(SAMPLES), str(STACKS),
                   str(SITES)])
    plan = json.loads(cp.stdout)
    cp = e.run([mpirun, "--oversubscribe", "-np", "2", e.tool("pfinalize"), "-r", res, "-j", "1"],
               env=mpilib.env("openmpi"), timeout=120)
    e.check(cp.returncode == 0, "mpirun -np 2 pfinalize -r res exits 0 (%d: %s)"
            % (cp.returncode, cp.stderr[-1500:]))
    written = cp.stderr.count("job database '%s' written (%d node results)" % (job_db, NODES))
    e.check(written == 1, "the job database is written once, by one rank (%d times)" % written)
    with sqlite3.connect(job_db) as db:
        parts = db.execute("SELECT count(*) FROM job_parts").fetchone()[0]
        nodes = db.execute("SELECT count(DISTINCT node) FROM samples").fetchone()[0]
    e.check(parts == NODES and nodes == NODES,
            "the job database holds the %d nodes (%d listed, %d in samples)"
            % (NODES, parts, nodes))

    # The same answers from the job database as from the node databases.
    from_job = reports(res, True)
    os.rename(job_db, job_db + ".away")
    from_nodes = reports(res, False)
    os.rename(job_db + ".away", job_db)
    for name in VIEWS:
        e.check(from_job[name] == from_nodes[name] and len(from_job[name]) > 100,
                "%s: the same from the job database as from the node databases:\n%s\n---\n%s"
                % (name, from_job[name][:1500], from_nodes[name][:1500]))

    # Known answers per rank.
    rows = e.check_job_ranks(res, plan, RANKS)
    sent = sum(int(rows[p["rank"]]["Bytes Sent:Self"]) for p in plan)
    want = RANKS * sum(4096 * (1 + (k % 10 == 0)) for k in range(SITES) if k % 6 == 1)
    e.check(sent == want, "Bytes Sent over the ranks: %d, known %d" % (sent, want))

    # A node finalized again: the job database is out of date, the node databases are read.
    e.finalize(res + ".node03")
    again, read = report(res, "rank")
    e.check(not read and again == from_job["rank"],
            "a node finalized again: preport reads the node databases (%s), answers the same"
            % read)
    e.finalize(res)

    # Every node database overwritten in place, its size, time and inode kept: preport still
    # answers the same, so it reads the job database alone.
    for node in range(NODES):
        db = "%s.node%02d/result.db" % (res, node)
        st = os.stat(db)
        with open(db, "r+b") as f:
            f.write(b"\0" * st.st_size)
        os.utime(db, ns=(st.st_atime_ns, st.st_mtime_ns))
    last = reports(res, True)
    for name in VIEWS:
        e.check(last[name] == from_job[name],
                "%s: the same with the node databases destroyed (one file read)" % name)
