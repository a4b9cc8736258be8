#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Python profilers side by side in one run: cProfile, CPython 3.15's own sampler
(`python3.15 -m profiling.sampling`, 1 kHz, CPU mode, all threads) and `python3 -m pcollect`
(1 ms), on the workloads of bench/python-sampler-work.py (pure Python, a thread pool,
asyncio, numpy where the interpreter has it), each of which measures the CPU time its
heavy() and light() took (2:1 by construction). Per tool and workload: the CPU time of the
whole run against the plain run's (median of the interleaved rounds, benchlib), and the
tool's error: how far its share of heavy in heavy + light (pstats cumtime, what each tool
writes) is from the share the program measured, in points, and its heavy + light seconds
against the measured ones.

usage: bench/python-samplers.py [BUILD_DIR] [ROUNDS] [PYTHON] [--scale S]
       defaults: build, 5, 3.15 (a label of tests/pythons.py or an executable)
"""
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(TOP, "bench"))
import benchlib  # noqa: E402

WHO = "python-samplers"
WORK = os.path.join(TOP, "bench", "python-sampler-work.py")
NAMES = {"heavy": ("heavy", "heavy_np"), "light": ("light", "light_np")}


READ = """
import json, pstats, sys
st = pstats.Stats(sys.argv[1]).stats
names = json.loads(sys.argv[2])
print(json.dumps({k: sum(v[3] for key, v in st.items() if key[2] in n) for k, n in names.items()}))
"""


def cumtimes(py, path):
    """{heavy, light: cumtime} of a pstats file, read by the interpreter that wrote it (the
    file is its marshal)."""
    cp = subprocess.run([py, "-c", READ, path, json.dumps(NAMES)], stdout=subprocess.PIPE,
                        check=True)
    return json.loads(cp.stdout)


def main():
    ap = benchlib.python_parser(WHO, 5, "3.15")
    a = ap.parse_args()
    py = benchlib.interpreter(a.python, WHO)
    build = os.path.abspath(a.build)
    work = tempfile.mkdtemp(prefix=WHO + ".")
    env_mod = os.path.join(build, "api", "python")
    os.environ["PYTHONPATH"] = env_mod + os.pathsep + os.environ.get("PYTHONPATH", "")
    has_sampler = subprocess.run([py, "-c", "import profiling.sampling"],
                                 stderr=subprocess.DEVNULL).returncode == 0
    loads = ["pure", "threads", "asyncio"]
    if subprocess.run([py, "-c", "import numpy"], stderr=subprocess.DEVNULL).returncode == 0:
        loads.append("numpy")
    else:
        print("%s: numpy not installed for %s: its workload left out" % (WHO, py))
    if not has_sampler:
        print("%s: %s has no profiling.sampling (3.15+): left out" % (WHO, py))
    try:
        for load in loads:
            out = lambda tool: os.path.join(work, "%s-%s" % (load, tool))  # noqa: E731
            tools = {
                "plain": lambda: [py, WORK, load, out("plain.json"), a.scale],
                "cProfile": lambda: [py, "-m", "cProfile", "-o", out("cProfile.pstats"), WORK,
                                     load, out("cProfile.json"), a.scale],
                "pcollect-1ms": lambda: [py, "-m", "pcollect", "-quiet", "-knob",
                                         "sampling-interval=1", "-o",
                                         out("pcollect-1ms.pstats"), WORK, load,
                                         out("pcollect-1ms.json"), a.scale],
            }
            if has_sampler:
                tools["sampling-1khz"] = lambda: [
                    py, "-m", "profiling.sampling", "run", "-r", "1khz", "--mode", "cpu", "-a",
                    "--pstats", "-o", out("sampling-1khz.pstats"), WORK, load,
                    out("sampling-1khz.json"), a.scale]
            errs = {t: [] for t in tools}
            secs = {t: [] for t in tools}
            times = {n: [] for n in tools}
            for _ in range(a.rounds):
                for name, argv in tools.items():
                    times[name].append(benchlib.run(argv(), WHO))
                    if name == "plain":
                        continue
                    with open(out(name + ".json")) as f:
                        took = json.load(f)
                    got = cumtimes(py, out(name + ".pstats"))
                    want = took["heavy"] / (took["heavy"] + took["light"])
                    share = got["heavy"] / max(got["heavy"] + got["light"], 1e-9)
                    errs[name].append(100 * abs(share - want))
                    secs[name].append((got["heavy"] + got["light"]) /
                                      (took["heavy"] + took["light"]))
            print("\nworkload %s with %s, %d interleaved rounds" % (load, py, a.rounds))
            benchlib.print_table(times, list(tools))
            for name in tools:
                if name != "plain":
                    print("  %-14s heavy share error %5.1f points (median; max %5.1f), "
                          "heavy+light seconds %.2fx the measured" % (
                              name, statistics.median(errs[name]), max(errs[name]),
                              statistics.median(secs[name])))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
