#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The notebook magics (issue 24) in a real Jupyter kernel: Debian's python3-ipykernel on its
python3.11, run by jupyter-nbconvert --execute. The notebook loads the extension, starts a
thread that burns CPU all along (2 ms in every 8, as a kernel's own threads wake: always
busy, it was 7.4 s of CPU a run), then profiles a cell with %%pcollect: spin_a for 2 units
and spin_b for 1 in the cell's thread and spin_c for 1 in a thread the cell starts
(50/25/25), and a statement with %pcollect -view top-down. The cell's
table must hold the three in their shares (+-8 points at 1 ms sampling), nothing of the
background thread or of the kernel's machinery above the cell (ipykernel's run_cell,
dispatch_shell), the statement's top-down view start at the statement, -html show the HTML
page inline; after the cells no thread of the agent runs in the kernel."""
import json
import os
import re
import shutil

import e2elib as e

PYTHON = "/usr/bin/python3.11"
CELLS = [
    "%load_ext pcollect",
    """import os, sys, threading
sys.path.insert(0, @PROGS@)
from work import spin_for
stop = threading.Event()
def background():
    while not stop.is_set():
        spin_for(2)
        stop.wait(0.006)
bg = threading.Thread(target=background, name="heartbeat-like")
bg.start()
def spin_a(ms): spin_for(ms)
def spin_b(ms): spin_for(ms)
def spin_c(ms): spin_for(ms)
before = sorted(os.listdir("/proc/self/task"))""",
    """%%pcollect -interval 1
spin_a(240)
spin_b(120)
t = threading.Thread(target=spin_c, args=(120,))
t.start()
t.join()""",
    "%pcollect -interval 1 -view top-down spin_b(100)",
    "%pcollect -html spin_b(60)",
    """after = sorted(os.listdir("/proc/self/task"))
stop.set()
bg.join()
def comm(t):
    try:
        with open("/proc/self/task/%s/comm" % t) as f:
            return f.read().strip()
    except OSError:
        return "(ended)"
print("threads of pcollect:", sorted(comm(t) for t in after if comm(t).startswith("pcollect")),
      "new:", sorted(comm(t) for t in after if t not in before))""",
]


def notebook(progs):
    cells = [{"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
              "source": c.replace("@PROGS@", repr(progs))} for c in CELLS]
    return {"cells": cells, "metadata": {"kernelspec": {"name": "pcollect-test",
                                                        "display_name": "test",
                                                        "language": "python"}},
            "nbformat": 4, "nbformat_minor": 5}


def text(t):
    """A notebook's text: a string or a list of lines."""
    return "".join(t) if isinstance(t, list) else t


def table(s):
    """{function: total seconds} of a hotspots table in text."""
    out = {}
    for line in s.splitlines():
        m = re.match(r"(\S.*?)\s+([0-9.]+)s\s+[0-9.]+%\s+([0-9.]+)s", line)
        if m:
            out[m.group(1)] = float(m.group(3))
    return out


def main():
    if not shutil.which("jupyter-nbconvert") or not os.access(PYTHON, os.X_OK):
        e.skip("jupyter-nbconvert or %s missing" % PYTHON, needs="jupyter-nbconvert")
    if e.run([PYTHON, "-c", "import ipykernel"]).returncode:
        e.skip("ipykernel missing for %s" % PYTHON, needs="python3-ipykernel")
    progs = os.path.join(e.SOURCE, "tests", "progs", "python")
    with e.Workdir("py-notebook") as w:
        spec = w.join("jupyter", "kernels", "pcollect-test")
        os.makedirs(spec)
        with open(os.path.join(spec, "kernel.json"), "w") as f:
            json.dump({"argv": [PYTHON, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                       "display_name": "test", "language": "python"}, f)
        with open(w.join("nb.ipynb"), "w") as f:
            json.dump(notebook(progs), f)
        env = {"PYTHONPATH": os.path.join(e.BUILD, "api", "python"),
               "JUPYTER_PATH": w.join("jupyter"), "JUPYTER_DATA_DIR": w.join("jupyter"),
               "JUPYTER_RUNTIME_DIR": w.join("runtime"), "HOME": w.path,
               "IPYTHONDIR": w.join("ipython")}
        e.run_ok(["jupyter-nbconvert", "--to", "notebook", "--execute",
                  "--ExecutePreprocessor.timeout=120", "--output", w.join("out.ipynb"),
                  w.join("nb.ipynb")], cwd=w.path, env=env, timeout=180)
        with open(w.join("out.ipynb")) as f:
            done = json.load(f)
        texts = ["".join(text(o.get("text", "")) for o in c["outputs"]) for c in done["cells"]]
        for c in done["cells"]:
            e.check(not any(o.get("output_type") == "error" for o in c["outputs"]),
                    "cell ran without an error: %s" % text(c["source"]).splitlines()[0])
        print(texts[2])
        fns = table(texts[2])
        spent = [fns.get(n, 0) for n in ("spin_a", "spin_b", "spin_c")]
        for n, t, want in zip(("spin_a", "spin_b", "spin_c"), spent, (0.5, 0.25, 0.25)):
            share = t / max(sum(spent), 1e-9)
            e.check(abs(share - want) <= 0.08, "%%%%pcollect: %s holds %.1f%% of the cell (want "
                    "%.0f%% +- 8)" % (n, 100 * share, 100 * want))
        e.check(not {"background", "run_cell", "dispatch_shell", "run_code"} & set(fns),
                "%%pcollect: neither the background thread nor the kernel's machinery above "
                "the cell: %s" % sorted(fns))
        print(texts[3])
        first = [ln for ln in texts[3].splitlines() if ln.startswith("  ") and "s " in ln]
        e.check(first and first[0].split()[0] == "<module>" and "spin_b" in texts[3],
                "%pcollect -view top-down: the tree starts at the statement (<module>), "
                "spin_b under it")
        html = "".join(text(o.get("data", {}).get("text/html", ""))
                       for o in done["cells"][4]["outputs"])
        e.check("<iframe srcdoc=" in html and "spin_b" in html and len(html) > 10000,
                "%%pcollect -html: the HTML report's page inline (%d bytes)" % len(html))
        e.check("threads of pcollect: []" in texts[5], "after the cells no thread of "
                "pcollect's agent runs in the kernel (%s; ZMQ's are the kernel's own, started "
                "for the HTML output)" % texts[5].strip())


if __name__ == "__main__":
    main()
