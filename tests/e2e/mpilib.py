# SPDX-License-Identifier: MIT
"""What the MPI tests share (tests/e2e/mpi-*.py): each MPI as Debian packages it, its
launcher run as root as the machine needs, a job of ranks spread over simulated nodes.

An MPI is named by its ABI: "openmpi" (mpirun.openmpi, mpicc.openmpi) or "mpich"
(mpirun.mpich). A test of an MPI whose launcher or test program is missing skips (77) with the
reason; scripts/dev installs both (openmpi-bin libopenmpi-dev mpich libmpich-dev).
"""
import os
import shutil

import e2elib as e

ABIS = ("openmpi", "mpich")
# The Debian packages of each MPI's launcher and headers (scripts/dev installs them).
PACKAGES = {"openmpi": "openmpi-bin libopenmpi-dev", "mpich": "mpich libmpich-dev"}


def launcher(abi):
    """mpirun of this MPI, or skip saying it is not installed."""
    if abi not in ABIS:
        e.fail("unknown MPI '%s' (one of %s)" % (abi, ", ".join(ABIS)))
    path = shutil.which("mpirun." + abi)
    if not path:
        e.skip("mpirun.%s not found: install %s" % (abi, PACKAGES[abi]),
               needs=PACKAGES[abi].split())
    return path


def built(name, why, needs=()):
    """A program or shim of the build tree, or skip saying why it is absent (needs: the
    packages that would have built it)."""
    path = os.path.join(e.BUILD, name)
    if not os.path.exists(path):
        e.skip("%s not built (%s)" % (name, why), needs=needs)
    return path


def shim(abi):
    return built(os.path.join("collector", "libpcollect-mpi-%s.so" % abi),
                 "no %s headers at build time" % abi, PACKAGES[abi].split())


def mpi_vars(abi):
    """What this MPI needs in the environment here: Open MPI runs as root only when told,
    and its shared memory transport without the single-copy mechanism a container may
    forbid."""
    if abi == "openmpi":
        return dict(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
                    OMPI_MCA_btl_vader_single_copy_mechanism="none")
    return {}


def env(abi, extra=None):
    """The environment of a launch (mpi_vars(), and tool_env(): pcollect runs under it)."""
    out = mpi_vars(abi)
    out.update(extra or {})
    return e.tool_env(out)


def job(abi, nodes, per_node, result, target, options=(), timeout=300):
    """Run target (a list) as len(nodes) x per_node ranks, per_node on each simulated node
    (PCOLLECT_HOSTNAME), each under pcollect -trace-mpi -r result, finalization none. MPMD
    syntax, which both launchers take: -np N env VAR=node cmd : -np N ... Returns the run."""
    argv = [launcher(abi)]
    if abi == "openmpi":
        argv.append("--oversubscribe")
    for i, node in enumerate(nodes):
        if i:
            argv.append(":")
        argv += ["-np", str(per_node), "env", "PCOLLECT_HOSTNAME=" + node,
                 e.tool("pcollect"), "-collect", "hotspots", "-trace-mpi", "-r", result,
                 "-finalization-mode=none", "-quiet"] + list(options) + ["--"] + list(target)
    cp = e.run(argv, env=env(abi), timeout=timeout)
    e.check(cp.returncode == 0, "%s job of %d ranks on %d nodes exits 0 (stderr: %s)" % (
        abi, len(nodes) * per_node, len(nodes), cp.stderr[-1500:]))
    return cp


def rank_stats(res, nodes, rank):
    """e2elib.Sampled of a rank's samples, from the node result (res.NODE) that holds them."""
    for node in nodes:
        stats = e.db_sampled("%s.%s" % (res, node), "p.rank = ?", (rank,))
        if stats.weight:
            return stats
    e.fail("no samples of rank %d in any node's result" % rank)


def mpi_cells(res, *args):
    """-view mpi -group-by rank,function: {(rank, function): row}."""
    return {(int(r["Rank"]), r["Function"]): r
            for r in e.rows(res, "-view", "mpi", "-group-by", "rank,function", *args)}


def check_ring(cells, ranks, rounds, what, fn="MPI_Sendrecv", sent=True, received=True,
               bytes_step=1024):
    """Rank r sends (r + 1) x bytes_step to r + 1 and receives what r - 1 sends, rounds
    times: calls and bytes exact per rank."""
    for r in range(ranks):
        row = cells.get((r, fn))
        e.check(row is not None and int(row["Calls"]) == rounds,
                "%s: rank %d made %d %s calls (got %s)" % (
                    what, r, rounds, fn, row and row["Calls"]))
        want_sent = rounds * (r + 1) * bytes_step if sent else 0
        want_recv = rounds * ((r - 1) % ranks + 1) * bytes_step if received else 0
        e.check(int(row["Bytes Sent"]) == want_sent and
                int(row["Bytes Received"]) == want_recv,
                "%s: rank %d %s sent %d and received %d bytes (got %s and %s)" % (
                    what, r, fn, want_sent, want_recv, row["Bytes Sent"],
                    row["Bytes Received"]))
