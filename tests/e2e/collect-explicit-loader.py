#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Programs started through an explicit loader ("ld-linux-x86-64.so.2 ./prog", as wrapper
scripts and cluster module systems do), whose /proc/self/exe is the loader:

  c       tests/progs/cpu-split: the 60/30/10 split on work_sixty, work_thirty, work_ten
          within the samples' tolerance (e2elib.Sampled), every one of them named and in
          the program's module (not func@0x... in the loader's), and main on every stack;
  python  the distribution's interpreter (linked into its executable) on
          tests/progs/python/split.py: its Python functions split 60/30/10 within the
          samples' tolerance,
          the interpreter's module the program, not the loader.

The loader is the program's own PT_INTERP, read from the file."""
import struct
import sys

import e2elib as e
import pylib

ROUNDS = 4  # cpu-split's and split.py's rounds: each function a stretch of CPU time a round


def pt_interp(path):
    """The program interpreter an ELF64 file names, or None."""
    with open(path, "rb") as f:
        head = f.read(64)
        if head[:4] != b"\x7fELF" or head[4] != 2:
            return None
        phoff, = struct.unpack_from("<Q", head, 32)
        phentsize, phnum = struct.unpack_from("<HH", head, 54)
        for i in range(phnum):
            f.seek(phoff + i * phentsize)
            p_type, _flags, off, _va, _pa, size = struct.unpack("<IIQQQQ", f.read(40))
            if p_type == 3:  # PT_INTERP
                f.seek(off)
                return f.read(size).rstrip(b"\0").decode()
    return None


def check_known_split(res, names, what):
    hs = {r["Function"]: r for r in e.rows(res, "-view", "hotspots")}
    got = e.shares([e.secs(hs[n]) if n in hs else 0.0 for n in names])
    print("%s: %s" % (what, dict(zip(names, ["%.1f" % g for g in got]))))
    stats = e.db_sampled(res)
    for n, g, want in zip(names, got, (60, 30, 10)):
        e.check_share(stats, g / 100, want / 100, "%s: %s" % (what, n), stretches=ROUNDS)
    return hs


def part_c(w):
    prog = e.prog("cpu-split")
    loader = pt_interp(prog)
    if not loader:
        e.skip("%s names no program interpreter" % prog)
    res = e.collect(w, "res-c", [loader, prog, ROUNDS], finalize=True)
    e.check(res.stdout == "rounds=4\n", "'%s %s' runs as without the loader" % (loader, prog))
    hs = check_known_split(res, ["work_sixty", "work_thirty", "work_ten"], "C through " + loader)
    mods = {n: hs[n]["Module"] for n in ("work_sixty", "work_thirty", "work_ten") if n in hs}
    e.check(set(mods.values()) == {"cpu-split"},
            "the work functions are named, in the program's module: %s" % mods)
    anon = [n for n, r in hs.items() if n.startswith("func@") and e.secs(r) > 0.02]
    e.check(not anon, "no unnamed function holds time: %s" % anon[:5])
    td = e.rows(res, "-view", "top-down")
    e.check(any(r["Function Stack"].strip() == "main" for r in td), "main is on the stacks")


def part_python(w):
    pylib.interpreter("debian-3.11")  # skips, saying why, when there is none
    binary = pylib.pythons.for_label("debian-3.11").binary
    loader = pt_interp(binary)
    if not loader:
        e.skip("%s names no program interpreter" % binary)
    res = e.collect(w, "res-py", [loader, binary, pylib.program("split.py")], interval=1,
                    finalize=True)
    check_known_split(res, ["spin_a", "spin_b", "spin_c"], "Python through " + loader)
    db = e.Db(res)
    interp = {name for name, role in db.modules.values() if role == "interpreter"}
    e.check(interp == {binary.rsplit("/", 1)[-1]},
            "the interpreter's module is the program %s, not the loader: %s" % (binary, interp))


def main():
    if len(sys.argv) != 2 or sys.argv[1] not in ("c", "python"):
        e.fail("usage: %s c|python" % sys.argv[0])
    with e.Workdir("explicit-loader-" + sys.argv[1]) as w:
        (part_c if sys.argv[1] == "c" else part_python)(w)


if __name__ == "__main__":
    main()
