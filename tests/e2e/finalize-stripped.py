#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Stripped code. tests/progs/stripped-work.c spends 75% of the CPU in many_blocks(), a static
function of many hot blocks with a part gcc splits off (.cold), and 25% in one_block(), a
static function of one block. One part per argument:

ranges: the library stripped to .dynsym. Each static function is one row, named by its FDE
  range: func@0x<the unstripped symbol's address>, with the program's 75/25 split and the
  unstripped build's (within the samples' tolerance, e2elib.Sampled) in hotspots, top-down
  and CSV, and functions.kind 'range' in the database. The same raw data finalized with
  the unstripped copy maps every address of a range to one function.
  pfinalize's and preport's summaries count those samples apart from named ones.
minidebuginfo: the library given a MiniDebugInfo section as GDB's manual describes: its static
  functions are named, with their shares.
debuginfod: the program and library stripped, the library's debug file (and an archive of its
  sources) on a debuginfod server started here on 127.0.0.1. The same raw data finalized with
  the server resolves every frame (function, file, line) as the unstripped library does; the
  source view fetches the source; the summary says what was fetched and what was not; a second
  finalization takes the debug file from libdebuginfod's cache; -no-debuginfod and an empty
  DEBUGINFOD_URLS ask nothing; a server that is down is reported.
"""
import os
import shutil
import signal
import socket
import subprocess
import sys
import tarfile
import time
import urllib.error
import urllib.request

import e2elib as e

PART = sys.argv[1] if len(sys.argv) > 1 else "ranges"
LIBNAME = "libstripped-work.so"
# stripped-main's rounds (its default): many_blocks then one_block, each a stretch of CPU time
ROUNDS = 5

# Resolved from the files each time: the cache would answer from an earlier run's entry.
os.environ["PCOLLECT_NO_CACHE"] = "1"
os.environ["DEBUGINFOD_URLS"] = ""


def lib_built():
    path = os.path.join(e.BUILD, "tests", "progs", LIBNAME)
    if not os.path.exists(path):
        e.fail("test library not built at " + path)
    return path


def symbols(path):
    """Function name -> address from the .symtab of path."""
    out = {}
    for line in e.run_ok(["nm", "--defined-only", path]).stdout.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in "tT":
            out[parts[2]] = int(parts[0], 16)
    return out


def build_id(path):
    for line in e.run_ok(["readelf", "-n", path]).stdout.splitlines():
        if "Build ID:" in line:
            return line.split()[-1]
    e.fail("no build-id in " + path)


def copies(w, built):
    """built copied to W/full and stripped to W/lib (both named as built): their paths."""
    out = []
    for sub in ("full", "lib"):
        path = os.path.join(w.join(sub), LIBNAME)
        os.makedirs(os.path.dirname(path))
        out.append(path)
    shutil.copy2(built, out[0])
    e.run_ok(["objcopy", "--strip-all", built, out[1]])
    return out


def stripped_main(w, tag, lib, prog=None):
    """stripped-main (or prog) on lib under pcollect at 1 ms: the result W/res-TAG."""
    return e.collect(w, "res-" + tag, [prog or e.prog("stripped-main"), lib, "60"], interval=1)


def totals(res, col="CPU Time:Total %"):
    """Function -> Total % (or col) of the CPU time, for the library's functions (hotspots)."""
    return {r["Function"]: float(r[col]) for r in e.rows(res, "-view", "hotspots")
            if r["Module"] == LIBNAME}


def module_frames(res):
    """(address, depth, function, kind, file, line) of every frame of the library."""
    return e.db_rows(res, """
        SELECT fr.address, fr.inline_depth, f.name, f.kind, sf.path, fr.line
        FROM frames fr JOIN functions f ON f.id = fr.function_id
        JOIN modules m ON m.id = fr.module_id LEFT JOIN source_files sf ON sf.id = fr.source_file_id
        WHERE m.name = ? ORDER BY fr.address, fr.inline_depth""", (LIBNAME,))


def summary_percent(res, metric):
    return float(e.summary_value(e.preport("-r", res, "-view", "summary").stdout,
                                 metric).split("%")[0])


def near(got, want, what, tol):
    e.check(abs(got - want) <= tol, "%s: %.1f%% (want %.1f +- %g)" % (what, got, want, tol))


def split(res, t, many, one, what):
    """The 75/25 split of the library's work between the rows many and one of totals() t,
    within the tolerance of res's samples (each function ROUNDS stretches of CPU time: a
    lump the host held the CPU for weighs on the ends, e2elib.Sampled). The share, in points,
    and its tolerance."""
    stats = e.db_sampled(res)
    a, b = t.get(many, 0), t.get(one, 0)
    got = a / (a + b) if a + b else 0.0
    e.check_share(stats, got, 0.75, "%s: %s of %s and %s" % (what, many, many, one),
                  stretches=ROUNDS)
    return 100 * got, 100 * stats.share_tolerance(0.75, stretches=ROUNDS)


# ---- ranges ---------------------------------------------------------------------------------

def part_ranges(w):
    built = lib_built()
    syms = symbols(built)
    e.check("many_blocks.cold" in syms,
            "gcc split many_blocks (a .cold part at 0x%x): else this proves less"
            % syms.get("many_blocks.cold", 0))
    full, strip = copies(w, built)

    ref = stripped_main(w, "unstripped", full)
    e.finalize(ref, ())
    rt = totals(ref)
    ref_split, ref_tol = split(ref, rt, "many_blocks", "one_block", "unstripped")

    res = stripped_main(w, "stripped", strip)
    err = e.finalize(res, ())
    hot, cold, light = ("func@0x%x" % syms[n] for n in ("many_blocks", "many_blocks.cold",
                                                          "one_block"))
    st = totals(res)
    print("stripped rows:", st)
    unnamed = {n: v for n, v in st.items() if n.startswith("func@")}
    e.check(set(unnamed) <= {hot, light, cold},
            "the library's unnamed rows are its functions' ranges %s (got %s)"
            % ([hot, light], sorted(unnamed)))
    # many_blocks' hot and .cold parts in one row: were the cold one apart, the split is off
    got, tol = split(res, st, hot, light, "stripped, each function in one row")
    near(got, ref_split, "stripped %s against the unstripped many_blocks (the two runs' "
         "tolerances)" % hot, tol + ref_tol)
    # All of the program's time but the agent's own, if any (a module scan it was sampled in).
    agent = sum(float(r["CPU Time:Total %"]) for r in e.rows(res, "-view", "hotspots")
                if r["Function"] == "[pcollect agent]")
    print("the agent's own: %.1f%%" % agent)
    e.check(st.get("stripped_work", 0) > 99 - agent, "the exported stripped_work keeps its "
            "name (.dynsym): %.1f%% (the agent's own %.1f%%)" % (st.get("stripped_work", 0), agent))

    kinds = dict(e.db_rows(res, "SELECT name, kind FROM functions WHERE name IN (?, ?, ?)",
                           (hot, light, "stripped_work")))
    e.check(kinds == {hot: "range", light: "range", "stripped_work": "symbol"},
            "functions.kind: 'range' for the ranges, 'symbol' for the named (%s)" % kinds)
    per_address = e.db_rows(res, """SELECT COUNT(*) FROM functions f JOIN modules m
        ON m.id = f.module_id WHERE m.name = ? AND f.kind = 'address'""", (LIBNAME,))[0][0]
    e.check(per_address == 0, "no address of the library is left alone (%d)" % per_address)

    # The same raw data with the unstripped copy: each range is exactly one function.
    named = e.copy_result(res, res + "-named")
    e.finalize(named, ["-search-dir", w.join("full")])
    by_addr = {(a, d): n for a, d, n, _k, _f, _l in module_frames(named)}
    owner = {}
    for a, d, n, kind, _f, _l in module_frames(res):
        if d == 0 and kind == "range":
            owner.setdefault(n, set()).add(by_addr.get((a, 0)))
    print("range -> functions:", owner)
    e.check(owner.get(hot) == {"many_blocks"} and owner.get(light) == {"one_block"},
            "every sampled address of a range belongs to its one function (%s)" % owner)
    nt = totals(named)
    near(st.get(hot, 0), nt.get("many_blocks", 0), "same data: %s as many_blocks" % hot, 0.2)

    # Every view: top-down has the range under stripped_work; the summaries count it apart.
    td = e.rows(res, "-view", "top-down")
    e.check(any(r["Function Stack"] == hot and r["Module"] == LIBNAME for r in td),
            "top-down shows %s" % hot)
    m = [l for l in err.splitlines() if l.strip().startswith("unnamed:")]
    e.check(m, "pfinalize's summary has an 'unnamed:' line")
    share = float(m[0].split(":", 1)[1].split("%")[0])  # of the samples
    selfs = totals(res, "CPU Time:Self %")
    in_ranges = sum(v for n, v in selfs.items() if n.startswith("func@"))  # of the CPU time
    near(share, in_ranges, "pfinalize's summary: samples in function ranges", 2)
    near(summary_percent(res, "CPU Time In Unnamed Function Ranges"), in_ranges,
         "preport -view summary: CPU Time In Unnamed Function Ranges", 0.2)
    near(summary_percent(res, "CPU Time In Resolved Functions"), 100 - in_ranges - agent,
         "preport -view summary: the rest in named functions (the agent's own apart)", 0.5)

    # With the symbol cache: the ranges are kept by build-id and read back from there.
    cache = w.join("cache")
    env = {"PCOLLECT_NO_CACHE": "0", "PCOLLECT_CACHE_DIR": cache}
    bid = build_id(built)
    cached = e.copy_result(res, res + "-cached")
    e.finalize(cached, (), env=env)
    e.check(os.path.exists(os.path.join(cache, bid + ".fde")),
            "the ranges are kept in the symbol cache as %s.fde" % bid)
    v = e.finalize(cached, ["-verbose"], env=env)
    e.check("function ranges (.eh_frame) from the symbol cache" in v,
            "a second finalization reads them from the cache")
    e.check(module_frames(cached) == module_frames(res), "with the same frames")


# ---- minidebuginfo --------------------------------------------------------------------------

def add_minidebuginfo(w, built, out):
    """GDB's recipe ("MiniDebugInfo" in its manual), on a copy of built at out."""
    d = w.join("mini")
    os.makedirs(d)
    dyn = set(l.split()[0] for l in e.run_ok(["nm", "-D", built, "--format=posix",
                                         "--defined-only"]).stdout.splitlines() if l.strip())
    funcs = set(p[0] for p in (l.split() for l in e.run_ok(["nm", built, "--format=posix",
                                                      "--defined-only"]).stdout.splitlines())
                if len(p) > 1 and p[1] in ("T", "t", "D"))
    with open(os.path.join(d, "keep_symbols"), "w") as f:
        f.write("".join(s + "\n" for s in sorted(funcs - dyn)))
    debug, mini = os.path.join(d, "debug"), os.path.join(d, "mini_debuginfo")
    shutil.copy2(built, out)
    e.run_ok(["objcopy", "--only-keep-debug", out, debug])
    e.run_ok(["objcopy", "-S", "--remove-section", ".gdb_index", "--remove-section", ".comment",
         "--keep-symbols=" + os.path.join(d, "keep_symbols"), debug, mini])
    e.run_ok(["strip", "--strip-all", "-R", ".comment", out])
    e.run_ok(["xz", mini])
    e.run_ok(["objcopy", "--add-section", ".gnu_debugdata=" + mini + ".xz", out])
    return sorted(funcs - dyn)


def part_minidebuginfo(w):
    if not shutil.which("xz"):
        e.skip("xz is not installed (Debian: xz-utils)", needs="xz-utils")
    built = lib_built()
    lib = os.path.join(w.join("mini-lib"), LIBNAME)
    os.makedirs(os.path.dirname(lib))
    kept = add_minidebuginfo(w, built, lib)
    print("symbols kept in the MiniDebugInfo:", kept)
    e.check({"many_blocks", "one_block"} <= set(kept), "the recipe keeps the static functions")
    sections = e.run_ok(["readelf", "-S", "-W", lib]).stdout
    e.check(".gnu_debugdata" in sections and ".symtab" not in sections and
            ".debug_info" not in sections,
            "the library has .gnu_debugdata, no .symtab and no DWARF")
    res = stripped_main(w, "mini", lib)
    v = e.finalize(res, ["-verbose"])
    e.check("MiniDebugInfo (.gnu_debugdata): %d function symbols added" % len(kept) in v,
            "-verbose says the MiniDebugInfo added its %d symbols" % len(kept))
    t = totals(res)
    print("rows:", t)
    split(res, t, "many_blocks", "one_block", "named by the MiniDebugInfo")
    e.check(not any(n.startswith("func@") and v > 0.5 for n, v in t.items()),
            "no unnamed row of the library")
    sym = e.db_rows(res, "SELECT symbols FROM modules WHERE name = ?", (LIBNAME,))
    e.check(sym == [("minidebuginfo",)], "modules.symbols is 'minidebuginfo' (%s)" % sym)

    # Damaged: the section is no xz stream. Said with -verbose; the ranges name the functions.
    junk = w.join("mini", "junk")
    with open(junk, "wb") as f:
        f.write(b"\xfd7zXZ\x00" + bytes(range(256)) * 4)
    e.run_ok(["objcopy", "--update-section", ".gnu_debugdata=" + junk, lib])
    v = e.finalize(res, ["-verbose"])
    e.check("MiniDebugInfo (.gnu_debugdata) not read: not an xz-compressed ELF file (damaged)"
            in v, "-verbose says a damaged MiniDebugInfo is not read")
    kinds = set(k for _a, d, _n, k, _f, _l in module_frames(res) if d == 0)
    e.check(kinds == {"symbol", "range"}, "its static functions fall back to their ranges (%s)"
            % sorted(kinds))


# ---- debuginfod -----------------------------------------------------------------------------

def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http_ok(url):
    try:
        with urllib.request.urlopen(url, timeout=5) as r:
            return r.status == 200
    except (urllib.error.URLError, OSError):
        return False


class Server:
    """debuginfod serving directory d: ELF/DWARF files (-F) and .tar archives (-Z)."""

    def __init__(self, w, d, ready_urls):
        self.proc = None
        for _attempt in range(5):
            self.port = free_port()
            self.url = "http://127.0.0.1:%d" % self.port
            self.log = open(w.join("debuginfod-%d.log" % self.port), "w")
            # debuginfod 0.188 has no listen-address option: it listens on every address.
            self.proc = subprocess.Popen(
                ["debuginfod", "-p", str(self.port), "-d", w.join("debuginfod-%d.sqlite"
                                                                  % self.port),
                 "-t", "0", "-g", "0", "-F", "-Z", ".tar=cat", d],
                stdout=self.log, stderr=subprocess.STDOUT)
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and self.proc.poll() is None:
                if all(http_ok(self.url + u) for u in ready_urls):
                    print("debuginfod on %s, pid %d" % (self.url, self.proc.pid))
                    return
                time.sleep(0.2)
            self.stop()  # the port was taken meanwhile, or the scan never finished
        e.fail("debuginfod did not start serving %s (see %s)" % (d, self.log.name))

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()


def fetch_line(err):
    lines = [l for l in err.splitlines() if l.strip().startswith("debuginfod:")]
    return lines[0] if lines else ""


def fetch_parts(line):
    """The summary's debuginfod line as {"fetched": "libx.so (debug file), ...", ...}."""
    out = {}
    for part in line.split(":", 1)[1].split(";") if line else []:
        k, _sep, v = part.partition(":")
        out[k.strip()] = v.strip()
    return out


def part_debuginfod(w):
    if not shutil.which("debuginfod"):
        e.skip("the debuginfod server is not installed (Debian: debuginfod)",
               needs="debuginfod")
    built = lib_built()
    bid = build_id(built)
    _full, lib = copies(w, built)
    prog = w.join("lib", "stripped-main")
    e.run_ok(["objcopy", "--strip-all", e.prog("stripped-main"), prog])
    # The server's directory: the debug file, and an archive of it with its sources at the
    # paths its DWARF names (debuginfod serves sources from archives that hold the debug file
    # too; from plain directories only where the DWARF's paths exist on its machine).
    serve = w.join("serve")
    os.makedirs(serve)
    debug = os.path.join(serve, "libstripped-work.debug")
    e.run_ok(["objcopy", "--only-keep-debug", built, debug])
    with tarfile.open(os.path.join(serve, "sources.tar"), "w") as t:
        t.add(debug, "libstripped-work.debug")
        for name in ("stripped-work.c", "burn.h"):
            t.add(os.path.join(e.SOURCE, "tests", "progs", name),
                  "pcollect-test-src/tests/progs/" + name)
    src = "/pcollect-test-src/tests/progs/stripped-work.c"
    e.check(not os.path.exists(src), "the sources are nowhere on this machine at %s" % src)

    res = stripped_main(w, "stripped", lib, prog)
    ref = e.copy_result(res, res + "-ref")
    e.finalize(ref, ["-search-dir", w.join("full")])
    want = module_frames(ref)
    e.check(any(f[2] == "many_blocks" and f[4] == src for f in want),
            "the unstripped copy gives many_blocks at %s" % src)

    cache = w.join("dcache")
    server = None
    try:
        env = {"DEBUGINFOD_CACHE_PATH": cache}
        off = e.copy_result(res, res + "-off")
        err = e.finalize(off, ["-no-debuginfod"],
                         env=dict(env, DEBUGINFOD_URLS="http://127.0.0.1:9"))
        e.check("debuginfod: not asked (-no-debuginfod) for" in err,
                "-no-debuginfod: the summary says which modules were not asked")
        e.check(not any(f[3] == "symbol" for f in module_frames(off) if f[2] != "stripped_work"),
                "-no-debuginfod: the static functions stay unnamed")
        empty = e.copy_result(res, res + "-empty")
        err = e.finalize(empty, (), env=dict(env, DEBUGINFOD_URLS=""))
        e.check(not fetch_line(err) and not os.path.exists(cache),
                "an empty DEBUGINFOD_URLS asks nothing (no summary line, no cache)")

        server = Server(w, serve, ["/buildid/%s/debuginfo" % bid,
                                   "/buildid/%s/source%s" % (bid, src)])
        env["DEBUGINFOD_URLS"] = server.url
        on = e.copy_result(res, res + "-on")
        err = e.finalize(on, (), env=env)
        line = fetch_line(err)
        parts = fetch_parts(line)
        e.check(parts.get("fetched") == "%s (debug file)" % LIBNAME and
                "stripped-main (debug file)" in parts.get("not on the servers", ""),
                "the summary says what was fetched and what was not: %s" % line)
        got = module_frames(on)
        e.check(got == want, "every frame of the library (%d: function, file, line) is what the "
                "unstripped library gives" % len(want))
        if got != want:
            for a, b in zip(got, want):
                if a != b:
                    print("  got %s\n  want %s" % (a, b))
        hot_ref = [r for r in e.rows(ref, "-view", "hotspots") if r["Module"] == LIBNAME]
        hot_on = [r for r in e.rows(on, "-view", "hotspots") if r["Module"] == LIBNAME]
        e.check(hot_on == hot_ref, "hotspots rows of the library are the unstripped ones")
        dbg = e.db_rows(on, "SELECT symbols, debug_path FROM modules WHERE name = ?", (LIBNAME,))
        e.check(dbg and dbg[0][0] == "dwarf" and dbg[0][1].startswith(cache),
                "modules: symbols 'dwarf', the debug file from libdebuginfod's cache (%s)" % dbg)

        out = e.preport("-r", on, "-view", "source", "-source-object", "function=many_blocks",
                        env=env).stdout
        e.check("x = (x ^ (x >> 17)) * 0x9e3779b97f4a7c15ul;" in out and
                "from a debuginfod server" in out,
                "the source view fetches stripped-work.c from the server")
        out = e.preport("-r", on, "-view", "source", "-source-object", "function=many_blocks",
                        env={"DEBUGINFOD_URLS": ""}).stdout
        e.check("not found" in out, "without DEBUGINFOD_URLS the source is not found")

        again = e.copy_result(res, res + "-again")
        line = fetch_line(e.finalize(again, (), env=env))
        e.check(fetch_parts(line).get("from its cache") == "%s (debug file)" % LIBNAME,
                "a second finalization takes the debug file from the cache: %s" % line)
        e.check(module_frames(again) == want, "and resolves the same")

        server.stop()
        server = None
        down = e.copy_result(res, res + "-down")
        line = fetch_line(e.finalize(down, (),
                                     env=dict(env, DEBUGINFOD_CACHE_PATH=w.join("dcache2"))))
        e.check("%s (Connection refused)" % LIBNAME in fetch_parts(line).get("failed", ""),
                "a server that is down is reported: %s" % line)
    finally:
        if server:
            server.stop()


PARTS = {"ranges": part_ranges, "minidebuginfo": part_minidebuginfo,
         "debuginfod": part_debuginfod}
if PART not in PARTS:
    e.fail("unknown part %s: one of %s" % (PART, ", ".join(PARTS)))
with e.Workdir("fin-stripped-" + PART) as w:
    PARTS[PART](w)
