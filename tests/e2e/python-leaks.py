#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""memory-consumption's Top Leaking Call Sites are the program's leaks (issue 23, item 12).
CPython frees at its exit what the program kept but not what it made for itself (interned
strings, static types, its allocator's arenas mapped at start-up, what the standard library's
imports made): those bytes are live at the end, yet no leak of the program's. Known answer
(tests/progs/python/leak.py): one true leak of 3 MiB + 4321 bytes (ctypes' malloc, the address
dropped) at a known line, and 8 MiB the program keeps in a global to its end, which the
interpreter frees. The summary's Top Leaking Call Sites must list the leak first, exact to the
byte, and no site of the interpreter's own code (pymalloc's arenas, the import machinery's
frozen modules, unnamed code of the interpreter) nor the global; its Memory section says how
much the interpreter left (Left At Exit By the Python Interpreter, with a note). And a C
program's leak is reported as before: tests/progs/mem-known's 4321 bytes at leak_site, with no
interpreter row. Output and exit code as without the collector."""
import os

import e2elib as e
import pylib

LEAK = 3 * 1024 * 1024 + 4321
HELD = 8 * 1024 * 1024  # leak.py's global


def leaking_sites(text):
    """The Top Leaking Call Sites rows of a text summary: [(name, bytes)]."""
    out, on = [], False
    for line in text.splitlines():
        if not line.strip():
            on = False
        elif line == "Top Leaking Call Sites":
            on = True
        elif on:
            name, value = line.strip().rsplit(":", 1)
            out.append((name, int(value.split()[0])))
    return out


def main():
    python = pylib.interpreter(pylib.label_arg())
    prog = pylib.program("leak.py")
    line = e.source_line(prog, "LEAK-LINE")
    held = e.source_line(prog, "HELD-LINE")
    with e.Workdir("py-leaks") as w:
        # What leak.py and mem-known print is known: they are not run alone first to learn it.
        res = e.collect(w, "py", [python, prog], analysis="memory-consumption",
                        stdout="leaked %d bytes, held %d bytes to the end\n" % (LEAK, HELD),
                        finalize=True)
        text = e.preport("-r", res, "-report", "summary").stdout
        sites = leaking_sites(text)
        print("Top Leaking Call Sites: %s" % sites)
        e.check(sites and sites[0] == ("leak (leak.py:%d)" % line, LEAK),
                "the first leaking site is leak.py:%d with %d bytes, exact" % (line, LEAK))
        own = [n for n, _v in sites if "leak.py:%d" % held in n or "frozen" in n or
               "obmalloc" in n or "_PyMem" in n]
        rest = sum(v for _n, v in sites[1:])
        e.check(not own and rest < 64 * 1024,
                "no leaking site is the interpreter's own code (its arenas hold 256 KiB or "
                "more) or the global the interpreter frees: got %s, %d bytes besides the leak "
                "(a wrapper script's shell, stacks cut at the depth limit)" % (own, rest))
        left = int(e.summary_value(text, "Left At Exit By the Python Interpreter").split()[0])
        e.check(left > 0 and "left by the Python interpreter itself" in text,
                "the Memory section says what the interpreter left: %d bytes, with a note"
                % left)
        c = e.collect(w, "c", [e.prog("mem-known")], analysis="memory-consumption",
                      stdout="done\n", finalize=True)
        text = e.preport("-r", c, "-report", "summary").stdout
        sites = leaking_sites(text)
        cline = e.source_line(os.path.join(e.SOURCE, "tests", "progs", "mem-known.c"),
                              "leaked = malloc(4321)")
        e.check(sites == [("leak_site (mem-known.c:%d)" % cline, 4321)] and
                "Left At Exit" not in text,
                "a C program's leak as before: leak_site's 4321 bytes alone (got %s)" % sites)


if __name__ == "__main__":
    main()
