#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A result directory another user may change is not written into (issue 22, item 12).

As root: a directory 'nobody' made beforehand (mode 777, in a sticky shared directory, as
/tmp) is refused by pcollect, alone and as a rank of a parallel job, with exit 2, a message
naming it and its owner, the program not started and nothing created in it; a joined
directory whose raw/ is a symbolic link is refused and the link's target gets no file;
pfinalize (and preport, which finalizes first) refuse to write result.db into another
user's result; one's own directory is still used, the program's output and exit code as
without pcollect."""
import os
import pwd
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2elib as e  # noqa: E402

if os.geteuid() != 0:
    e.skip("needs root: the other user's directory is made by 'nobody'")
NOBODY = pwd.getpwnam("nobody")


def as_nobody():
    os.setgroups([])
    os.setgid(NOBODY.pw_gid)
    os.setuid(NOBODY.pw_uid)


def files_under(path):
    out = []
    for root, dirs, files in os.walk(path):
        out += [os.path.join(root, n) for n in dirs + files]
    return out


def refused(r, d, what):
    e.check(r.returncode == 2 and "'%s' belongs to another user (uid %d)" % (d, NOBODY.pw_uid)
            in r.stderr, "%s: refused, exit 2, naming it and its owner (%d: %s)"
            % (what, r.returncode, r.stderr.strip()[-300:]))
    e.check(r.stdout == "", "%s: the program was not started" % what)
    e.check(files_under(d) == [], "%s: nothing created in it (%s)" % (what, files_under(d)))


with e.Workdir("foreign-dir") as w:
    os.chmod(w.path, 0o711)
    prog = e.prog("report-split")
    target = [prog, "once", "30"]
    shared = w.join("shared")
    os.mkdir(shared)
    os.chmod(shared, 0o1777)

    # Alone: nobody's empty directory, mode 777.
    theirs = os.path.join(shared, "res")
    e.run_ok(["mkdir", "-m", "777", theirs], preexec_fn=as_nobody)
    r = e.pcollect(target, result=theirs)
    refused(r, theirs, "nobody's directory")

    # A rank of a parallel job: DIR.<host> made by nobody.
    job = {"PMI_RANK": "0", "PCOLLECT_HOSTNAME": "node1"}
    node = os.path.join(shared, "job.node1")
    e.run_ok(["mkdir", "-m", "777", node], preexec_fn=as_nobody)
    r = e.pcollect(target, result=os.path.join(shared, "job"), env=job)
    refused(r, node, "nobody's directory, as a rank of a job")

    # One's own directory joined by a rank, with raw/ a link to elsewhere: not followed.
    mine = w.join("mine.node1")
    elsewhere = w.join("elsewhere")
    os.mkdir(mine, 0o700)
    os.mkdir(elsewhere)
    with open(os.path.join(mine, "pcollect.job"), "w") as f:
        f.write("ppid:%d\n" % os.getpid())
    os.symlink(elsewhere, os.path.join(mine, "raw"))
    r = e.pcollect(target, result=w.join("mine"), env=job)
    e.check(r.returncode != 0 and "raw" in r.stderr and r.stdout == "",
            "a joined directory whose raw/ is a link: refused, the program not started (%d: %s)"
            % (r.returncode, r.stderr.strip()[-300:]))
    e.check(os.listdir(elsewhere) == [], "the link's target got no file")

    # pfinalize and preport write no result.db into another user's result.
    home = w.join("nobody")
    os.mkdir(home)
    os.chown(home, NOBODY.pw_uid, NOBODY.pw_gid)
    res = os.path.join(home, "res")
    r = e.pcollect(target, result=res, preexec_fn=as_nobody)
    e.check(r.returncode == 0, "nobody's own result collected (%d: %s)"
            % (r.returncode, r.stderr.strip()[-300:]))
    cp = e.pfinalize(res)
    e.check(cp.returncode == 1 and "belongs to another user" in cp.stderr and
            not os.path.exists(os.path.join(res, "result.db")),
            "pfinalize: another user's result refused, exit 1 (%d: %s)"
            % (cp.returncode, cp.stderr.strip()[-300:]))
    cp = e.run([e.tool("preport"), "-r", res])
    e.check(cp.returncode != 0 and "belongs to another user" in cp.stderr and
            not os.path.exists(os.path.join(res, "result.db")),
            "preport: another user's unfinalized result not finalized into it (%d: %s)"
            % (cp.returncode, cp.stderr.strip()[-300:]))
    e.check(all(os.lstat(p).st_uid == NOBODY.pw_uid for p in files_under(res)),
            "every file of nobody's result is nobody's")

    # One's own directory, made beforehand, is used.
    own = w.join("own")
    os.mkdir(own, 0o777)
    r = e.collect(w, "own", target, stdout="", finalize=True)  # report-split prints nothing
    e.check(os.path.exists(os.path.join(own, "result.db")) and
            oct(os.stat(own).st_mode & 0o777) == oct(0o700),
            "one's own empty directory is used (and made private)")
