#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Issue 22, item 14: a result's names are data, never commands to the terminal, the
spreadsheet or the file format. The known result (report_synth.known) with hostile names:
a function that sets the terminal's title (OSC), one a spreadsheet would run ("=cmd|..."),
one with a newline, one with a C1 control, a thread that clears the screen, a command line
with ESC. Text views show every control character escaped ("\\x1b"); CSV escapes them too and
puts a quote before formula cells (OWASP), numbers (negative ones of a difference) untouched;
-csv-raw gives the cells as they are; callgrind and folded keep one record a line; the JSON
exports (speedscope, chrome, -format json) and pstats keep the exact names; the HTML page
holds no raw control character."""
import csv
import io
import json
import marshal
import os
import re
import sqlite3
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2elib  # noqa: E402
import report_synth  # noqa: E402
from e2elib import check, preport  # noqa: E402

OSC = "\x1b]0;pwned\x07title_a"
FORMULA = "=cmd|' /C calc'!A0"
NEWLINE = "line_one\nline_two"
C1 = "csi\u009b31mred"
DASH = "-rm_b"
NUMBER = "-42"
THREAD = "\x1b[2Jclear"
NAMES = {"a": OSC, "b": FORMULA, "c": NEWLINE, "helper": C1, "work": DASH, "rec": NUMBER}
# Control characters a terminal acts on: C0 but the line end, DEL, C1.
CONTROL = re.compile("[\x00-\x09\x0b-\x1f\x7f\u0080-\u009f]")


def hostile(res):
    con = sqlite3.connect(os.path.join(res, "result.db"))
    for old, new in NAMES.items():
        con.execute("UPDATE functions SET name = ? WHERE name = ?", (new, old))
    con.execute("UPDATE threads SET name = ? WHERE name = 'worker'", (THREAD,))
    con.execute("UPDATE meta SET value = ? WHERE key = 'command_line'", ("./app \x1b[31m",))
    con.commit()
    con.close()


def no_controls(text, what):
    bad = CONTROL.findall(text)
    check(not bad, "%s: no raw control character (%r)" % (what, bad[:5]))


with e2elib.Workdir("report-escape") as w:
    res = w.join("hostile")
    report_synth.known(res)
    hostile(res)
    twice = w.join("twice")
    report_synth.known(twice, scale=2)
    hostile(twice)

    # Text: every view escapes; the names are still there, readable.
    for view in (["-view", "summary"], ["-view", "hotspots"],
                 ["-view", "hotspots", "-group-by", "thread,function"],
                 ["-view", "top-down", "-threshold", "0"], ["-view", "bottom-up"],
                 ["-view", "callstacks"], ["-view", "caller-callee", "-function", "main"],
                 ["-view", "timeline"]):
        out = preport("-r", res, *view).stdout
        no_controls(out, "text %s" % " ".join(view))
    out = preport("-r", res, "-view", "hotspots", "-group-by", "thread,function").stdout
    check("\\x1b]0;pwned\\x07title_a" in out and "line_one\\nline_two" in out and
          "csi\\xc2\\x9b31mred" in out and "\\x1b[2Jclear" in out,
          "text shows the escaped names")
    out = preport("-r", res, "-view", "summary").stdout
    check("./app \\x1b[31m" in out, "summary: the command line escaped")

    # CSV: control characters escaped, formulas quoted, numbers kept.
    out = preport("-r", res, "-view", "hotspots", "-format", "csv").stdout
    no_controls(out, "csv hotspots")
    fn = {r["Function"]: r for r in csv.DictReader(io.StringIO(out))}
    check("'" + FORMULA in fn and FORMULA not in fn, "csv: the formula cell starts with a quote")
    check("'" + DASH in fn, "csv: a text cell starting with '-' is quoted")
    check(NUMBER in fn, "csv: a name that is a plain number stays (%s)" % NUMBER)
    check("\\x1b]0;pwned\\x07title_a" in fn and "line_one\\nline_two" in fn,
          "csv: control characters escaped")
    diff = preport("-r", twice, "-r", res, "-view", "hotspots", "-format", "csv").stdout
    no_controls(diff, "csv difference")
    negative = [v for r in csv.DictReader(io.StringIO(diff)) for k, v in r.items()
                if k != "Function" and v.startswith("-")]
    check(negative and all(re.fullmatch(r"-[0-9.]+", v) for v in negative),
          "csv difference: %d negative numbers stay numbers (%s)" % (len(negative),
                                                                     negative[:3]))
    raw = preport("-r", res, "-view", "hotspots", "-format", "csv", "-csv-raw").stdout
    fn = {r["Function"] for r in csv.DictReader(io.StringIO(raw))}
    check(FORMULA in fn and OSC in fn and NEWLINE in fn and DASH in fn,
          "csv -csv-raw: the cells as they are")

    # JSON: the exact names (JSON's own escapes).
    out = preport("-r", res, "-view", "hotspots", "-format", "json").stdout
    no_controls(out, "json")
    got = {r["Function"] for r in json.loads(out)["rows"]}
    check(set(NAMES.values()) <= got, "json: exact names")

    # callgrind: a record a line, the names escaped.
    cg = w.join("out.callgrind")
    preport("-r", res, "-format", "callgrind", "-report-output", cg)
    with open(cg, encoding="utf-8", errors="replace") as f:
        text = f.read()
    no_controls(text, "callgrind")
    bad = [ln for ln in text.splitlines() if ln and not re.match(
        r"^(#|[a-z]+:|(c?fn|c?ob|f[lie]|cfi|cfl)=|calls=|[0-9+\-*]|$)", ln)]
    check(not bad, "callgrind: every line a record (%r)" % bad[:3])
    check("line_one\\nline_two" in text, "callgrind: the newline escaped")

    # folded: a stack a line, each ending in its value.
    fo = w.join("out.folded")
    preport("-r", res, "-format", "folded", "-report-output", fo)
    with open(fo, encoding="utf-8", errors="replace") as f:
        text = f.read()
    no_controls(text, "folded")
    check(all(re.search(r" [0-9]+$", ln) for ln in text.splitlines()),
          "folded: every line ends in its value")

    # speedscope, chrome and firefox: JSON with the exact names.
    for fmt, key in (("speedscope", "speedscope"), ("chrome", "chrome"), ("firefox", "firefox")):
        path = w.join("out." + fmt)
        preport("-r", res, "-format", fmt, "-report-output", path)
        with open(path) as f:
            text = f.read()
        no_controls(text, fmt)
        doc = json.loads(text)
        if fmt == "speedscope":
            got = {fr["name"] for fr in doc["shared"]["frames"]}
        elif fmt == "firefox":
            got = set(doc["shared"]["stringArray"])
        else:
            got = {ev.get("name") for ev in doc["traceEvents"]}
        check({OSC, NEWLINE, FORMULA} <= got, "%s: exact names" % fmt)

    # pstats: marshal, the exact names.
    ps = w.join("out.pstats")
    preport("-r", res, "-format", "pstats", "-report-output", ps)
    with open(ps, "rb") as f:
        got = {k[2] for k in marshal.load(f)}
    check({OSC, NEWLINE, FORMULA} <= got, "pstats: exact names")

    # HTML: no raw control character anywhere in the page.
    page = w.join("out.html")
    preport("-r", res, "-format", "html", "-report-output", page)
    with open(page, encoding="utf-8") as f:
        no_controls(f.read(), "html")
