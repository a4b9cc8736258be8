#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Results of the previous database schema (1, before metrics) still report, with the same
numbers as schema 2, and pfinalize writes them again in schema 2; a newer schema is refused.

Two schema-1 databases: the known synthetic result built from tests/e2e/schema-v1.sql (the
frozen old schema), and a real collection whose schema-2 database is rewritten in the old
layout (samples.weight and time_ns, the timeline's weights) as the pfinalize of schema 1
wrote it for the same streams."""
import os
import shutil
import sqlite3
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2elib  # noqa: E402
import report_synth as synth  # noqa: E402
from e2elib import preport, rows, run_ok as run  # noqa: E402

VIEWS = [
    ["-view", "summary"],
    ["-view", "hotspots"],
    ["-view", "hotspots", "-group-by", "thread,source-line"],
    ["-view", "top-down", "-threshold", "0"],
    ["-view", "top-down", "-group-by", "thread"],
    ["-view", "bottom-up", "-threshold", "0"],
    ["-view", "caller-callee", "-threshold", "0"],
    ["-view", "callstacks", "-threshold", "0"],
    ["-view", "hotspots", "-time-filter", "0:0.4"],
]


def same_views(old, new, label, views=VIEWS):
    for args in views:
        a, b = rows(old, *args), rows(new, *args)
        if args[1] == "summary":  # the result directory's name differs, rightly
            a = [r for r in a if r["Metric"] != "Result Directory"]
            b = [r for r in b if r["Metric"] != "Result Directory"]
        e2elib.check(a == b and a, "%s: %s as in schema 2" % (label, " ".join(args)))


def schema_of(res):
    con = sqlite3.connect(os.path.join(res, "result.db"))
    v = con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0]
    con.close()
    return int(v)


def downgrade(res):
    """Rewrite res/result.db (schema 2, CPU Time only) in the layout of schema 1."""
    db = os.path.join(res, "result.db")
    old = db + ".v1"
    sql = synth.schema_sections(1)
    new = sqlite3.connect(old)
    new.executescript(sql["tables"])
    new.execute("ATTACH ? AS v2", (db,))
    interval = int(new.execute("SELECT value FROM v2.meta WHERE key = 'interval_ns'")
                   .fetchone()[0])
    for table in ["processes", "threads", "modules", "source_files", "functions", "frames",
                  "stacks", "lost", "streams", "python_notes"]:
        cols = [r[1] for r in new.execute("PRAGMA table_info(%s)" % table)]
        new.execute("INSERT INTO %s (%s) SELECT %s FROM v2.%s" %
                    (table, ",".join(cols), ",".join(cols), table))
    new.execute("INSERT INTO meta SELECT key, CASE key WHEN 'schema_version' THEN '1' "
                "ELSE value END FROM v2.meta")
    cpu = "(SELECT id FROM v2.metrics WHERE name = 'CPU Time')"
    new.execute("INSERT INTO samples SELECT thread_id, stack_id, count, value / ?, value "
                "FROM v2.samples WHERE metric_id = %s" % cpu, (interval,))
    new.execute("INSERT INTO timeline SELECT time_ns, thread_id, stack_id, value / ? "
                "FROM v2.timeline WHERE metric_id = %s" % cpu, (interval,))
    new.commit()
    new.execute("DETACH v2")
    new.executescript(sql["symbol_indexes"] + sql["sample_indexes"])
    new.close()
    os.replace(old, db)


def main():
    with e2elib.Workdir("report-schema") as w:
        # the known result, written in both schemas
        v1 = synth.known(w.join("known-v1"), schema=1)
        v2 = synth.known(w.join("known-v2"))
        e2elib.check(schema_of(v1) == 1 and schema_of(v2) == 2, "synthetic results of each schema")
        same_views(v1, v2, "known result in schema 1")
        d = rows(v1, "-r", v2, "-view", "hotspots")
        e2elib.check(all(float(r["CPU Time:Self:Difference"]) == 0 for r in d),
                     "difference of a schema-1 and a schema-2 result of the same data: none")

        # a real collection, its database in schema 1, then finalized again (two rounds of
        # cpu-split: 0.8 s of CPU time, half of it after the time filter's 0.5 s whatever the
        # load)
        res = w.join("real")
        r = e2elib.pcollect([e2elib.prog("cpu-split"), "2"], result=res)
        if r.returncode != 0:
            e2elib.fail("pcollect cpu-split: exit %d\n%s" % (r.returncode, r.stderr))
        run([e2elib.tool("pfinalize"), "-r", res, "-q"])
        e2elib.check(schema_of(res) == 2, "pfinalize writes schema 2")
        now = w.join("real-v2")
        os.makedirs(now)
        shutil.copy(os.path.join(res, "result.db"), now)
        downgrade(res)
        e2elib.check(schema_of(res) == 1, "the real result rewritten in schema 1")
        # the time filter from 0.5 s: a real run's first 0.4 s may hold no sample at all on a
        # busy machine (seen under the sanitizers: 11.8 s elapsed for 2 s of CPU time), and
        # the views must agree on rows, not on none
        views = VIEWS[:-1] + [["-view", "hotspots", "-time-filter", "0.5:"]]
        same_views(res, now, "real result in schema 1", views)
        hs = {x["Function"]: float(x["CPU Time:Self"]) for x in rows(res, "-view", "hotspots")}
        e2elib.check(hs.get("work_sixty", 0) > hs.get("work_thirty", 0) > 0,
                     "schema 1: CPU Time read from samples.time_ns")
        run([e2elib.tool("pfinalize"), "-r", res, "-q"])
        e2elib.check(schema_of(res) == 2, "pfinalize -r on a schema-1 result writes schema 2")
        same_views(res, now, "finalized again", views)

        # a schema newer than preport reads
        future = w.join("future")
        os.makedirs(future)
        shutil.copy(os.path.join(v2, "result.db"), future)
        con = sqlite3.connect(os.path.join(future, "result.db"))
        con.execute("UPDATE meta SET value = '3' WHERE key = 'schema_version'")
        con.commit()
        con.close()
        cp = preport("-r", future, code=1)
        e2elib.check("schema version 3, newer than this preport reads (2)" in cp.stderr,
                     "a newer schema is refused: %s" % cp.stderr.strip().splitlines()[0])


if __name__ == "__main__":
    main()
