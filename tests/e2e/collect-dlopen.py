#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Modules. A library loaded with dlopen, worked in, then dlclose'd: MODULE_LOAD and
MODULE_UNLOAD are recorded with its build-id and segments, its samples (500 of the 800 ms of
CPU time the program burns) fall in its address range and name dl_work, and -archive copies
it and the program by build-id. JIT code (an anonymous mapping made executable with mprotect,
run for 300 ms of CPU time) is recorded as an anon module covering its samples. Again: the
library closed, a copy of it under another name opened (the loader puts it where the first
was, its program headers at the same address) and worked in for 300 ms, then closed: each
file holds its own dl_work time (500 and 300 ms), none of the copy's samples is the first's.
Tolerances from the samples (e2elib.Sampled)."""
import filecmp
import os
import shutil

import e2elib as e

with e.Workdir("dlopen") as w:
    res = w.join("res")
    lib = os.path.join(e.BUILD, "tests", "progs", "libdl-work-lib.so")
    r = e.pcollect([e.prog("dlopen-work"), lib], result=res, options=["-archive"])
    e.check(r.returncode == 0 and r.stdout == "done\n",
            "pcollect exits 0 with the program's output (%d: %s)" % (r.returncode, r.stderr))
    streams = e.load_streams(res)
    # Times on one clock: each stream's records count from its own origin.
    loads = [dict(rec, time=s.header["origin_ns"] + rec["time"]) for s in streams
             for rec in s.of_type("module_load") if rec["path"] == lib]
    unloads = [dict(rec, time=s.header["origin_ns"] + rec["time"]) for s in streams
               for rec in s.of_type("module_unload") if rec["path"] == lib]
    e.check(len(loads) == 1, "one MODULE_LOAD for the library")
    e.check(len(unloads) == 1 and unloads[0]["base"] == loads[0]["base"],
            "one MODULE_UNLOAD with the same base")
    e.check(unloads[0]["time"] > loads[0]["time"], "unloaded after it was loaded")
    m = loads[0]
    e.check(len(m["build_id"]) == 40, "build-id recorded (%s)" % m["build_id"])
    cp = e.run(["readelf", "-n", lib])
    e.check(m["build_id"] in cp.stdout, "the build-id is the one readelf shows")
    e.check(any(seg[3] & 1 for seg in m["segs"]), "an executable segment is recorded")
    cp = e.run(["readelf", "-lW", lib])
    loads_in_file = [l.split() for l in cp.stdout.splitlines() if l.strip().startswith("LOAD")]
    e.check(len(loads_in_file) == len(m["segs"]), "as many segments as PT_LOAD headers (%d)"
            % len(loads_in_file))
    for seg, ph in zip(m["segs"], loads_in_file):
        e.check(seg[0] - m["base"] == int(ph[2], 16) and seg[2] == int(ph[1], 16) and
                seg[1] == int(ph[5], 16),
                "segment vaddr/offset/memsz match readelf (%x)" % int(ph[2], 16))
    samples = e.named_samples(streams)
    stats = e.sampled_of(samples, streams[0].header["interval_ns"])
    # CPU time budgets: the library phase's (library_work: dl_work, and the program's look
    # at its clock between two calls) and main_work's are known, the loader's (dlopen,
    # dlclose, the library's constructors: its samples are the program's too, and under the
    # sanitizers 5% of the run) are not, so the two are judged as times, not shares.
    interval = streams[0].header["interval_ns"]
    phase = sum(wt for _s, wt, st, _f in samples if "library_work" in st)
    e.check_time(stats, phase * interval, 500e6, "library_work (dl_work)", stretches=1)
    in_lib = sum(wt for _s, wt, st, _f in samples if st[0] == "dl_work")
    e.check(in_lib >= 0.9 * phase, "dl_work holds %.0f%% of library_work's samples (90%% or "
            "more)" % (100.0 * in_lib / max(phase, 1)))
    main_work = sum(wt for _s, wt, st, _f in samples if st[0] == "main_work")
    e.check_time(stats, main_work * interval, 300e6, "main_work, after dlclose", stretches=1)
    # The library's samples are inside its recorded address range, and in time within
    # [load, unload].
    lo = min(seg[0] for seg in m["segs"])
    hi = max(seg[0] + seg[1] for seg in m["segs"])
    for s in streams:
        for rec in s.samples():
            st = s.stacks[rec["stack"]]
            if st["ips"] and lo <= st["ips"][0] < hi:
                e.check(m["time"] <= s.header["origin_ns"] + rec["time"] <= unloads[0]["time"],
                        "a sample in the library lies between its load and unload")
                break

    # -archive: the sampled binaries, under their build-ids, byte for byte.
    arch = os.path.join(res, "archive", m["build_id"], os.path.basename(lib))
    e.check(os.path.isfile(arch) and filecmp.cmp(arch, lib, shallow=False),
            "-archive copied the dlclose'd library to archive/<build-id>/")
    exe = [rec for s in streams for rec in s.of_type("module_load")
           if rec["path"] == e.prog("dlopen-work")][0]
    e.check(os.path.isfile(os.path.join(res, "archive", exe["build_id"], "dlopen-work")),
            "-archive copied the program")

    # JIT code.
    res = w.join("res-jit")
    r = e.pcollect([e.prog("jit-code")], result=res)
    e.check(r.returncode == 0 and r.stdout == "jit done\n", "jit-code runs under pcollect")
    streams = e.load_streams(res)
    anon = [dict(rec, time=s.header["origin_ns"] + rec["time"]) for s in streams
            for rec in s.of_type("module_load") if rec["kind"] == e.MODULE_ANON]
    e.check(len(anon) >= 1, "an anon module is recorded for the JIT code")
    in_jit = 0
    for s in streams:
        for rec in s.samples():
            ips = s.stacks[rec["stack"]]["ips"]
            if not ips:  # the agent's own (RAW_STACK_AGENT): no frames
                continue
            ip = ips[0]
            if any(a["time"] <= s.header["origin_ns"] + rec["time"] and
                   seg[0] <= ip < seg[0] + seg[1]
                   for a in anon for seg in a["segs"]):
                in_jit += rec["weight"]
    interval = streams[0].header["interval_ns"]
    stats = e.sampled_of([r for s in streams for r in s.samples()], interval)
    e.check_time(stats, in_jit * interval, 300e6, "samples in the JIT region, recorded before "
                 "them", stretches=1, extra_ns=e.TICK_NS)

    # A copy opened where the first was, after its close.
    copy = w.join("libdl-work-copy.so")
    shutil.copy(lib, copy)
    res = e.collect(w, "res-again", [e.prog("dlopen-work"), lib, copy], interval=2,
                    stdout="done\n", finalize=True)  # dlopen-work.c's output
    streams = e.load_streams(res)
    loads = {rec["path"]: rec for s in streams for rec in s.of_type("module_load")}
    e.check(lib in loads and copy in loads, "both libraries' MODULE_LOAD recorded")
    print("first at %#x, the copy at %#x" % (loads[lib]["base"], loads[copy]["base"]))
    stats = e.db_sampled(res)
    got = {}
    for r in e.rows(res, "-view", "hotspots"):
        if r["Function"] == "dl_work":
            got[os.path.basename(r["Module"])] = e.secs(r, "CPU Time:Total")
    e.check_time(stats, got.get("libdl-work-lib.so", 0) * 1e9, 500e6, "again: dl_work of the "
                 "first library")
    e.check_time(stats, got.get("libdl-work-copy.so", 0) * 1e9, 300e6, "again: dl_work of the "
                 "copy opened after its close")
