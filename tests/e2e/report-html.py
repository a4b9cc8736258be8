#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""preport -format html opened by headless Chromium with the network cut: no console error, no
request, the functions of the 60/30/10 program on screen with preport's numbers; a click on a
flame graph frame zooms to it (its frame takes the whole width) and selects it (callers, source
line); the search matches medium's share; the metric switch redraws with Wait Time's known
values (report_synth.known3); a difference of the program and its variant with medium doubled
colours medium red; the memory chart of tests/progs/mem-steps draws its live heap's known
steps (8, 16, 24, 32, 24, 16, 8, 0 MiB) at the heights and times of the counters table, marks
the 32 MiB peak when process_memory says it was reached, and its tooltip reads the values; a
page that narrows without a window resize redraws its flame graph at the new width.
Screenshots go to the work directory and build/meson-logs/report-html/.

Runs under /usr/bin/python3, whose python3-selenium drives Chromium (chromium-driver); exits 77
naming what is missing."""
import os
import time
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import browser  # noqa: E402

By, Select, WebDriverWait = browser.require_selenium()
import e2elib  # noqa: E402
import report_synth as synth  # noqa: E402

from e2elib import preport, rows  # noqa: E402


MAX_BYTES = 10 << 20
UNIT_MS = 300  # a round of tests/progs/report-split: 1.5 s of CPU time, 1.95 s twice


def settled(cond, timeout=5.0):
    """cond() once it holds, or its last value after timeout seconds of polling."""
    end = time.monotonic() + timeout
    while True:
        v = cond()
        if v or time.monotonic() > end:
            return v
        time.sleep(0.1)


class Page:
    def __init__(self, d, path, shots):
        self.d, self.shots = d, shots
        d.get("file://" + os.path.abspath(path))
        WebDriverWait(d, 30).until(
            lambda x: x.execute_script("return document.body.getAttribute('data-ready')") == "1")
        self.name = os.path.basename(path)

    def js(self, code, *args):
        return self.d.execute_script(code, *args)

    def shot(self, name):
        for where in self.shots:
            os.makedirs(where, exist_ok=True)
            self.d.save_screenshot(os.path.join(where, name))

    def clean_console(self):
        logs = [l for l in self.d.get_log("browser") if l["level"] in ("SEVERE", "WARNING")]
        e2elib.check(not logs, "%s: no error or warning in the console %s" % (self.name, logs))
        res = self.js("return performance.getEntriesByType('resource').map(e => e.name)")
        e2elib.check(res == [], "%s: the page asks for nothing (no resource loaded) %s"
                     % (self.name, res))

    def table(self, ident):
        return self.js("""return [...document.querySelectorAll('#' + arguments[0] + ' tbody tr')]
            .map(tr => [...tr.children].map(td => td.textContent));""", ident)

    def header(self, ident):
        return self.js("return [...document.querySelectorAll('#' + arguments[0] + ' thead th')]"
                       ".map(th => th.textContent.replace(/ [\\u25be\\u25b4]$/, ''));", ident)

    def frame(self, name):
        return self.js("return window.pcollectReport.frameRect(arguments[0]);", name)

    def click_frame(self, name):
        r = self.frame(name)
        if not r:
            e2elib.fail("%s: no frame of %s drawn" % (self.name, name))
        browser.click_frame(self.d, r)

    def pixel(self, name):
        """The colour of a frame: at its top edge's middle, above its label."""
        r = self.frame(name)
        # Read through a copy made for reading, so the page's canvas is not read back.
        return self.js("""const c = document.getElementById('flame'), d = window.devicePixelRatio || 1;
            const o = document.createElement('canvas');
            o.width = c.width; o.height = c.height;
            const g = o.getContext('2d', {willReadFrequently: true});
            g.drawImage(c, 0, 0);
            return [...g.getImageData(Math.round((arguments[0] + arguments[2] / 2) * d),
                Math.round((arguments[1] + 1.5) * d), 1, 1).data];""", r["x"], r["y"], r["w"])


def html(w, name, *args):
    path = w.join(name)
    preport("-format", "html", "-report-output", path, *args)
    size = os.path.getsize(path)
    with open(path, encoding="utf-8") as f:
        text = f.read()
    e2elib.check(size < MAX_BYTES and "<link" not in text and " src=" not in text and
                 "@import" not in text,
                 "%s: one file of %d bytes, scripts and styles inline" % (name, size))
    return path


def check_split_page(p, res):
    p.clean_console()
    body = p.d.find_element(By.TAG_NAME, "body").text
    e2elib.check(all(n in body for n in ("heavy", "medium", "light", "Summary", "Timeline")),
                 "split: the functions, the summary and the timeline on screen")
    hs = {r["Function"]: r for r in rows(res, "-view", "hotspots")}
    head = p.header("hot-table")
    got = {r[0]: dict(zip(head, r)) for r in p.table("hot-table")}
    e2elib.check(all(got[n]["CPU Time:Self"] == hs[n]["CPU Time:Self"] + "s" and
                     got[n]["CPU Time:Total"] == hs[n]["CPU Time:Total"] + "s" and
                     got[n]["CPU Time:Self %"] == hs[n]["CPU Time:Self %"] + "%"
                     for n in ("heavy", "medium", "light")),
                 "split: the hotspots table shows preport's self, total and percentages")
    e2elib.check(list(got)[:3] == ["heavy", "medium", "light"], "split: hotspots by self time")
    p.shot("split.png")

    width = p.js("return window.pcollectReport.canvasWidth();")
    before = p.frame("medium")
    e2elib.check(abs(before["w"] / width - float(hs["medium"]["CPU Time:Total %"]) / 100) < 0.01,
                 "split: medium's frame is its share of the width")
    p.click_frame("medium")
    after = p.frame("medium")
    e2elib.check(p.js("return window.pcollectReport.zoomedFunction();") == "medium" and
                 abs(after["w"] - width) < 1.5 and after["w"] > 2 * before["w"],
                 "split: a click on medium's frame zooms to it (%.0f px -> %.0f px of %.0f)"
                 % (before["w"], after["w"], width))
    e2elib.check(p.frame("heavy") is None, "split: after the zoom heavy is not drawn")
    p.shot("split-zoomed.png")

    cc = {r["Function"]: r for r in rows(res, "-view", "caller-callee", "-function", "medium")}
    callers = {r[0]: r for r in p.table("callers-table")}
    e2elib.check(callers.get("driver", [None, None, ""])[1] == "caller" and
                 callers["driver"][2] == cc["driver"]["CPU Time:Total"] + "s",
                 "split: the selection's callers (driver) with caller-callee's total")
    src = p.table("source-table")
    hot = max(src, key=lambda r: float(r[1].rstrip("s") or 0))
    lines = {r["Line"]: r for r in rows(res, "-view", "source", "-source-object",
                                         "function=medium")}
    e2elib.check("burn:medium" in hot[3] and hot[1] == lines[hot[0]]["CPU Time:Self"] + "s",
                 "split: the source of the selection, its burning line the hottest, with the "
                 "source view's self time")
    p.js("window.pcollectReport.state.zoom = 0;")
    p.d.find_element(By.ID, "reset").click()
    e2elib.check(p.js("return window.pcollectReport.zoomedFunction();") is None and
                 p.frame("heavy") is not None, "split: Reset zoom shows the whole profile again")

    p.d.find_element(By.ID, "search").send_keys("medium")
    match = p.d.find_element(By.ID, "match").text
    e2elib.check(match == "Matched: %s%%" % hs["medium"]["CPU Time:Total %"] and
                 [r[0] for r in p.table("hot-table")] == ["medium"],
                 "split: searching 'medium' matches its share (%s) and filters the hotspots"
                 % match)
    rgb = p.pixel("medium")
    e2elib.check(rgb[0] > 180 and rgb[2] > 150 and rgb[1] < 120,
                 "split: matched frames drawn in magenta %s" % rgb)
    p.shot("split-search.png")
    p.d.find_element(By.ID, "search").clear()
    p.d.find_element(By.ID, "search").send_keys(" ")
    p.js("const s = document.getElementById('search'); s.value = '';"
         "s.dispatchEvent(new Event('input'));")
    p.d.find_element(By.XPATH, "//table[@id='hot-table']//th[starts-with(normalize-space(.), "
                               "'CPU Time:Total') and "
                               "not(contains(., '%'))]").click()
    first = p.table("hot-table")[0][0]
    e2elib.check(first in ("main", "driver"), "split: sorted by total, main or driver first")
    lanes = p.js("return [...document.querySelectorAll('.lane-name')].map(e => e.textContent)")
    e2elib.check(len(lanes) == 1 and lanes[0].startswith("report-split (TID "),
                 "split: a timeline lane for the thread")


def check_metric_switch(p):
    p.clean_console()
    known = synth.KNOWN3
    Select(p.d.find_element(By.ID, "metric")).select_by_visible_text("Wait Time")
    head = p.header("hot-table")
    got = {r[0]: dict(zip(head, r)) for r in p.table("hot-table")}
    e2elib.check(head[1] == "Wait Time:Self" and list(got)[0] == "wait_io" and
                 all(got[f]["Wait Time:Self"] == "%.3fs" % (v / 1000)
                     for f, v in known["self"]["Wait Time"].items()),
                 "metrics: the switch to Wait Time shows its known self values")
    width = p.js("return window.pcollectReport.canvasWidth();")
    drawn = sum(r["w"] for r in p.js("return window.pcollectReport.frameRects('wait_io');"))
    e2elib.check(abs(drawn / width - known["total"]["Wait Time"]["wait_io"] /
                     known["totals"]["Wait Time"]) < 0.01,
                 "metrics: the flame graph redrawn with Wait Time's widths")
    p.shot("metrics-wait.png")
    Select(p.d.find_element(By.ID, "metric")).select_by_visible_text("Allocated Bytes")
    e2elib.check("Allocated Bytes:Self" in p.header("hot-table"),
                 "metrics: Allocated Bytes, in bytes")


def check_diff(p, a, b):
    p.clean_console()
    d = {r["Function"]: r for r in rows(a, "-r", b, "-view", "hotspots")}
    head = p.header("hot-table")
    got = {r[0]: dict(zip(head, r)) for r in p.table("hot-table")}
    diff = d["medium"]["CPU Time:Self:Difference"]
    # medium burns 5 rounds of 3/10 of a unit more in the second run
    e2elib.check(got["medium"]["CPU Time:Self:Difference"] == "+" + diff + "s" and
                 float(diff) > 1.5 * UNIT_MS / 1e3 * 2 / 3,
                 "difference: medium's self difference as preport's (+%ss)" % diff)
    red, grey = p.pixel("medium"), p.pixel("heavy")
    e2elib.check(red[0] > red[2] + 60 and abs(grey[0] - grey[2]) < 40,
                 "difference: medium (doubled) in red %s, heavy (unchanged) grey %s"
                 % (red, grey))
    p.shot("difference.png")


MIB = 1 << 20
STEPS = [8 * MIB, 16 * MIB, 24 * MIB, 32 * MIB, 24 * MIB, 16 * MIB, 8 * MIB, 0]


def collect_steps(w):
    res = e2elib.collect(w, "steps", [e2elib.prog("mem-steps")], analysis="memory-consumption",
                         finalization="full")
    pts = e2elib.db_rows(res, "select time_ns, value from counters where name = 'Live Heap' "
                              "order by time_ns")
    # Each step is 60 ms of CPU time apart, a point of its own; the peak is also a point at
    # its moment, and the end one more: the values in order, repeats merged, are the steps.
    ladder = [v for i, (_, v) in enumerate(pts) if i == 0 or v != pts[i - 1][1]]
    e2elib.check(ladder == STEPS, "memory: the Live Heap counter climbs and falls by the 8 MiB "
                 "steps %s (got %s)" % ([v // MIB for v in STEPS], [v // MIB for v in ladder]))
    return res, pts


def check_memory_page(p, res, pts):
    p.clean_console()
    peak_bytes, peak_ns = e2elib.db_rows(res, "select peak_bytes, peak_ns from process_memory")[0]
    charts = p.js("return window.pcollectReport.memory();")
    e2elib.check(len(charts) == 1 and charts[0]["process"].startswith("mem-steps (PID "),
                 "memory: one chart, of mem-steps (%s)" % [c["process"] for c in charts])
    c = charts[0]
    pk = c["peak"]
    e2elib.check(pk and pk["bytes"] == peak_bytes == 32 * MIB and pk["time_ns"] == peak_ns and
                 pk["label"] == "peak 32.0 MiB at %.3fs" % (peak_ns / 1e9),
                 "memory: the peak marked is process_memory's, 32 MiB at %.3f s (%s)"
                 % (peak_ns / 1e9, pk))
    lo, hi = p.js("const M = JSON.parse(document.getElementById('pcollect-data').textContent)"
                  ".memory; return [M.start, M.end];")
    # The top of the live heap's area in the middle of each step: where the chart's scale
    # puts the step's value (report.js: Y()), to a pixel and a half.
    col = p.js("""const c = document.querySelector('#memory canvas'), d = window.devicePixelRatio || 1;
        const o = document.createElement('canvas');
        o.width = c.width; o.height = c.height;
        const g = o.getContext('2d', {willReadFrequently: true});
        g.drawImage(c, 0, 0);
        return arguments[0].map((x) => {
            const px = g.getImageData(Math.round(x * d), 0, 1, c.height).data;
            for (let y = 0; y < c.height; y++) {
                const r = px[4 * y], gg = px[4 * y + 1], b = px[4 * y + 2];
                if (b > 150 && b - r > 40 && b - gg > 20) return y / d;  // the heap's blue
            }
            return null; });""",
               [(((a + b) / 2) - lo) / (hi - lo) * (c["width"] - 1)
                for (a, _), (b, _) in zip(pts, pts[1:]) if b - a > 20e6])
    want = [v for (a, v), (b, _) in zip(pts, pts[1:]) if b - a > 20e6]
    h = c["height"]
    ys = [h - 1 - v / c["max"] * (h - 1 - 16 - 4) for v in want]
    ok = all((v == 0 and (y is None or y >= h - 2)) or (y is not None and abs(y - yw) <= 1.5)
             for v, y, yw in zip(want, col, ys))
    e2elib.check(len(want) >= 7 and ok, "memory: the live heap drawn at each step's height "
                 "(tops %s, want %s for %s MiB)"
                 % (col, [round(y, 1) for y in ys], [v // MIB for v in want]))
    # The tooltip over the second step reads its values.
    a, b = pts[1][0], pts[2][0]
    tip = p.js("""const c = document.querySelector('#memory canvas'), r = c.getBoundingClientRect();
        c.dispatchEvent(new MouseEvent('mousemove', {clientX: r.left + arguments[0] * r.width,
            clientY: r.top + r.height / 2, bubbles: true}));
        return document.getElementById('tip').textContent;""", ((a + b) / 2 - lo) / (hi - lo))
    e2elib.check("Live Heap: 16.0 MiB" in tip and "RSS: " in tip,
                 "memory: the tooltip over the second step says 16.0 MiB live (%r)" % tip)
    p.shot("memory.png")


def main():
    with e2elib.Workdir("report-html") as w:
        shots = [w.path, os.path.join(e2elib.BUILD, "meson-logs", "report-html")]
        # rounds of UNIT_MS (the page is checked against preport's figures, not the split)
        res = e2elib.collect(w, "split", [e2elib.prog("report-split"), "once", UNIT_MS],
                             interval=1, finalization="full")
        twice = e2elib.collect(w, "twice", [e2elib.prog("report-split"), "twice", UNIT_MS],
                               interval=1, finalization="full")
        k3 = synth.known3(w.join("k3"))
        steps, steps_pts = collect_steps(w)
        pages = {
            "split": html(w, "split.html", "-r", res),
            "diff": html(w, "diff.html", "-r", res, "-r", twice),
            "k3": html(w, "k3.html", "-r", k3),
            "thread": html(w, "thread.html", "-r", res, "-group-by", "thread"),
            "steps": html(w, "steps.html", "-r", steps),
        }
        reason = browser.missing()
        if reason:
            e2elib.skip(reason, needs=["chromium", "chromium-driver"])
        d = browser.chrome(console=True)
        try:
            check_split_page(Page(d, pages["split"], shots), res)
            check_metric_switch(Page(d, pages["k3"], shots))
            check_diff(Page(d, pages["diff"], shots), res, twice)
            check_memory_page(Page(d, pages["steps"], shots), steps, steps_pts)
            p = Page(d, pages["thread"], shots)
            p.clean_console()
            names = [r[0] for r in p.table("hot-table")]
            e2elib.check(names and not any(n.startswith("[") for n in names),
                         "-group-by thread: groups are frames of the graph, not hotspots")
            first = p.js("""return (function () {
                const D = JSON.parse(document.getElementById('pcollect-data').textContent);
                return D.names[D.functions[D.tree.fn[1]][0]]; })();""")
            # The page may lay itself out again after load (a scroll bar appears): poll.
            e2elib.check(first.startswith("[thread report-split (TID ") and settled(
                lambda: p.frame(first)["w"] > 0.99 * p.js(
                    "return window.pcollectReport.canvasWidth();")),
                         "-group-by thread: the thread is the outermost frame, full width")
            p.shot("group-by-thread.png")
            # The page narrowed without a window resize (as a scroll bar appearing does): the
            # graph is drawn again at its container's width, not left stretched.
            p.js("document.body.style.marginRight = '180px';")
            e2elib.check(settled(lambda: abs(p.frame(first)["w"] / p.js(
                "return window.pcollectReport.canvasWidth();") - 1) < 0.01),
                         "a narrower page without a window resize: the graph redrawn at its "
                         "width (%.0f px of %.0f)" % (p.frame(first)["w"], p.js(
                             "return window.pcollectReport.canvasWidth();")))
        finally:
            d.quit()


if __name__ == "__main__":
    main()
