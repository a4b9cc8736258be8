#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""An OpenMP region whose thread 0 works twice as long as thread 1 (tests/progs/omp-imbalance,
built with GCC's libgomp, or with clang and LLVM's libomp: argument gomp or libomp), through
pcollect -collect threading, pfinalize and preport, with OMP_WAIT_POLICY=active so that the
waiting thread spins (sampled with the task-clock event: libomp's spinning thread yields the
processor at every turn, which makes a CPU-time timer's signals come late). The summary's OpenMP region section shows each thread's busy time (its
CPU Time in the region less its Spin Time), the imbalance (slowest - mean) / slowest, and
the Spin Time of the waiting thread is the CPU time it measured while it waited (and thread 0's
no more than it used while the team started); all within
the sampling tolerance of e2elib.Sampled. Where the agent records the region (OMPT), the
section comes from the records: each thread's wait at the barrier within 5% + 3 ms of what
the program measured, the Region Time between the slower thread's work and the program's wall
around the region, and the imbalance of those within 3 points."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2elib as e  # noqa: E402
from e2elib import rows  # noqa: E402

PROGS = {"gomp": "omp-imbalance", "libomp": "omp-imbalance-libomp"}


def main():
    runtime, prog = e.omp_program(PROGS)
    with e.Workdir("omp-" + runtime) as w:
        res = w.join("res")
        r = e.pcollect([prog], result=res, analysis="threading",
                       options=["-knob", "sampling-interval=1", "-knob",
                                "sampling-clock=task-clock"],
                       env={"OMP_WAIT_POLICY": "active"})
        e.check(r.returncode == 0, "%s: pcollect exits 0 (%s)" % (runtime, r.stderr.strip()))
        k = dict((a, int(b)) for a, b in (x.split("=") for x in r.stdout.split()))
        e.check(e.pfinalize(res).returncode == 0, "pfinalize")
        tid = [k["thread0_tid"], k["thread1_tid"]]
        busy = [k["thread0_busy_ns"], k["thread1_busy_ns"]]
        stats = [e.db_sampled(res, "t.tid = ?", (t,)) for t in tid]
        s = rows(res, "-view", "summary")
        sections = sorted({x["Section"] for x in s if x["Section"].startswith("OpenMP Region")})
        e.check(len(sections) == 1, "%s: the summary has one OpenMP region: %s" % (
            runtime, sections))
        val = {x["Metric"]: x["Value"] for x in s if x["Section"] == sections[0]}
        names = dict(e.db_rows(res, "SELECT tid, name FROM threads"))
        label = ["%s (TID %d)" % (names[t], t) for t in tid]
        recorded = "Region Time" in val
        if recorded:
            # The agent's records: each thread's wait in the implicit barrier, measured.
            for i in (0, 1):
                got = e.ns(val["%s Waiting at the Barrier" % label[i]])
                want = k["thread%d_wait_ns" % i]
                e.check(abs(got - want) <= 0.05 * want + 3000000,
                        "%s: thread %d waited %.1f ms at the barrier (program: %.1f ms)" % (
                            runtime, i, got / 1e6, want / 1e6))
            # The region's time as recorded (the runtime's begin and end of the region):
            # within the program's wall around the fork and join (which also holds the
            # runtime's first start of its threads, before the region begins: 200 ms on a
            # loaded machine), and at least the slower thread's work.
            d = e.ns(val["Region Time"])
            ww = max(k["thread0_work_wall_ns"], k["thread1_work_wall_ns"])
            e.check(ww - 3000000 <= d <= k["region_ns"] + 3000000,
                    "%s: Region Time %.1f ms, between the slower thread's work (%.1f ms) and "
                    "the program's wall around the region (%.1f ms)"
                    % (runtime, d / 1e6, ww / 1e6, k["region_ns"] / 1e6))
            # The imbalance of the busy times (the region's time less each thread's wait),
            # the waits the program measured. Not from the threads' work walls: on a loaded
            # machine the worker starts its work late, and the region holds that start.
            bt = [d - k["thread%d_wait_ns" % i] for i in (0, 1)]
            want = 100.0 * (max(bt) - sum(bt) / 2) / max(bt)
            e.check(abs(float(val["Imbalance"]) - want) <= 3.0,
                    "%s: imbalance %s%% (of the program's waits: %.1f%%)"
                    % (runtime, val["Imbalance"], want))
        else:
            # From the CPU samples: busy = CPU Time in the region less its Spin Time.
            tol = []
            for i in (0, 1):
                got = e.ns(val["%s Busy Time" % label[i]])
                e.check_time(stats[i], got, busy[i], "%s: thread %d's busy time" % (runtime, i),
                             stretches=1)
                tol.append(stats[i].time_tolerance_ns(busy[i], stretches=1))
            want = 100.0 * (busy[0] - (busy[0] + busy[1]) / 2) / busy[0]
            # imbalance = 1/2 - b1 / (2 b0): each busy time moves it by its own error
            err = 50.0 * (tol[1] / busy[0] + busy[1] * tol[0] / busy[0] ** 2)
            got = float(val["Imbalance"])
            e.check(abs(got - want) <= err + 0.05, "%s: imbalance %.1f%%, the program's %.1f%% "
                    "(+- %.1f)" % (runtime, got, want, err))
            e.check(e.ns(val["%s Waiting for the Slowest" % label[1]]) > 0 and
                    e.ns(val["%s Waiting for the Slowest" % label[0]]) == 0,
                    "%s: thread 1 waits for thread 0, the slowest" % runtime)
        # Spin Time: what the waiting thread burned while it waited, nothing for the other.
        spin = dict(e.db_rows(res, "SELECT t.tid, sum(s.value) FROM samples s JOIN threads t ON "
                                   "t.id = s.thread_id JOIN metrics m ON m.id = s.metric_id "
                                   "WHERE m.name = 'Spin Time' GROUP BY t.tid"))
        e.check_time(stats[1], spin.get(tid[1], 0), k["thread1_spin_ns"],
                     "%s: thread 1's Spin Time" % runtime, stretches=1,
                     extra_ns=10000000)  # spinning on until the program exits
        # Thread 0 waits at no barrier: it may spin only while the runtime starts the team,
        # before its work (the program measures that CPU time).
        e.check(spin.get(tid[0], 0) <= k["start_cpu_ns"] + stats[0].quantum_ns + 10000000,
                "%s: thread 0, the slowest, spins %.1f ms (it used %.1f ms of CPU time "
                "while the team started)" % (runtime, spin.get(tid[0], 0) / 1e6,
                                             k["start_cpu_ns"] / 1e6))
        cpu = dict(e.db_rows(res, "SELECT t.tid, sum(s.value) FROM samples s JOIN threads t ON "
                                  "t.id = s.thread_id JOIN metrics m ON m.id = s.metric_id "
                                  "WHERE m.name = 'CPU Time' GROUP BY t.tid"))
        e.check(spin.get(tid[1], 0) <= cpu[tid[1]], "%s: Spin Time is part of CPU Time" % runtime)
        # Thread Time: the spinning counted once, Elapsed = CPU + Sleeping Wait + Unattributed.
        for i in (0, 1):
            tt = {x["Metric"][len(label[i]) + 1:]: e.ns(x["Value"]) for x in s
                  if x["Section"] == "Thread Time" and x["Metric"].startswith(label[i] + " ")}
            sp = spin.get(tid[i], 0)
            e.check(sp == 0 or (abs(tt.get("Spin Time", -1) - sp) <= 1000000 and
                                abs(tt["Sleeping Wait Time"] - max(tt["Wait Time"] - sp, 0)) <=
                                1000000), "%s: thread %d's Spin Time %.1f ms and Sleeping Wait "
                    "Time in the summary: %s" % (runtime, i, sp / 1e6, sorted(tt)))
            sleeping = tt.get("Sleeping Wait Time", tt["Wait Time"])
            add = tt["CPU Time"] + sleeping + tt["Unattributed Time"]
            e.check(abs(add - tt["Elapsed Time"]) <= 3000000 or
                    (tt["Unattributed Time"] == 0 and add >= tt["Elapsed Time"]),
                    "%s: thread %d: Elapsed %.1f ms = CPU %.1f + Sleeping Wait %.1f + "
                    "Unattributed %.1f" % (runtime, i, tt["Elapsed Time"] / 1e6,
                                           tt["CPU Time"] / 1e6, sleeping / 1e6,
                                           tt["Unattributed Time"] / 1e6))


if __name__ == "__main__":
    main()
