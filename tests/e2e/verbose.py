#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""-verbose (-v) tells the decisions behind a result.

A program's binary moves after the collection: `pfinalize -v -search-dir` counts the files of
that name and names the copy it took (a search directory that does not exist is a usage error, with
or without -v). A rebuilt binary at the original path is refused for its build-id. A copy
stripped of DWARF falls back to .symtab, a library stripped of .symtab too to .dynsym, and -v
says which. pcollect -v names the agent and the result directory, preport -v the database and
where a source file was looked for. Without -v no debug line is printed; -v with -quiet is a
usage error."""
import os
import shutil
import subprocess

import e2elib as e

os.environ["PCOLLECT_NO_CACHE"] = "1"  # the cache would answer before any file is searched


def debug_lines(stderr):
    return [l for l in stderr.splitlines() if ": debug: " in l]


def has(stderr, *parts):
    """A debug line containing every part, in order."""
    for line in debug_lines(stderr):
        pos = 0
        for p in parts:
            pos = line.find(p, pos)
            if pos < 0:
                break
            pos += len(p)
        else:
            return True
    return False


with e.Workdir("verbose") as w:
    exe, res = w.join("bin", "fin-lines"), w.join("res")
    bindir = os.path.dirname(exe)
    os.makedirs(bindir)
    shutil.copy2(e.prog("fin-lines"), exe)

    # pcollect -v: the launcher's decisions, then the finalization's.
    r = e.pcollect([exe, "60"], result=res, options=["-v"], quiet=False, finalization="full")
    e.check(r.returncode == 0, "pcollect -v runs fin-lines (%s)" % r.stderr.strip()[-300:])
    e.check(has(r.stderr, "pcollect: debug: launch: agent '", "libpcollect-agent.so'"),
            "pcollect -v names the agent it preloads")
    e.check(has(r.stderr, "debug: launch: result directory '%s'" % os.path.realpath(res)),
            "pcollect -v names the result directory")
    e.check(has(r.stderr, "debug: module: '%s': original path '%s' taken (same build-id)"
                % (exe, exe)), "pcollect -v shows the finalization's module search")

    # Moved: the original path is tried and missing, the -search-dir copy is taken.
    moved = os.path.join(w.join("elsewhere", "deep"), "fin-lines")
    os.makedirs(os.path.dirname(moved))
    shutil.move(exe, moved)
    f = e.pfinalize(res, ["-v", "-search-dir", w.join("elsewhere")])
    e.check(f.returncode == 0, "pfinalize -v -search-dir exits 0 (%s)" % f.stderr.strip()[-300:])
    print(f.stderr)
    e.check(has(f.stderr, "pfinalize: debug: search: '%s': " % w.join("elsewhere"),
                "files indexed"), "the search directory's index is told")
    e.check(has(f.stderr, "debug: module: '%s': 1 file named 'fin-lines' in the search "
                "directories" % exe), "the candidates found by name are counted")
    e.check(has(f.stderr, "debug: module: '%s': search-dir file '%s' taken (same build-id)"
                % (exe, moved)), "the copy in the search directory is taken, for its build-id")
    e.check(has(f.stderr, "debug: module: '%s': DWARF of '%s':" % (exe, moved), "units read"),
            "the DWARF read is named")
    e.check(has(f.stderr, "debug: finalize: ", "raw streams in"), "the streams read are told")

    # preport -v: the database, and where the source was looked for.
    p = e.run([e.tool("preport"), "-r", res, "-view", "source", "-source-object",
               "file=fin-lines.c", "-v"])
    e.check(p.returncode == 0, "preport -v -view source exits 0 (%s)" % p.stderr.strip()[-300:])
    e.check(has(p.stderr, "preport: debug: report: reading '%s'"
                % os.path.join(res, "result.db")), "preport -v names the database")
    e.check(has(p.stderr, "preport: debug: source: '", "fin-lines.c': "),
            "preport -v tells where the source file was looked for (%s)"
            % debug_lines(p.stderr)[-1:])

    # Without -v: the same run prints no debug line.
    f = e.pfinalize(res, ["-search-dir", w.join("elsewhere")])
    e.check(f.returncode == 0 and not debug_lines(f.stderr), "no debug line without -v")
    f = e.pfinalize(res, ["-search-dir", w.join("elsewhere"), "-search-dir", w.join("nowhere")])
    e.check(f.returncode == 2 and "'%s'" % w.join("nowhere") in f.stderr,
            "a search directory that does not exist is a usage error naming it (%s)"
            % f.stderr.strip()[-200:])

    # A rebuilt binary at the original path: refused for its build-id, and -v says so.
    shutil.copy2(e.prog("fin-inline"), exe)
    f = e.pfinalize(res, ["-v"])
    e.check(f.returncode == 0, "pfinalize -v with a rebuilt binary exits 0")
    e.check(has(f.stderr, "debug: module: '%s': original path '%s' refused: its build-id is"
                % (exe, exe), "the profiled one"), "the rebuilt binary is refused, build-ids named")
    e.check(has(f.stderr, "debug: module: '%s': not found with its build-id" % exe),
            "the module is then said not found")

    # The symbol fallbacks: without DWARF, .symtab; without .symtab either, .dynsym, which in
    # an executable that exports nothing leaves placeholder names.
    def stripped(flag, src, dst):
        cp = subprocess.run(["strip", flag, "-o", dst, src], capture_output=True, text=True)
        if cp.returncode != 0:
            e.skip("strip %s failed: %s" % (flag, cp.stderr.strip()), needs="binutils")
        return dst

    for flag, want in (("--strip-debug", "no DWARF: function names from .symtab"),
                       ("--strip-all", "no DWARF, no symbol table: placeholder names")):
        stripped(flag, moved, exe)  # at the original path again, now stripped
        f = e.pfinalize(res, ["-v"])
        e.check(f.returncode == 0, "pfinalize -v on a copy made by strip %s exits 0" % flag)
        # A stripped copy keeps its build-id note: it is taken, then the fallback is told.
        e.check(has(f.stderr, "debug: module: '%s': original path '%s' taken" % (exe, exe)),
                "strip %s: the copy is taken (same build-id)" % flag)
        e.check(has(f.stderr, "debug: module: '%s': %s" % (exe, want)),
                "strip %s: -v says '%s'" % (flag, want))

    # A library stripped of everything but .dynsym: its exported function still has a name.
    lib = stripped("--strip-all", os.path.join(e.BUILD, "tests", "progs", "libdl-work-lib.so"),
                   os.path.join(bindir, "libdl-work-lib.so"))
    dres = w.join("dres")
    r = e.pcollect([e.prog("dlopen-work"), lib], result=dres)
    e.check(r.returncode == 0, "pcollect runs dlopen-work with a stripped library")
    f = e.pfinalize(dres, ["-v"])
    e.check(f.returncode == 0, "pfinalize -v on it exits 0")
    e.check(has(f.stderr, "debug: module: '%s': no DWARF, no .symtab: function names from "
                ".dynsym" % lib), "-v says the library's names come from .dynsym")
    names = set(row[0] for row in e.leaf_samples(dres))
    e.check("dl_work" in names, "and dl_work is named from .dynsym (%s)" % sorted(names)[:8])

    # -v and -quiet exclude each other: a usage error in every tool.
    for argv in ([e.tool("pfinalize"), "-r", res, "-v", "-q"],
                 [e.tool("preport"), "-r", res, "-v", "-q"],
                 [e.tool("pcollect"), "-collect", "hotspots", "-v", "-q", "--", "true"]):
        c = e.run(argv)
        e.check(c.returncode == 2 and "'-quiet' and '-verbose' exclude each other" in c.stderr,
                "%s -v -q is a usage error (%d: %s)"
                % (os.path.basename(argv[0]), c.returncode, c.stderr.strip()))
