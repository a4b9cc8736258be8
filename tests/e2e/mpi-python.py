#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""MPI calls made from Python (mpi4py) appear under the Python frames that made them.

tests/progs/python/mpi_ring.py on four ranks of two simulated nodes under Debian's
/usr/bin/python3 and its python3-mpi4py (built with Open MPI): ring_a() and ring_b() call
the same comm.Sendrecv() through the same helper, 30 and 20 times a rank, so the calls leave
the extension from one return address; each function must hold exactly its calls, with
their bytes, and py_meet() its MPI_Barrier. Skips (77) without mpirun.openmpi or mpi4py.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2elib as e  # noqa: E402
import mpilib  # noqa: E402

PYTHON = "/usr/bin/python3"
RANKS, A, B = 4, 30, 20


def calls_under(res, function, mpi_function):
    """MPI Calls of mpi_function made with function on the stack, over the job."""
    total = 0
    for r in e.rows(res, "-view", "mpi", "-filter", "function=" + function):
        if r["Function"] == mpi_function:
            total += int(r["Calls"])
    return total


def main():
    mpilib.launcher("openmpi")
    mpilib.shim("openmpi")
    if not os.access(PYTHON, os.X_OK) or e.run([PYTHON, "-c", "import mpi4py"]).returncode:
        e.skip("%s cannot import mpi4py: install python3-mpi4py" % PYTHON,
               needs="python3-mpi4py")
    script = os.path.join(e.SOURCE, "tests", "progs", "python", "mpi_ring.py")
    with e.Workdir("mpi-python") as w:
        res = w.join("res")
        cp = mpilib.job("openmpi", ("py0", "py1"), 2, res,
                        [PYTHON, script, "200000", str(A), str(B)])
        e.check(cp.stdout.count(" done, sum 6") == RANKS,
                "every Python rank ran to its end (%r)" % cp.stdout)
        cells = mpilib.mpi_cells(res)
        mpilib.check_ring(cells, RANKS, A + B, "mpi4py ring")
        for fn, n in (("ring_a", A), ("ring_b", B)):
            got = calls_under(res, fn, "MPI_Sendrecv")
            e.check(got == RANKS * n, "%s holds its %d MPI_Sendrecv calls (got %d)"
                    % (fn, RANKS * n, got))
        got = calls_under(res, "py_meet", "MPI_Barrier")
        e.check(got == RANKS, "py_meet holds the %d MPI_Barrier calls (got %d)"
                % (RANKS, got))
        rows = e.rows(res, "-view", "top-down", "-metric", "MPI Calls", "-threshold",
                           "0", "-filter", "function=ring_b")
        names = [r["Function Stack"].strip() for r in rows]
        e.check("main" in names and "ring_b" in names and "exchange" in names,
                "top-down: main -> ring_b -> exchange, Python frames over the call (%s)"
                % names)


if __name__ == "__main__":
    main()
