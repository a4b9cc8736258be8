#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The HTML report at scale: its size and the time headless Chromium takes to show it, on a
synthetic result of 1M samples and 100k distinct stacks; and the screenshot of docs/.

Usage: bench/report-html.py [BUILD_DIR] [--stacks N] [--samples N] [--runs N] [--keep DIR]
       bench/report-html.py [BUILD_DIR] --screenshot docs/report-html.png

The budget (issue 25): under 5 MB and under 1 s from navigation to the first complete
drawing, its flame graph, trees and sunburst included (the end of views.js:
window.pcollectReport.renderedAt, measured from the navigation's start), the median of --runs
loads. preport's own time to write the page is printed beside. --screenshot profiles the bundled demo (tests/progs/demo.c), selects its
heaviest function and saves the page as PNG. Runs under /usr/bin/python3 (python3-selenium,
chromium, chromium-driver). Run it on a quiet machine: the figures are wall times.
"""
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "e2e"))
import browser  # noqa: E402

if browser.need_selenium() or browser.missing():
    sys.exit("report-html: %s" % (browser.need_selenium() or browser.missing()))
import report_synth  # noqa: E402

sys.path.insert(0, HERE)
import benchlib  # noqa: E402

from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

BUDGET_BYTES = 5 << 20
BUDGET_S = 1.0


def load(d, path):
    """Seconds from navigation to the end of the page's script (its first full drawing)."""
    d.get("about:blank")
    d.get("file://" + os.path.abspath(path))
    WebDriverWait(d, 120).until(
        lambda x: x.execute_script("return document.body.getAttribute('data-ready')") == "1")
    return d.execute_script("return window.pcollectReport.renderedAt;") / 1000.0


def preport(build, *args):
    t0 = time.perf_counter()
    subprocess.run([os.path.join(build, "report", "preport")] + list(args), check=True,
                   stdout=subprocess.DEVNULL)
    return time.perf_counter() - t0


def screenshot(build, out):
    work = tempfile.mkdtemp(prefix="pcollect-html-shot.")
    res = os.path.join(work, "demo")
    subprocess.run([os.path.join(build, "collector", "pcollect"), "-collect", "hotspots", "-r",
                    res, "-quiet", "--", os.path.join(build, "tests", "progs", "demo")],
                   check=True, stdout=subprocess.DEVNULL)
    page = os.path.join(work, "demo.html")
    preport(build, "-r", res, "-format", "html", "-report-output", page)
    d = browser.chrome(1400, 1150)
    try:
        load(d, page)
        # Select the heaviest function: a click on its frame, as a user would.
        name = d.execute_script("""const D = JSON.parse(document.getElementById('pcollect-data')
            .textContent); const s = D.hot.self[D.metrics.findIndex(m => m.main)];
            let b = 0; s.forEach((v, i) => { if (v > s[b]) b = i; });
            return D.names[D.functions[b][0]];""")
        browser.click_frame(d, d.execute_script(
            "return window.pcollectReport.frameRect(arguments[0]);", name))
        d.execute_script("document.getElementById('reset').click();"
                         "document.querySelector('#summary details').open = false;"
                         "window.scrollTo(0, 0);")
        d.save_screenshot(out)
    finally:
        d.quit()
        shutil.rmtree(work, ignore_errors=True)
    print("screenshot of the demo's report, %s selected: %s" % (name, out))


def main():
    ap = benchlib.synth_parser("directory for the synthetic result (reused when there)")
    ap.add_argument("--screenshot", help="write the demo's report as PNG here and stop")
    a = ap.parse_args()
    build = os.path.abspath(a.build)
    if a.screenshot:
        screenshot(build, a.screenshot)
        return
    work = a.keep or tempfile.mkdtemp(prefix="pcollect-html-bench.")
    res = os.path.join(work, "large-%d-%d" % (a.stacks, a.samples))
    if not os.path.exists(os.path.join(res, "result.db")):
        print("writing a synthetic result: %d stacks, %d samples ..." % (a.stacks, a.samples))
        report_synth.large(res, a.stacks, a.samples)
    page = os.path.join(work, "large.html")
    gen = statistics.median(preport(build, "-r", res, "-format", "html", "-report-output", page,
                                    "-quiet") for _ in range(a.runs))
    size = os.path.getsize(page)
    d = browser.chrome()
    try:
        loads = [load(d, page) for _ in range(a.runs)]
    finally:
        d.quit()
    med = statistics.median(loads)
    # Every row of the stacks table is a node of the call tree (a prefix: docs/schema.md).
    db = sqlite3.connect(os.path.join(res, "result.db"))
    nodes = db.execute("SELECT COUNT(*) FROM stacks").fetchone()[0]
    db.close()
    print("result: %d stacks, %d samples, %d call-tree nodes; load average %.2f"
          % (a.stacks, a.samples, nodes, os.getloadavg()[0]))
    print("preport -format html: %.2f s (median of %d)" % (gen, a.runs))
    print("page size: %.2f MB (budget %.0f MB): %s" % (size / 2**20, BUDGET_BYTES / 2**20,
                                                       "ok" if size < BUDGET_BYTES else "OVER"))
    print("render in headless Chromium: %.2f s median, runs %s (budget %.1f s): %s"
          % (med, " ".join("%.2f" % x for x in loads), BUDGET_S,
             "ok" if med < BUDGET_S else "OVER"))
    if not a.keep:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
