#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""VTune habits on a real collection: a parallel job's result res.<node> (two simulated
nodes), "pcollect -finalize -r res" / "preport -r res" taking the job as one result, "pcollect
-finalize -r res.<node>" finalizing as pfinalize does, "pcollect -report NAME" reporting as
preport -view does (VTune's report names mapped), and -search-dir's typed form and errors."""
import os
import shutil
import sqlite3
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2elib  # noqa: E402
from e2elib import preport, rows, run_ok as run  # noqa: E402

# A module's symbols cached by an earlier finalization would hide where -search-dir found it.
os.environ["PCOLLECT_NO_CACHE"] = "1"
PCOLLECT = e2elib.tool("pcollect")
PFINALIZE = e2elib.tool("pfinalize")


def collect_node(w, node):
    """cpu-split as the one rank of a job on node: its part, res.NODE. One round of 40 ms
    units (0.4 s; work_ten's phase is 4 intervals, sampled systematically): what is checked
    here is the command line, not the split."""
    env = {"SLURM_JOB_ID": "5151", "SLURM_STEP_ID": "0", "SLURM_PROCID": "0",
           "PCOLLECT_HOSTNAME": node}
    e2elib.collect(w, "res", [e2elib.prog("cpu-split"), "1", "40"], env=env, cwd=w.path)
    return w.join("res." + node)


def main():
    with e2elib.Workdir("report-cli") as w:
        n1, n2 = collect_node(w, "nid00058"), collect_node(w, "nid00059")
        e2elib.check(os.path.isdir(n1) and os.path.isdir(n2), "one result per node: res.<node>")

        # -r res names the job: every res.<host> finalized and reported as one result
        cp = run([PCOLLECT, "-finalize", "-r", w.join("res"), "-q"])
        e2elib.check(all(os.path.exists(os.path.join(d, "result.db")) for d in (n1, n2)),
                     "pcollect -finalize -r res finalizes res.nid00058 and res.nid00059")
        summary = {(r["Section"], r["Metric"]): r["Value"]
                   for r in rows(w.join("res"), "-view", "summary")}
        e2elib.check(summary.get(("Collection", "Host")) == "nid00058, nid00059" and
                     summary.get(("Time", "Processes")) == "2",
                     "preport -r res reports both nodes as one result: %s" % summary)
        cp = run([PFINALIZE, "-r", w.join("nores")], code=2)
        e2elib.check("nores" in cp.stderr, "pfinalize -r of nothing names it: %s" %
                     cp.stderr.strip())
        cp = preport("-r", w.join("nores"), code=2)
        e2elib.check("no 'nores.<host>'" in cp.stderr,
                     "preport -r of nothing says no job is there either: %s" % cp.stderr.strip())

        # pcollect -finalize is pfinalize
        cp = run([PCOLLECT, "-finalize", "-r", n1, "-q"])
        e2elib.check(os.path.exists(os.path.join(n1, "result.db")),
                     "pcollect -finalize -r res.nid00058 writes result.db")
        run([PFINALIZE, "-r", n2, "-q"])
        a = rows(n1, "-view", "hotspots")
        e2elib.check({r["Function"] for r in a} >= {"work_sixty", "work_thirty", "work_ten"},
                     "the finalized result has the program's functions")

        # pcollect -report NAME is preport -view NAME, VTune's names mapped
        for vtune, view, extra in [("hotspots", "hotspots", []),
                                   ("summary", "summary", []),
                                   ("top-down", "top-down", []),
                                   ("callstacks", "callstacks", []),
                                   ("bottom-up", "bottom-up", []),
                                   ("gprof-cc", "caller-callee", ["-function", "work_ten"]),
                                   ("caller-callee", "caller-callee", [])]:
            got = run([PCOLLECT, "-report", vtune, "-r", n1, "-format", "csv"] + extra).stdout
            want = preport("-r", n1, "-view", view, "-format", "csv", *extra).stdout
            if view == "summary":  # nothing differs but time-free figures; compare the rows' keys
                got = [l.split(",")[:2] for l in got.splitlines()]
                want = [l.split(",")[:2] for l in want.splitlines()]
            e2elib.check(got == want and got, "pcollect -report %s is preport -view %s" %
                         (vtune, view))
        got = run([PCOLLECT, "-r", n1, "-report=hotspots", "-group-by", "thread"]).stdout
        e2elib.check("TID" in got, "pcollect -r DIR -report=hotspots with preport's options")
        cp = run([PCOLLECT, "-report", "hotspot", "-r", n1], code=2)
        e2elib.check("did you mean 'hotspots'" in cp.stderr and
                     cp.stderr.startswith("pcollect: "), "pcollect -report hotspot: nearest name")
        for sep in (["--"], []):
            res = w.join("echo%d" % len(sep))
            cp = run([PCOLLECT, "-collect", "hotspots", "-r", res, "-q",
                      "-finalization-mode=none"] + sep + ["/bin/echo", "-report", "hotspots"])
            e2elib.check(cp.stdout.strip() == "-report hotspots" and os.path.isdir(res),
                         "a program's own -report is the program's (%s)" %
                         ("after --" if sep else "without --"))
        cp = run([PCOLLECT, "-report", "hotspots", "-finalize", "-r", n1], code=2)
        e2elib.check("exclude each other" in cp.stderr, "-report and -finalize together: refused")

        # -search-dir: VTune's typed form, and its mistakes
        prog = e2elib.prog("cpu-split")
        bindir = os.path.dirname(prog)
        moved = w.join("moved")
        os.makedirs(moved)
        shutil.copy(prog, moved)
        cp = run([PCOLLECT, "-collect", "hotspots", "-r", w.join("sd"), "-q",
                  "-search-dir", "bin:=", prog], code=2)
        e2elib.check("-search-dir bin:=DIR" in cp.stderr and prog in cp.stderr and
                     not os.path.exists(w.join("sd")),
                     "-search-dir bin:= then a space: the right spelling, nothing collected")
        cp = run([PCOLLECT, "-collect", "hotspots", "-r", w.join("sd"), "-q",
                  "-search-dir", w.join("nope"), "--", prog], code=2)
        e2elib.check("does not exist" in cp.stderr and not os.path.exists(w.join("sd")),
                     "-search-dir that does not exist: refused before the run")
        cp = run([PFINALIZE, "-r", n2, "-search-dir", "bin:=" + w.join("nope")], code=2)
        e2elib.check("'%s' does not exist" % w.join("nope") in cp.stderr,
                     "pfinalize -search-dir bin:=missing: refused")
        cp = run([PFINALIZE, "-r", n2, "-search-dir", "bn:=" + bindir], code=2)
        e2elib.check("unknown search directory type 'bn:'" in cp.stderr,
                     "pfinalize -search-dir bn:=: an unknown type")
        cp = run([PFINALIZE, "-r", n2, "-source-search-dir", w.join("nope")], code=2)
        e2elib.check("does not exist" in cp.stderr, "pfinalize -source-search-dir missing: refused")
        cp = preport("-r", n2, "-view", "source", "-source-object", "function=work_ten",
                     "-source-search-dir", w.join("nope"), code=2)
        e2elib.check("does not exist" in cp.stderr, "preport -source-search-dir missing: refused")

        # the typed forms work: bin:= finds a moved binary; src:= is recorded for preport
        srcdir = w.join("srcs")
        os.makedirs(srcdir)
        run([PFINALIZE, "-r", n2, "-q", "-search-dir", "bin:=" + moved,
             "-search-dir", "src:=" + srcdir])
        con = sqlite3.connect(os.path.join(n2, "result.db"))
        found = con.execute("SELECT resolved_path FROM modules WHERE name = 'cpu-split'") \
            .fetchone()[0]
        e2elib.check(found == os.path.join(moved, "cpu-split"),
                     "bin:=DIR: the binary read from there (%s)" % found)
        m = dict(con.execute("SELECT key, value FROM meta WHERE key IN ('search_dirs', "
                             "'source_search_dirs')"))
        con.close()
        e2elib.check(m.get("search_dirs") == moved and m.get("source_search_dirs") == srcdir,
                     "bin:=DIR searches binaries, src:=DIR is a source directory")
        r = e2elib.pcollect([prog, "1", "10"], result=w.join("typed"), finalization="full",
                            options=["-search-dir", "all:=" + moved])
        e2elib.check(r.returncode == 0 and os.path.exists(w.join("typed", "result.db")),
                     "pcollect -search-dir all:=DIR collects and finalizes")


if __name__ == "__main__":
    main()
