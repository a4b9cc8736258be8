#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The difference page (preport -r A -r B -format html) on two synthetic runs of known budgets
(report_synth.split): B makes beta 0.2 s slower, removes gamma (0.15 s) and adds delta (0.1 s).
The page's data gives each function's self time in both results, the largest-changes table
lists beta +0.200s, gamma -0.150s (removed), delta +0.100s (added) in that order with their
share points, the legend states the colour's unit (seconds, or share points when chosen), and
the reverse view (removed code: widths of Result 1) draws gamma, which Result 2's widths do
not. Numbers are checked on the page's embedded JSON; one headless Chromium session checks the
table's DOM, the legend and the reverse view.

Runs under /usr/bin/python3, whose python3-selenium drives Chromium (chromium-driver); exits 77
naming what is missing."""
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import browser  # noqa: E402

By, Select, WebDriverWait = browser.require_selenium()
import e2elib  # noqa: E402
import report_synth as synth  # noqa: E402

from e2elib import preport  # noqa: E402


BEFORE = {"alpha": 500, "beta": 300, "gamma": 150}  # CPU ms
AFTER = {"alpha": 500, "beta": 500, "delta": 100}
# (function, change in s, status): ordered by the absolute change
WANT = [("beta", 0.200, ""), ("gamma", -0.150, "removed"), ("delta", 0.100, "added")]


def share(budgets, name):
    return 100.0 * budgets.get(name, 0) / sum(budgets.values())


def page_data(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    m = re.search(r'<script[^>]*id="pcollect-data"[^>]*>(.*?)</script>', text, re.S)
    if not m:
        e2elib.fail("diff.html: no embedded data")
    return json.loads(m.group(1))


def check_data(d):
    """The page's own numbers: each function's self per result (what the table is made of),
    and gamma's frame carried in the tree with Result 1's time (the reverse view's width)."""
    k = next(i for i, m in enumerate(d["metrics"]) if m["name"] == "CPU Time")
    nm = len(d["metrics"])
    fn = {d["names"][f[0]]: i for i, f in enumerate(d["functions"])}
    for name in ("alpha", "beta", "gamma", "delta"):
        got = [d["hot"]["self"][side * nm + k][fn[name]] / 1e9 for side in (0, 1)]
        want = [BEFORE.get(name, 0) / 1e3, AFTER.get(name, 0) / 1e3]
        e2elib.check(all(abs(g - w) < 1e-6 for g, w in zip(got, want)),
                     "data: %s's self %s s in Result 1 and 2 (want %s)" % (name, got, want))
    sc = d["metrics"][k]["scale"]
    g_nodes = [i for i, f in enumerate(d["tree"]["fn"]) if f == fn["gamma"]]
    r1 = sum(d["tree"]["self"][k][i] for i in g_nodes) * sc / 1e9
    r2 = sum(d["tree"]["self"][nm + k][i] for i in g_nodes) * sc / 1e9
    e2elib.check(g_nodes and abs(r1 - 0.150) < 1e-6 and r2 == 0,
                 "data: removed gamma in the tree with Result 1's 0.150 s, 0 in Result 2 "
                 "(%s, %s)" % (r1, r2))


def check_page(d, path):
    d.get("file://" + os.path.abspath(path))
    WebDriverWait(d, 30).until(
        lambda x: x.execute_script("return document.body.getAttribute('data-ready')") == "1")
    js = d.execute_script
    rows = js("""return [...document.querySelectorAll('#changes-table tbody tr')]
        .map(tr => [...tr.children].map(td => td.textContent));""")
    head = js("return [...document.querySelectorAll('#changes-table thead th')]"
              ".map(th => th.textContent);")
    got = [dict(zip(head, r)) for r in rows]
    e2elib.check([r["Function"] for r in got] == [w[0] for w in WANT],
                 "table: the changes by their size, beta, gamma, delta (got %s)"
                 % [r.get("Function") for r in got])
    for r, (name, ch, status) in zip(got, WANT):
        pts = share(AFTER, name) - share(BEFORE, name)
        e2elib.check(r["Change"] == "%+.3fs" % ch and r["Status"] == status and
                     r["Result 1"] == "%.3fs" % (BEFORE.get(name, 0) / 1e3) and
                     r["Result 2"] == "%.3fs" % (AFTER.get(name, 0) / 1e3) and
                     abs(float(r["Change (points)"]) - pts) < 0.051,
                     "table: %s %s (want %+.3fs %s, %+.1f points)" % (name, r, ch, status, pts))
    legend = js("return document.getElementById('diff-legend').textContent;")
    e2elib.check("in seconds" in legend, "legend: the colour's change in seconds: %r" % legend)
    e2elib.check(not js("return window.pcollectReport.frameRect('gamma');"),
                 "Result 2's widths: removed gamma not drawn")
    Select(d.find_element(By.ID, "side")).select_by_visible_text(
        "removed code: widths of Result 1")
    r = js("return window.pcollectReport.frameRect('gamma');")
    width = js("return window.pcollectReport.canvasWidth();")
    e2elib.check(r and abs(r["w"] / width - 150 / 950) < 0.01,
                 "reverse view: gamma drawn at 150/950 of the width (%s of %s)" % (r, width))
    Select(d.find_element(By.ID, "colour-by")).select_by_value("share")
    legend = js("return document.getElementById('diff-legend').textContent;")
    e2elib.check("share points" in legend and "removed code" in legend,
                 "legend: the colour's change in share points when chosen: %r" % legend)
    shots = os.path.join(e2elib.BUILD, "meson-logs", "report-html-diff")
    os.makedirs(shots, exist_ok=True)
    d.save_screenshot(os.path.join(shots, "diff-reverse.png"))


def main():
    with e2elib.Workdir("report-html-diff") as w:
        a = synth.split(w.join("a"), BEFORE)
        b = synth.split(w.join("b"), AFTER)
        path = w.join("diff.html")
        preport("-r", a, "-r", b, "-format", "html", "-report-output", path)
        check_data(page_data(path))
        reason = browser.missing()
        if reason:
            e2elib.skip(reason, needs=["chromium", "chromium-driver"])
        d = browser.chrome()
        try:
            check_page(d, path)
        finally:
            d.quit()


if __name__ == "__main__":
    main()
