#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""-collect memory-consumption on Python (one interpreter, the argument): the big bytearray
and list allocations of tests/progs/python/mem.py land on the Python functions and lines that
made them, with their bytes (CPython adds a few object headers and the growth of the list
that holds them: at most SLACK more), all freed, and held together at the process's peak.
numpy's arrays, allocated by its C code, land on the Python line that asked for them in
-call-stack-mode python-only (where numpy is importable: /usr/bin/python3's python3-numpy)."""

import e2elib as e
import pylib

MB = 1 << 20
SLACK = 64 * 1024
# marker -> (function, bytes the line asks for)
SITES = {
    "# BYTEARRAY": ("make_bytearrays", 8 * (4 * MB + 1)),
    "# LIST": ("make_lists", 4 * 8 * MB),
}
NUMPY = ("# NUMPY", "make_numpy", 2 * 8 * MB)


def by_line(res, src, *args):
    out = {}
    for r in e.rows(res, "-view", "hotspots", "-group-by", "source-line", *args):
        if r["Source File"] == src and r["Source Line"]:
            out[int(r["Source Line"])] = r
    return out


def check_line(what, rows, line, want):
    r = rows.get(line)
    e.check(r is not None, "%s: line %d has a row of its own" % (what, line))
    got = {m: int(float(r[m + ":Self"] or 0)) for m in
           ("Allocated Bytes", "Allocations", "Freed Bytes", "Leaked Bytes", "Peak Bytes")}
    print("%s: line %d %s" % (what, line, got))
    e.check(want <= got["Allocated Bytes"] <= want + SLACK,
            "%s: line %d allocated %d bytes, expected %d to %d"
            % (what, line, got["Allocated Bytes"], want, want + SLACK))
    e.check(got["Freed Bytes"] == got["Allocated Bytes"] and got["Leaked Bytes"] == 0,
            "%s: all freed, nothing leaked" % what)
    e.check(got["Peak Bytes"] >= want, "%s: held at the process's peak (%d of %d bytes)"
            % (what, got["Peak Bytes"], want))
    return got["Allocated Bytes"]


def main():
    python = pylib.interpreter(pylib.label_arg())
    src = pylib.program("mem.py")
    with e.Workdir("py-memory") as w:
        res = e.collect(w, "res", [python, src], analysis="memory-consumption")
        has_numpy = res.stdout == "numpy\n"
        e.check(has_numpy or res.stdout == "no numpy\n", "the program's output is unchanged")
        # Every interpreter here uses the C library's malloc, which the agent must know as
        # its own (a non-PIE python's canonical malloc is its PLT entry: Debian's 3.11).
        log = res.agent_log()
        e.check("has no hooks" not in log,
                "the agent records the interpreter's malloc (its log: %r)" % log[-2000:])
        e.finalize(res)

        lines = by_line(res, src)
        held = 0
        for marker, (func, want) in SITES.items():
            held += check_line(func, lines, e.source_line(src, marker), want)
        funcs = {x["Function"]: x for x in e.rows(res, "-view", "hotspots")}
        for func, want in SITES.values():
            x = funcs.get(func)
            e.check(x is not None and x["Module"] == "[python]" and
                    want <= int(float(x["Allocated Bytes:Self"])) <= want + SLACK,
                    "hotspots by function: %s is a Python function with its bytes" % func)
        if has_numpy:
            held += check_line("numpy", by_line(res, src, "-call-stack-mode", "python-only"),
                               e.source_line(src, NUMPY[0]), NUMPY[2])
        else:
            print("numpy not importable by this interpreter: its arrays are not checked")
        # the largest: a wrapper script (3.14, 3.15 here) is a process image of its own
        peak = e.db_rows(res, "select max(peak_bytes) from process_memory")[0][0]
        e.check(peak >= held, "the process's peak %d holds the %d bytes held together"
                % (peak, held))
    print("ok")


if __name__ == "__main__":
    main()
