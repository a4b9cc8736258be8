#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Issue 22, item 15: a report carries what its result holds (names, the command line), so it
takes the result's mode, not the umask's. Under umask 022: the reports of a private result
(pcollect's default, -result-mode private) are 0600, text, CSV, HTML and every export; those of
a -result-mode group result 0640; a report written over an existing 0644 file is narrowed to
0600; a difference of a private and a group result is private. The profiled program's output
and exit code are as without pcollect."""
import os
import stat
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2elib  # noqa: E402
from e2elib import check, preport  # noqa: E402

FORMATS = [["-view", "hotspots"], ["-view", "hotspots", "-format", "csv"],
           ["-view", "summary", "-format", "json"], ["-format", "html"],
           ["-format", "callgrind"], ["-format", "speedscope"], ["-format", "folded"],
           ["-format", "chrome"], ["-format", "pstats"]]


def mode_of(path):
    return stat.S_IMODE(os.stat(path).st_mode)


os.umask(0o022)
with e2elib.Workdir("report-mode") as w:
    results = {}
    for tag in ("private", "group"):
        # exit-code 3 prints nothing and ends with 3 (exit-code.c), as alone
        res = e2elib.collect(w, tag, [e2elib.prog("exit-code"), "3"], code=3, stdout="",
                             options=["-result-mode", tag], finalize=True)
        results[tag] = res
        want_dir = 0o700 if tag == "private" else 0o750
        check(mode_of(res) == want_dir, "%s: the result directory is %o" % (tag, want_dir))
    for tag, want in (("private", 0o600), ("group", 0o640)):
        for args in FORMATS:
            out = w.join("%s.%s" % (tag, "-".join(a.lstrip("-") for a in args)))
            preport("-r", results[tag], *args, "-report-output", out)
            check(mode_of(out) == want, "%s %s: the report is %o (%o)"
                  % (tag, " ".join(args), want, mode_of(out)))
    # pcollect -report runs preport: the same.
    out = w.join("pcollect-report.txt")
    e2elib.run_ok([e2elib.tool("pcollect"), "-report", "hotspots", "-r", results["private"],
                   "-report-output", out])
    check(mode_of(out) == 0o600, "pcollect -report: the report is 600 (%o)" % mode_of(out))
    # A file that was there loses what the result would not give.
    out = w.join("old.csv")
    with open(out, "w") as f:
        f.write("old\n")
    os.chmod(out, 0o644)
    preport("-r", results["private"], "-format", "csv", "-report-output", out)
    check(mode_of(out) == 0o600, "an existing 644 file is narrowed to 600 (%o)" % mode_of(out))
    # A difference: the stricter of the two.
    out = w.join("diff.html")
    preport("-r", results["group"], "-r", results["private"], "-format", "html",
            "-report-output", out)
    check(mode_of(out) == 0o600, "a difference of a group and a private result is 600 (%o)"
          % mode_of(out))
