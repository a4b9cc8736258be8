#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Parallel jobs: one result per node, shared by that node's ranks, each rank known.

Run with "simulated" or "mpirun". The first simulates two nodes with two ranks each on this machine (PCOLLECT_HOSTNAME and the
Slurm variables), all four launchers started at once. The second runs a real `mpirun -np 2` and
is skipped, saying why, when Open MPI is not installed. Rank r burns (r + 1) units of CPU time
(200 ms each, 300 ms under MPI), and each rank's samples must say so, within the tolerance of
e2elib.Sampled.
"""
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2elib as e  # noqa: E402
import mpilib  # noqa: E402

RANK_SQL = """
SELECT p.rank, p.host, SUM(s.value)
FROM samples s JOIN metrics m ON m.id = s.metric_id AND m.name = 'CPU Time'
JOIN threads t ON t.id = s.thread_id JOIN processes p ON p.id = t.process_id
JOIN stacks st ON st.id = s.stack_id JOIN frames fr ON fr.id = st.frame_id
JOIN functions f ON f.id = fr.function_id
WHERE f.name = 'rank_work' GROUP BY p.id ORDER BY p.rank
"""


def rank_times(result):
    """{rank: CPU ns sampled in rank_work} of the processes of a finalized result, and their
    host names."""
    rows = e.db_rows(result, RANK_SQL)
    return {r: ns for r, _, ns in rows}, {h for _, h, _ in rows}


def check_ranks(result, times, unit_ns, msg):
    """Rank r's samples in rank_work hold (r + 1) units of CPU time."""
    for r, t in sorted(times.items()):
        stats = e.db_sampled(result, "p.rank = ?", (r,))
        # The budget is read on a clock that moves at ticks: a tick either way, a unit.
        e.check_time(stats, t, (r + 1) * unit_ns, "%s: rank %d, %d units of rank_work"
                     % (msg, r, r + 1), stretches=1, extra_ns=(r + 1) * e.TICK_NS)


def simulated_nodes(w):
    pcollect, prog = e.tool("pcollect"), e.prog("rank-work")
    res = w.join("res")
    procs = []
    for rank, node in enumerate(["nodeA", "nodeA", "nodeB", "nodeB"]):
        env = dict(os.environ, SLURM_JOB_ID="4242", SLURM_STEP_ID="0",
                   SLURM_PROCID=str(rank), PCOLLECT_HOSTNAME=node, **e.tool_env())
        procs.append(subprocess.Popen(
            [pcollect, "-collect", "hotspots", "-r", res, "-finalization-mode=none",
             "-knob", "sampling-interval=2", "-quiet", "--", prog], env=env, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True))
    for p in procs:
        out, err = p.communicate(timeout=120)
        e.check(p.returncode == 0, "simulated rank exits 0 (stderr: %s)" % err.strip())
    e.check(not os.path.exists(res), "no directory named plainly '%s' in a parallel job" % res)
    for node, ranks in (("nodeA", {0, 1}), ("nodeB", {2, 3})):
        d = res + "." + node
        e.check(os.path.isdir(d), "node result %s exists" % d)
        e.finalize(d)
        times, hosts = rank_times(d)
        e.check(set(times) == ranks, "%s holds ranks %s (got %s)" % (node, ranks, set(times)))
        e.check(hosts == {node}, "%s processes carry host %s (got %s)" % (node, node, hosts))
        check_ranks(d, times, 200000000, node)

    # A later job on a node whose directory holds the first job's data is refused.
    env = dict(os.environ, SLURM_JOB_ID="4343", SLURM_STEP_ID="0", SLURM_PROCID="0",
               PCOLLECT_HOSTNAME="nodeA")
    cp = e.run([pcollect, "-collect", "hotspots", "-r", res, "-quiet", "--", prog],
               env=e.tool_env(env))
    e.check(cp.returncode == 2 and "res.nodeA" in cp.stderr,
            "another job is refused on res.nodeA with exit 2 (got %d: %s)"
            % (cp.returncode, cp.stderr.strip()))


def real_mpirun(w):
    mpirun = shutil.which("mpirun")
    prog = os.path.join(e.BUILD, "tests", "progs", "mpi-ranks")
    if not mpirun or not os.access(prog, os.X_OK):
        return "mpirun or tests/progs/mpi-ranks absent (install openmpi-bin libopenmpi-dev)"
    res = w.join("mpires")
    env = dict(os.environ, PCOLLECT_HOSTNAME="mpinode", **mpilib.mpi_vars("openmpi"))
    cp = e.run([mpirun, "--oversubscribe", "-np", "2", e.tool("pcollect"), "-collect",
                "hotspots", "-r", res, "-finalization-mode=none", "-quiet", "--", prog],
               env=e.tool_env(env), timeout=180)
    e.check(cp.returncode == 0, "mpirun -np 2 pcollect exits 0 (stderr: %s)" % cp.stderr[-800:])
    e.check(sorted(cp.stdout.split("\n"))[1:] == ["rank 0 of 2 done", "rank 1 of 2 done"],
            "both ranks ran and printed (%r)" % cp.stdout)
    d = res + ".mpinode"
    e.finalize(d)
    times, _hosts = rank_times(d)
    e.check(set(times) == {0, 1}, "ranks 0 and 1 found in one node result (got %s)" % times)
    check_ranks(d, times, 300000000, "mpirun")
    return None


def main():
    part = sys.argv[1] if len(sys.argv) > 1 else "simulated"
    with e.Workdir("ranks") as w:
        if part == "simulated":
            simulated_nodes(w)
        else:
            why = real_mpirun(w)
            if why:
                e.skip(why, needs=mpilib.PACKAGES["openmpi"].split())


if __name__ == "__main__":
    main()
