#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The HTML report of an MPI job (issue 25): four ranks of tests/progs/mpi-job on two
simulated nodes under a real launcher, rank r computing (r + 1) x 100 ms of CPU time but rank
2 none (IDLE), then a barrier and rings of known calls and bytes. In headless Chromium the
page shows the mpi view's table with `preport -view mpi`'s numbers; the per-rank view of
compute() draws a bar per rank of its known CPU time (within the tolerance of the rank's
samples, e2elib.Sampled),
rank 2 as idle ("no work"), with min, max, mean, standard deviation and imbalance ((max -
mean) / max, as the summary's MPI Imbalance) of the bars; and a
timeline lane per rank whose CPU Time sums to the rank's (hotspots -group-by rank). A
screenshot of the MPI part goes to the work directory and build/meson-logs/mpi-html/.

usage: mpi-html.py openmpi|mpich. Runs under /usr/bin/python3 (python3-selenium)."""
import json
import math
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import browser  # noqa: E402

REASON = browser.need_selenium()
import e2elib as e  # noqa: E402
import mpilib  # noqa: E402

NODES = ("nodeA", "nodeB")
RANKS, UNIT_MS, ROUNDS, IDLE, INTERVAL_MS = 4, 100, 30, 2, 2
UNITS = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}


def known_ns(rank):
    return 0 if rank == IDLE else (rank + 1) * UNIT_MS * 1000000


def cell_value(text):
    """A page cell as a number: "1.234s" in s, "300.0 KiB" in bytes, "12.5%", an integer."""
    m = re.fullmatch(r"(-?[0-9.]+) ?(s|%|B|KiB|MiB|GiB)?", text)
    if not m:
        return text
    v = float(m.group(1))
    return v * UNITS[m.group(2)] if m.group(2) in UNITS else v


def same(page, csv, col):
    """A page cell shows the CSV's number as the text view prints it."""
    if col in ("Function", "Kind"):
        return page == csv
    got, want = cell_value(page), float(csv or 0)
    if page.endswith(("KiB", "MiB", "GiB")):
        return abs(got - want) <= 0.05 * UNITS[page.split()[-1]]
    if page.endswith(("s", "%")):
        return abs(got - want) <= 0.0005 + 1e-9 if page.endswith("s") else abs(got - want) < 0.051
    return got == want


def main():
    abi = sys.argv[1] if len(sys.argv) > 1 else "openmpi"
    mpilib.launcher(abi)  # skips where this MPI is not installed
    mpilib.shim(abi)
    prog = mpilib.built(os.path.join("tests", "progs", "mpi-job-" + abi),
                        "no %s development files at build time" % abi,
                        mpilib.PACKAGES[abi].split())
    target = [prog, str(UNIT_MS), str(ROUNDS), str(IDLE)]
    with e.Workdir("mpi-html") as w:
        res = w.join("res")
        cp = mpilib.job(abi, NODES, 2, res, target,
                        options=["-knob", "sampling-interval=%d" % INTERVAL_MS])
        # What the ranks print without pcollect is known (mpi-job.c): the job is not run
        # alone first to learn it.
        e.check(sorted(cp.stdout.splitlines()) ==
                ["rank %d of 4 done, sum 6" % r for r in range(RANKS)],
                "every rank ran to its end, printing as without pcollect (%r)" % cp.stdout)
        e.finalize(res, ("-quiet", "-j", "2"))
        mpi = e.rows(res, "-view", "mpi")
        by_rank = {int(r["Rank"]): e.ns(r["CPU Time:Total"]) for r in
                   e.rows(res, "-view", "hotspots", "-group-by", "rank", "-metric",
                          "CPU Time") if r["Rank"]}
        path = w.join("job.html")
        e.preport("-r", res, "-format", "html", "-report-output", path)
        size = os.path.getsize(path)
        e.check(size < 1 << 20, "the page is %d bytes (under 1 MB)" % size)

        if REASON:
            e.skip(REASON, needs="python3-selenium")
        reason = browser.missing()
        if reason:
            e.skip(reason, needs=["chromium", "chromium-driver"])
        from selenium.webdriver.common.by import By
        from selenium.webdriver.support.ui import Select, WebDriverWait
        d = browser.chrome(console=True)
        try:
            d.get("file://" + os.path.abspath(path))
            WebDriverWait(d, 30).until(lambda x: x.execute_script(
                "return document.body.getAttribute('data-ready')") == "1")
            js = d.execute_script
            logs = [x for x in d.get_log("browser") if x["level"] in ("SEVERE", "WARNING")]
            e.check(not logs, "no error or warning in the console %s" % logs)

            head = js("return [...document.querySelectorAll('#mpi-table thead th')]"
                      ".map(th => th.textContent);")
            body = js("return [...document.querySelectorAll('#mpi-table tbody tr')]"
                      ".map(tr => [...tr.children].map(td => td.textContent));")
            got = [dict(zip(head, r)) for r in body]
            e.check([r["Function"] for r in got] == [r["Function"] for r in mpi] and
                    len(got) >= 6, "the MPI table has -view mpi's functions in its order (%s)"
                    % [r["Function"] for r in got])
            bad = [(g["Function"], c, g[c], m[c]) for g, m in zip(got, mpi) for c in head
                   if not same(g[c], m.get(c, ""), c)]
            e.check(not bad and "Max Rank Time" in head and "Stddev Rank Time" in head,
                    "the MPI table's %d columns show -view mpi's numbers (differ: %s)"
                    % (len(head), bad))

            Select(d.find_element(By.ID, "rank-function")).select_by_visible_text("compute")
            bars = js("return [...document.querySelectorAll('#rank-bars tr.rank-bar')].map("
                      "tr => [+tr.dataset.rank, +tr.dataset.value, tr.classList.contains('idle'),"
                      " tr.lastChild.textContent, tr.querySelector('.bar div').style.width]);")
            e.check([b[0] for b in bars] == list(range(RANKS)), "a bar per rank (%s)" % bars)
            for rank, v, idle, text, width in bars:
                want = known_ns(rank)
                if rank == IDLE:
                    e.check(v == 0 and idle and text == "no work" and width in ("0", "0%", "0px",
                                                                              ""),
                            "rank %d drawn as idle: no bar, 'no work' (%s, %s)" % (rank, text,
                                                                                  width))
                else:
                    e.check(not idle, "rank %d drawn with work (%s)" % (rank, text))
                    e.check_time(mpilib.rank_stats(res, NODES, rank), v, want, "rank %d's compute bar (%s)"
                                 % (rank, text), stretches=1)
            vals = [b[1] for b in bars]
            mean = sum(vals) / len(vals)
            sd = math.sqrt(sum((x - mean) ** 2 for x in vals) / len(vals))
            stats = d.find_element(By.ID, "rank-stats").text
            # the page rounds as JavaScript's toFixed does (56.25 -> 56.3, Python's 56.2):
            # each figure within half a unit of its last digit
            m = re.search(r"min 0\.000s \(rank (\d+)\), max ([\d.]+)s \(rank 3\), mean "
                          r"([\d.]+)s, standard deviation ([\d.]+)s, imbalance ([\d.]+)% "
                          r"\(\(max - mean\) / max\); no work on rank (\d+)", stats)
            want = (max(vals) / 1e9, mean / 1e9, sd / 1e9, 100 * (max(vals) - mean) / max(vals))
            e.check(m and int(m.group(1)) == IDLE and int(m.group(6)) == IDLE and
                    all(abs(float(m.group(2 + i)) - want[i]) <= 0.00051 for i in range(3)) and
                    abs(float(m.group(5)) - want[3]) <= 0.051 and max(vals) == vals[3],
                    "the statistics of the bars: %r (%s)" % (stats, want))
            r = js("return window.pcollectReport.ranks('compute');")
            e.check(abs(r["sd"] - sd) < 1 and r["idle"] == [IDLE], "ranks(): sd and idle")

            D = json.loads(js("return document.getElementById('pcollect-data').textContent;"))
            k = [m["name"] for m in D["metrics"]].index("CPU Time")
            lanes = js("return [...document.querySelectorAll('.rank-lane .lane-name')]"
                       ".map(x => x.textContent);")
            e.check(lanes == ["rank %d" % r for r in range(RANKS)], "a lane per rank %s" % lanes)
            for i, rank in enumerate(D["mpi"]["ranks"]):
                s = sum(D["mpi"]["lanes"][i][k]) * D["metrics"][k]["scale"]
                want = by_rank.get(rank, 0)
                e.check(abs(s - want) <= 0.02 * want + D["timeline"]["bins"] *
                        D["metrics"][k]["scale"], "rank %d's lane: %.3f s of CPU Time, the "
                        "rank's %.3f s" % (rank, s / 1e9, want / 1e9))
            # Below the sticky header, at the top of the window.
            js("window.scrollTo(0, document.getElementById('mpi').getBoundingClientRect().top +"
               " window.scrollY - document.querySelector('header').offsetHeight - 4);")
            for where in (w.path, os.path.join(e.BUILD, "meson-logs", "mpi-html")):
                os.makedirs(where, exist_ok=True)
                d.save_screenshot(os.path.join(where, "mpi-%s.png" % abi))
        finally:
            d.quit()


if __name__ == "__main__":
    main()
