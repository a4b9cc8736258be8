#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""issue 25 item 2: the HTML page's trees, hotspots, sunburst and depth controls in headless
Chromium, on report_synth's known result (KNOWN, KNOWN3 with Allocations). The top-down tree's
rows carry preport -view top-down's totals and selves, its heaviest path open; collapsing a
row hides its children; searching 'helper' opens the tree down to it; the bottom-up tree's
rows carry -view bottom-up's selves; a row selects its function (callers, source). At 1400 px
the hotspots' Function, Source File (cut from the left, whole in its title) and Line are on
screen; a Calls column shows Allocations where the metric has counts, none for CPU Time. The
sunburst's arcs span their totals' share of the circle (1%), a click zooms, its depth control
and the flame graph's hide the levels below N. A hairline stack (60 frames of 0.05%) does
not make the flame graph or the sunburst deeper than the frames one sees (a tower of 45 at a
quarter of the width), and a tall graph scrolls in a box of 80% of the window. Screenshots
go to the work dir and build/meson-logs/report-html-views/."""
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import browser  # noqa: E402

By, Select, WebDriverWait = browser.require_selenium()
import e2elib  # noqa: E402
import report_synth as synth  # noqa: E402

from e2elib import preport, rows  # noqa: E402

ROW = 18  # report.js: a flame graph row's height (px)
LONG_DIR = "/home/user/projects/very-long-project-name/src/subsystem/module/implementation"


def deep(result_dir, heavy_ms=1500, wide_ms=500, wide=45, levels=60):
    """main -> work of heavy_ms, main -> c0 -> ... -> c<wide-1> of wide_ms (a deep stack one
    sees), and main -> d0 -> ... -> d<levels-1> of 1 ms (a hairline under a pixel)."""
    os.makedirs(result_dir, exist_ok=True)
    b = synth.Builder(os.path.join(result_dir, "result.db"))
    main = b.frame(synth.F["main"], synth.APP, 12, 0)
    work = b.frame(synth.F["work"], synth.APP, 21, 0)
    b.sample(1, b.stack([main, work]), 0, weight=heavy_ms)
    chain = [b.frame(("d%d" % i, "app", synth.APP, 200 + i), synth.APP, 201 + i, 0)
             for i in range(levels)]
    b.sample(1, b.stack([main] + chain), heavy_ms * synth.INTERVAL_NS, weight=1)
    tower = [b.frame(("c%d" % i, "app", synth.APP, 400 + i), synth.APP, 401 + i, 0)
             for i in range(wide)]
    b.sample(1, b.stack([main] + tower), (heavy_ms + 1) * synth.INTERVAL_NS, weight=wide_ms)
    t = (heavy_ms + 1 + wide_ms) * synth.INTERVAL_NS
    b.finish({"elapsed_ns": str(t), "cpu_count": "2", "command_line": "./app",
              "host": "testhost", "finalization_mode": "full"},
             [(1, 1000, 1, None, "start", 0, "testhost", None, "/tmp/app", "./app", 0, t)],
             [(1, 1, 1001, "app", 0, t, t, 3, heavy_ms + 1 + wide_ms, t)])
    return result_dir


def page(d, w, name, res, *args):
    path = w.join(name)
    preport("-r", res, "-format", "html", "-report-output", path, *args)
    d.get("file://" + path)
    WebDriverWait(d, 30).until(
        lambda x: x.execute_script("return document.body.getAttribute('data-ready')") == "1")
    logs = [entry for entry in d.get_log("browser") if entry["level"] in ("SEVERE", "WARNING")]
    e2elib.check(not logs, "%s: no error or warning in the console %s" % (name, logs))


def js(d, code, *args):
    return d.execute_script(code, *args)


def shot(d, shots, name, ident):
    """A screenshot with the element ident at the window's top."""
    js(d, "document.getElementById(arguments[0]).scrollIntoView(); window.scrollBy(0, -48);", ident)
    for where in shots:
        d.save_screenshot(os.path.join(where, name))


def tree(d, ident):
    """The rows of a tree: (depth, name, self, total, open) with values in seconds."""
    out = js(d, """return [...document.querySelectorAll('#' + arguments[0] + ' tbody tr')]
        .map(tr => [+tr.dataset.depth, tr.children[0].textContent.replace(/^[\\u25b8\\u25be]/, ''),
                    tr.children[1].textContent, tr.children[3].textContent,
                    tr.querySelector('.tw').textContent === '\\u25be']);""", ident)
    return [(dp, n, float(s.rstrip("s")), float(t.rstrip("s")), o) for dp, n, s, t, o in out]


def paths(rws, depth_key, name_key):
    """(path of names from the top, row) of a preport view's rows in depth-first order."""
    out, path = [], []
    for r in rws:
        dp = int(r[depth_key])
        path[dp:] = [r[name_key]]
        out.append((tuple(path), r))
    return out


def page_paths(rws):
    out, path = {}, []
    for dp, n, s, t, o in rws:
        path[dp:] = ["Total" if n == "[total]" else n]
        out[tuple(path)] = (s, t, o)
    return out


def toggle(d, ident, name, depth):
    js(d, """const tr = [...document.querySelectorAll('#' + arguments[0] + ' tbody tr')].find(
        tr => tr.children[0].textContent.replace(/^[\\u25b8\\u25be]/, '') === arguments[1] &&
              +tr.dataset.depth === arguments[2]);
        tr.querySelector('.tw').click();""", ident, name, depth)


def check_topdown(d, w, res, shots):
    want = paths(rows(res, "-view", "top-down", "-threshold", "0"), "Depth", "Function Stack")
    got = page_paths(tree(d, "topdown-tree"))
    drawn = [(p, r) for p, r in want if p in got]
    e2elib.check(len(drawn) >= 7 and all(
        abs(got[p][1] - float(r["CPU Time:Total"])) < 0.0005 and
        abs(got[p][0] - float(r["CPU Time:Self"])) < 0.0005 for p, r in drawn),
                 "top-down: %d rows drawn, each with -view top-down's total and self"
                 % len(drawn))
    heavy = ("Total", "main", "work", "a", "helper")
    e2elib.check(all(heavy[:i] in got and got[heavy[:i]][2] for i in range(1, 5)) and
                 heavy in got, "top-down: the heaviest path is open down to helper")
    toggle(d, "topdown-tree", "main", 1)
    got = page_paths(tree(d, "topdown-tree"))
    e2elib.check(heavy[:2] in got and not got[heavy[:2]][2] and
                 not any(len(p) > 2 for p in got),
                 "top-down: collapsing main hides its children (%d rows left)" % len(got))
    d.find_element(By.ID, "search").send_keys("helper")
    got = page_paths(tree(d, "topdown-tree"))
    marked = js(d, "return [...document.querySelectorAll('#topdown-tree tr.match')]"
                   ".map(tr => tr.children[0].textContent.replace(/^[\\u25b8\\u25be]/, ''));")
    e2elib.check(heavy in got and marked == ["helper"] and "b" not in [p[-1] for p in got],
                 "top-down: searching 'helper' opens the tree down to it, marks it and "
                 "leaves out the paths without it (%s)" % sorted(got))
    shot(d, shots, "views-search.png", "tree")
    js(d, "const s = document.getElementById('search'); s.value = '';"
          "s.dispatchEvent(new Event('input'));")
    # A row selects its function, as a frame does.
    js(d, """[...document.querySelectorAll('#topdown-tree tbody tr')].find(
        tr => tr.children[0].textContent.replace(/^[\\u25b8\\u25be]/, '') === 'b').click();""")
    callers = js(d, "return [...document.querySelectorAll('#callers-table tbody tr')]"
                    ".map(tr => [tr.children[0].textContent, tr.children[1].textContent]);")
    e2elib.check(js(d, "return window.pcollectReport.state.fn;") >= 0 and
                 ["main", "caller"] in callers and ["b", "function"] in callers,
                 "top-down: a click on b's row selects b (callers: main)")


def check_bottomup(d, res, shots):
    d.find_element(By.ID, "tab-bottomup").click()
    want = paths(rows(res, "-view", "bottom-up", "-threshold", "0"), "Depth", "Function Stack")
    toggle(d, "bottomup-tree", "c", 0)
    got = page_paths(tree(d, "bottomup-tree"))
    drawn = [(p, r) for p, r in want if p in got]
    top = [p for p, r in want if len(p) == 1 and float(r["CPU Time:Self"]) > 0]
    e2elib.check(all((p,) in got or p in got for p in top) and
                 ("c", "main") in got and ("c", "worker") in got and
                 all(abs(got[p][0] - float(r["CPU Time:Self"])) < 0.0005 for p, r in drawn),
                 "bottom-up: every hotspot, c's callers main and worker opened, each row with "
                 "-view bottom-up's self (%d rows compared)" % len(drawn))
    e2elib.check(abs(got[("c",)][1] - 0.045) < 0.0005 and
                 abs(got[("c", "main")][0] - 0.030) < 0.0005 and
                 abs(got[("c", "worker")][0] - 0.015) < 0.0005,
                 "bottom-up: c's total 0.045 s, 0.030 s through main, 0.015 s through worker")
    shot(d, shots, "views-bottomup.png", "tree")
    d.find_element(By.ID, "tab-topdown").click()


def check_hotspots(d, w, shots):
    cells = js(d, """const t = document.getElementById('hot-table');
        const head = [...t.querySelectorAll('thead th')].map(th => th.textContent.replace(/ [\\u25be\\u25b4]$/, ''));
        const tr = [...t.querySelectorAll('tbody tr')].find(tr => tr.children[0].textContent === 'work');
        if (head.indexOf('Source File') < 0 || head.indexOf('Line') < 0) return {head};
        const at = (n) => tr.children[head.indexOf(n)];
        return {head, right: ['Function', 'Source File', 'Line'].map(n => at(n).getBoundingClientRect().right),
                inner: window.innerWidth, file: at('Source File').textContent,
                title: at('Source File').title, line: at('Line').textContent,
                scroll: t.parentNode.scrollWidth - t.parentNode.clientWidth};""")
    e2elib.check("right" in cells, "hotspots: Source File and Line columns (%s)" % cells["head"])
    e2elib.check(cells["inner"] <= 1400 and all(0 < x <= cells["inner"] for x in cells["right"]),
                 "hotspots at 1400 px: Function, Source File and Line end inside the window "
                 "(%s of %d px)" % (cells["right"], cells["inner"]))
    e2elib.check(cells["file"].startswith("\u2026") and cells["file"].endswith("/app.c") and
                 cells["title"] == LONG_DIR + "/app.c" and cells["line"] == "20",
                 "hotspots: work's file cut from the left (%r), whole in its title, line 20"
                 % cells["file"])
    e2elib.check("Calls" not in cells["head"], "hotspots: no Calls column for CPU Time "
                 "(samples count no calls)")
    shot(d, shots, "views-hotspots.png", "hotspots")
    Select(d.find_element(By.ID, "metric")).select_by_visible_text("Allocated Bytes")
    calls = js(d, """const t = document.getElementById('hot-table');
        const head = [...t.querySelectorAll('thead th')].map(th => th.textContent);
        const i = head.indexOf('Calls');
        return i < 0 ? null : Object.fromEntries([...t.querySelectorAll('tbody tr')].map(
            tr => [tr.children[0].textContent, tr.children[i].textContent]));""")
    want = {f: str(v) for f, v in synth.KNOWN3_EXTRA["Allocations"].items()}
    e2elib.check(calls is not None and all(calls.get(f) == v for f, v in want.items()),
                 "hotspots: Allocated Bytes' Calls are the Allocations %s (%s)" % (want, calls))
    Select(d.find_element(By.ID, "metric")).select_by_visible_text("CPU Time")


def check_sunburst(d, shots):
    known = synth.KNOWN["total_by_function"]
    arcs = {n: js(d, "return window.pcollectReport.views.arcs(arguments[0]);", n)
            for n in ("main", "work", "b", "rec", "worker")}
    # A recursive function's inner calls are arcs inside its outermost: that ring alone.
    share = {n: sum(a["a1"] - a["a0"] for a in arcs[n] if a["ring"] == min(
        x["ring"] for x in arcs[n])) / (2 * math.pi) for n in arcs}
    e2elib.check(all(abs(share[n] - known[n] / 1000) <= 0.01 * known[n] / 1000 for n in arcs),
                 "sunburst: arcs span their totals' share of the circle within 1%% (%s)"
                 % {n: round(v, 4) for n, v in share.items()})
    shot(d, shots, "views-sunburst.png", "views")
    js(d, "const s = document.getElementById('sun-depth'); s.value = 3;"
          "s.dispatchEvent(new Event('input'));")
    e2elib.check(js(d, "return window.pcollectReport.views.rings();") == 3 and
                 not js(d, "return window.pcollectReport.views.arcs('helper');"),
                 "sunburst: depth 3 draws 3 rings, helper (the 4th) not")
    js(d, "const s = document.getElementById('sun-depth'); s.value = 10;"
          "s.dispatchEvent(new Event('input'));")
    # A real click in the middle of main's arc zooms to it and selects main.
    a = arcs["main"][0]
    c = js(d, "return window.pcollectReport.views.sunCentre();")
    mid, r = (a["a0"] + a["a1"]) / 2, c["rIn"] + (a["ring"] - 0.5) * c["ring"]
    from selenium.webdriver.common.action_chains import ActionChains
    sun = d.find_element(By.ID, "sun")
    box = js(d, "return document.getElementById('sun').getBoundingClientRect().toJSON();")
    ActionChains(d).move_to_element_with_offset(
        sun, int(c["x"] + r * math.cos(mid) - box["left"] - box["width"] / 2),
        int(c["y"] + r * math.sin(mid) - box["top"] - box["height"] / 2)).click().perform()
    work = js(d, "return window.pcollectReport.views.arcs('work');")
    e2elib.check(work and abs(sum(x["a1"] - x["a0"] for x in work) / (2 * math.pi) -
                              600 / 980) < 0.01 and work[0]["ring"] == 1,
                 "sunburst: a click on main zooms to it: work is its first ring, 600/980 of it")
    shot(d, shots, "views-sunburst-zoomed.png", "views")


def check_flame_depth(d):
    js(d, "const s = document.getElementById('flame-depth'); s.value = 3;"
          "s.dispatchEvent(new Event('input'));")
    h = js(d, "return document.getElementById('flame').getBoundingClientRect().height;")
    e2elib.check(js(d, "return window.pcollectReport.frameRect('helper');") is None and
                 js(d, "return window.pcollectReport.frameRect('a');") is not None and
                 abs(h - 4 * ROW) < 1,
                 "flame graph: depth 3 draws a, not helper (4th level), %d px high" % h)
    js(d, "const s = document.getElementById('flame-depth'); s.value = '';"
          "s.dispatchEvent(new Event('input'));")


def main():
    with e2elib.Workdir("report-html-views") as w:
        shots = [w.path, os.path.join(e2elib.BUILD, "meson-logs", "report-html-views")]
        for where in shots:
            os.makedirs(where, exist_ok=True)
        k3 = synth.known3(w.join("k3"), source_dir=LONG_DIR, extra=True)
        dp = deep(w.join("deep"))
        reason = browser.missing()
        if reason:
            e2elib.skip(reason, needs=["chromium", "chromium-driver"])
        d = browser.chrome(1400, 1000, console=True)
        try:
            page(d, w, "k3.html", k3)
            check_hotspots(d, w, shots)
            check_topdown(d, w, k3, shots)
            check_bottomup(d, k3, shots)
            check_flame_depth(d)
            check_sunburst(d, shots)
            page(d, w, "deep.html", dp)
            # The tower c0..c44 (a quarter of the width) is drawn whole, the hairline d0..d59
            # under it (0.7 px) adds no rows: 47 rows (root, main, the tower), in a box of 80%
            # of the window that scrolls, the trees right after it.
            box = js(d, """const r = (i) => document.getElementById(i).getBoundingClientRect();
                return {canvas: r('flame').height, wrap: r('flame-wrap').height,
                        gap: r('views').top - r('flame-wrap').bottom, inner: window.innerHeight,
                        note: document.getElementById('flame-hidden').textContent};""")
            e2elib.check(abs(box["canvas"] - 47 * ROW) < 1 and "15 deeper levels" in box["note"],
                         "deep stack: the flame graph is 47 rows high (%d px): the tower's, "
                         "not the hairline's 62, the 15 levels below said (%r)"
                         % (box["canvas"], box["note"]))
            e2elib.check(box["wrap"] <= 0.8 * box["inner"] + 2 and box["gap"] < 60,
                         "deep stack: drawn in a box of %d px that scrolls (window %d), the trees "
                         "%d px below it" % (box["wrap"], box["inner"], box["gap"]))
            js(d, "const s = document.getElementById('sun-depth'); s.value = 100;"
                  "s.dispatchEvent(new Event('input'));")
            rings = js(d, "return window.pcollectReport.views.rings();")
            e2elib.check(rings == 46, "deep stack: the sunburst of depth 100 draws 46 rings "
                         "(main, the tower), not the hairline's 61 (%d)" % rings)
            shot(d, shots, "views-deep.png", "flame-section")
        finally:
            d.quit()


if __name__ == "__main__":
    main()
