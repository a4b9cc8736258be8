#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""-trace-mpi in programs without MPI: the shims are loaded and change nothing.

A shell pipeline, a C program and a Python one print to stdout and stderr and end with a
status of their own (an exit code, a signal); under pcollect -trace-mpi they must print the
same bytes and end the same way as run alone, the shims must be in their memory (so the test
can fail), and the result must hold no MPI record or metric.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2elib as e  # noqa: E402
import mpilib  # noqa: E402


def main():
    shims = [a for a in mpilib.ABIS
             if os.path.exists(os.path.join(e.BUILD, "collector",
                                            "libpcollect-mpi-%s.so" % a))]
    if not shims:
        e.skip("no MPI shim built (no Open MPI or MPICH headers at build time)",
               needs=["libopenmpi-dev", "libmpich-dev"])
    exit_code = e.prog("exit-code")
    programs = [
        ("shell", ["/bin/sh", "-c", "echo out; echo err >&2; printf 'a b\\n' | tr a-z A-Z; "
                   "exit 3"]),
        ("exit-code", [exit_code, "7"]),
        ("signal", [exit_code, "signal", "15"]),
        ("python", [sys.executable, "-c", "import sys; print('py out'); "
                    "print('py err', file=sys.stderr); sys.exit(5)"]),
    ]
    with e.Workdir("mpi-inert") as w:
        for name, argv in programs:
            alone = e.run(argv)
            res = w.join(name)
            traced = e.pcollect(argv, result=res, options=["-trace-mpi"])
            want = e.pcollect_code(alone.returncode)
            e.check(traced.returncode == want,
                    "%s: exit status %d as alone (got %d)" % (name, want, traced.returncode))
            e.check(traced.stdout == alone.stdout and traced.stderr == alone.stderr,
                    "%s: the same stdout and stderr as alone (%r %r / %r %r)" % (
                        name, traced.stdout, traced.stderr, alone.stdout, alone.stderr))
            streams = e.load_streams(res)
            kinds = {r["type"] for s in streams for r in s.records}
            e.check(not any(k.startswith("mpi_") for k in kinds),
                    "%s: no MPI record in its streams (%s)" % (name, sorted(kinds)))
        # The shims were there to do nothing: in the program's memory.
        res = e.collect(w, "maps", ["/bin/cat", "/proc/self/maps"], options=["-trace-mpi"],
                        finalize=True)
        for abi in shims:
            e.check("libpcollect-mpi-%s.so" % abi in res.stdout,
                    "the %s shim is mapped in a program without MPI" % abi)
        metrics = {m for (m,) in res.db("SELECT name FROM metrics")}
        e.check(not metrics & {"MPI Time", "MPI Calls"},
                "its result declares no MPI metric (%s)" % sorted(metrics))


if __name__ == "__main__":
    main()
