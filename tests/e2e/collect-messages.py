#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Issue 22, item 17: messages that tell the cause.

- ulimit -f 64 (RLIMIT_FSIZE 64 KiB, set in the child): pcollect's finalization, and pfinalize
  run alone, fail with "File too large", never SQLite's "disk I/O error"; pfinalize is not
  killed by SIGXFSZ and leaves no temporary database; the program's output and exit code are
  as without pcollect;
- pcollect -command run as another user (nobody) on root's running collection: a permission
  refusal that names whose result it is, not "no collection is running in it";
- pcollect -target-pid on a zombie: "it has exited", not "another mount namespace"."""
import glob
import os
import pwd
import resource
import subprocess
import time

import e2elib as e

FSIZE = 64 * 1024


def fsize_limit():
    resource.setrlimit(resource.RLIMIT_FSIZE, (FSIZE, FSIZE))


def file_size_limit(w):
    res = e.collect(w, "fsize", [e.prog("exit-code"), "3"], code=3, stdout="",
                    finalization="full", preexec_fn=fsize_limit)
    e.check("File too large" in res.stderr and "disk I/O error" not in res.stderr,
            "ulimit -f 64: finalization says File too large (%s)" % res.stderr.strip())
    # pfinalize alone under the same limit: told, not killed by SIGXFSZ.
    cp = subprocess.run([e.tool("pfinalize"), "-r", res], stdout=subprocess.PIPE,
                        stderr=subprocess.PIPE, text=True, preexec_fn=fsize_limit)
    e.check(cp.returncode == 1 and "File too large" in cp.stderr and
            "disk I/O error" not in cp.stderr,
            "pfinalize under ulimit -f 64: exit 1 and File too large (%d: %s)"
            % (cp.returncode, cp.stderr.strip()))
    left = glob.glob(os.path.join(res, ".result.db.tmp*"))
    e.check(not left and not os.path.exists(os.path.join(res, "result.db")),
            "no temporary database left (%s)" % left)


def as_nobody():
    nobody = pwd.getpwnam("nobody")
    os.setgid(nobody.pw_gid)
    os.setgroups([])
    os.setuid(nobody.pw_uid)


def foreign_command(w):
    if os.getuid() != 0:
        e.skip("-command as another user: the test makes the user with setuid(), as root")
    os.chmod(w.path, 0o755)  # nobody may look up the result, not read it (0700, root's)
    res = w.join("res-foreign")
    go = w.join("go")
    p = subprocess.Popen([e.tool("pcollect"), "-collect", "hotspots", "-r", res, "-quiet",
                          "-finalization-mode=none", "--", e.prog("attach-target"), "until",
                          go, "10"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, env=e.tool_environ())
    line = p.stdout.readline()
    if not line.startswith("pid="):
        e.fail("attach-target did not start: %r %s" % (line, p.stderr.read()))
    try:
        r = e.run([e.tool("pcollect"), "-r", res, "-command", "pause"], preexec_fn=as_nobody)
        e.check(r.returncode == 1 and "Permission denied" in r.stderr and
                "user root's" in r.stderr and "no collection is running" not in r.stderr,
                "-command as nobody on root's collection: a permission refusal (%d: %s)"
                % (r.returncode, r.stderr.strip()))
        r = e.run([e.tool("pcollect"), "-r", res, "-command", "stop"])
        e.check(r.returncode == 0, "-command stop as its owner (%d: %s)"
                % (r.returncode, r.stderr.strip()))
    finally:
        open(go, "w").close()
        p.communicate(timeout=120)


def zombie(w):
    child = subprocess.Popen(["/bin/true"])
    for _ in range(200):
        with open("/proc/%d/stat" % child.pid) as f:
            if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                break
        time.sleep(0.01)
    else:
        e.fail("child %d did not become a zombie" % child.pid)
    try:
        r = e.run([e.tool("pcollect"), "-collect", "hotspots", "-r", w.join("res-zombie"),
                   "-target-pid", str(child.pid)])
        e.check(r.returncode == 2 and "has exited" in r.stderr and
                "mount namespace" not in r.stderr,
                "-target-pid on a zombie: it has exited (%d: %s)"
                % (r.returncode, r.stderr.strip()))
    finally:
        child.wait()


with e.Workdir("collect-messages") as w:
    file_size_limit(w)
    foreign_command(w)
    zombie(w)
