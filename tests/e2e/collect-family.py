#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""fork, system(), a shell pipeline and exec: every process has its own streams with samples
and a PROCESS record of the right origin and parent; -no-follow-child keeps only the target.
Known answer: each member of the family burns 200 ms of CPU time in family_work, and its
samples must say so (e2elib.Sampled)."""
import e2elib as e

EXPECTED_OUT = ["forked child", "leaf system", "sink got 1 lines", "leaf exec"]
WORK_NS = 200000000  # CPU time each member burns in family_work (tests/progs/family.c)


def processes(streams):
    """image -> [process record, weight of the image's samples in family_work, its samples]"""
    out = {}
    samples = e.named_samples(streams)
    for s in streams:
        for p in s.of_type("process"):
            out[s.image] = [p, 0, []]
    for x in samples:
        s, wt, st, _f = x
        if s.image in out:
            out[s.image][2].append(x)
            if st and st[0] == "family_work":
                out[s.image][1] += wt
    return out


def check_work(img, what):
    """The image burnt WORK_NS in family_work, as its samples say."""
    _p, wt, samples = procs[img]
    interval = samples[0][0].header["interval_ns"] if samples else 1
    e.check_time(e.sampled_of(samples, interval), wt * interval, WORK_NS,
                 "%s: family_work" % what, stretches=1, extra_ns=e.TICK_NS)


with e.Workdir("family") as w:
    res = w.join("res")
    fam = e.prog("family")
    r = e.pcollect([fam], result=res)
    e.check(r.returncode == 0, "pcollect exits 0 (%d: %s)" % (r.returncode, r.stderr.strip()))
    e.check(r.stdout.splitlines() == EXPECTED_OUT, "the family's output is unchanged: %r"
            % r.stdout)
    streams = e.load_streams(res)
    e.check(all(s.stats["bytes_skipped"] == 0 for s in streams), "all streams read cleanly")
    procs = processes(streams)
    for img, (p, wt, _x) in sorted(procs.items()):
        print("image %s: origin %d parent %d exe %s argv %s weight %d" % (
            img, p["origin"], p["parent_pid"], p["exe"], p["argv"][1:], wt))

    def find(tag, origin=None):
        found = [(img, p, wt) for img, (p, wt, _x) in procs.items()
                 if p["exe"] == fam and p["argv"][1:] == tag and
                 (origin is None or p["origin"] == origin)]
        e.check(len(found) == 1, "one image of family %s (found %d)" % (" ".join(tag), len(found)))
        return found[0]

    top_img, top, top_w = find([], e.ORIGIN_START)
    check_work(top_img, "the target")
    forked = [(img, p, wt) for img, (p, wt, _x) in procs.items()
              if p["origin"] == e.ORIGIN_FORK and p["parent_pid"] == top["pid"] and
              p["exe"] == fam]
    e.check(len(forked) == 1, "the fork child has a FORK record naming the target")
    check_work(forked[0][0], "the fork child")
    e.check(forked[0][0][0] != top["pid"], "the fork child writes streams under its own pid")
    img, ex, wt = find(["leaf", "exec"], e.ORIGIN_EXEC)
    e.check(img == (top["pid"], 1) and ex["parent_pid"] == top["pid"],
            "exec: same pid, generation 1, EXEC origin")
    check_work(img, "the exec'd image")
    e.check(any(s.path.endswith("%d.%d.x1.praw" % (top["pid"], top["pid"])) for s in streams),
            "the exec'd image's streams are named .x1")
    img, sy, wt = find(["leaf", "system"])
    shell = procs.get((sy["parent_pid"], 0))
    e.check(shell is not None and shell[0]["parent_pid"] == top["pid"],
            "system(): the shell is the target's child, the command the shell's")
    check_work(img, "system()'s command")
    for tag in (["leaf", "pipe"], ["leaf", "sink"]):
        img, p, wt = find(tag, e.ORIGIN_EXEC)
        e.check(p["generation"] == 1, "pipeline member %s: exec'd by a forked shell" % tag[1])
        check_work(img, "pipeline member " + tag[1])
        forker = procs.get((p["pid"], 0))
        e.check(forker is not None and forker[0]["origin"] == e.ORIGIN_FORK,
                "pipeline member %s: forked by the shell before its exec" % tag[1])

    # -no-follow-child: the target and its exec'd image only.
    res2 = w.join("res2")
    r = e.pcollect([fam], result=res2, options=["-no-follow-child"])
    e.check(r.returncode == 0 and r.stdout.splitlines() == EXPECTED_OUT,
            "-no-follow-child: same output, exit 0")
    procs = processes(e.load_streams(res2))
    pids = sorted(set(img[0] for img in procs))
    e.check(len(pids) == 1 and len(procs) == 2,
            "-no-follow-child: only the target's pid (start and exec images): %s" % sorted(procs))
