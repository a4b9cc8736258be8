#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Issue 10, item 13: results are private by default. Whatever the umask, a result directory
and its folders are 0700 and every file in it 0600 (streams, metadata, the agent's log, the
data counter, the job file, archived binaries, result.db); with -result-mode group they are
0750 and 0640, for colleagues in the group. The program's own files keep the program's umask."""
import os
import stat

import e2elib as e


def umasked(w, tag, umask, options, program):
    """The program ("files": fsize-work, else fd-chaos nofile) under pcollect -archive with
    umask umask: the result and the program's own directory."""
    out = w.join(tag + "-own-file")
    os.mkdir(out)
    argv = ([e.prog("fsize-work"), os.path.join(out, "data.0"), "200"] if program == "files"
            else [e.prog("fd-chaos"), "nofile"])
    res = e.collect(w, tag, argv, options=["-archive", "-knob", "sampling-clock=task-clock"] +
                    options, preexec_fn=lambda: os.umask(umask), finalization=None)
    return res, out


def modes(res):
    dirs, files = {}, {}
    for root, dnames, fnames in os.walk(res):
        dirs[root] = stat.S_IMODE(os.stat(root).st_mode)
        for n in fnames:
            p = os.path.join(root, n)
            files[os.path.relpath(p, res)] = stat.S_IMODE(os.lstat(p).st_mode)
    return dirs, files


def expect(tag, res, dmode, fmode, log=False):
    dirs, files = modes(res)
    kinds = {"raw/": False, "meta/": False, "archive/": False, "result.db": False,
             "pcollect.job": False, "log/.data-used": False}
    if log:
        kinds["log/agent."] = False
    for k in kinds:
        kinds[k] = any(f.startswith(k) for f in files)
    e.check(all(kinds.values()), "%s: every kind of file is there: %s" % (tag, kinds))
    bad_d = {d: oct(m) for d, m in dirs.items() if m != dmode}
    bad_f = {f: oct(m) for f, m in files.items() if m != fmode}
    e.check(not bad_d, "%s: every directory is %s (%s)" % (tag, oct(dmode), bad_d))
    e.check(not bad_f, "%s: every file is %s (%s)" % (tag, oct(fmode), bad_f))


with e.Workdir("private") as w:
    # umask 0 would give 0777/0666: results stay private anyway.
    res, own = umasked(w, "private", 0, [], "files")
    expect("default, umask 0", res, 0o700, 0o600)
    e.check(e.read_meta(res).get("result_mode") == "private", "the metadata says private")
    # The program's own files are the program's business: its umask applies.
    e.check(stat.S_IMODE(os.stat(os.path.join(own, "data.0")).st_mode) == 0o644,
            "the program's own file keeps the program's mode (0644 with umask 0)")
    # umask 077 would take the group's bits away: -result-mode group keeps them. The program
    # lowers RLIMIT_NOFILE: its threads get no task-clock event, which the agent logs.
    res, own = umasked(w, "group", 0o077, ["-result-mode", "group"], "nofile")
    expect("-result-mode group, umask 077", res, 0o750, 0o640, log=True)
    e.check(e.read_meta(res).get("result_mode") == "group", "the metadata says group")
    f = e.pfinalize(res)
    e.check(f.returncode == 0 and
            stat.S_IMODE(os.stat(os.path.join(res, "result.db")).st_mode) == 0o640,
            "pfinalize again keeps result.db 0640")
    r = e.run([e.tool("pcollect"), "-collect", "hotspots", "-result-mode", "world", "--",
               "/bin/true"])
    e.check(r.returncode == 2 and "result-mode" in r.stderr,
            "-result-mode world: a usage error (%d: %s)" % (r.returncode, r.stderr.strip()))
