#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Issue 10, items 1 and 3: the collector never writes into the program's descriptors.
A program that closes descriptors in loops (close 3..4095, close_range, closefrom), dup2()s its
files onto other numbers (low ones, and the top of the table where a tool would hide its own),
(also with the hard limit at the soft one, where the program's dup2() lands on the agent's own
descriptors: the task-clock event moves, libunwind's pipe is given up and made again), or
closes 0-2 and opens its files there: each of its files holds exactly what it wrote (no raw
chunk inside), its stdout and exit code are those of a run without the collector, the agent's
log holds text only, and the program is still sampled (its CPU time within tolerance) with
both sampling clocks. A program that lowers RLIMIT_NOFILE opens as many files as without us,
and its threads are sampled; with task-clock they fall back to the timer, with a note. A
thread that dup2()s over the task-clock events again and again (thousands of moves a second,
each holding the sampled thread's writer while the event keeps counting) leaves both threads
sampled to the end: each one's samples, with the time counted lost as busy when it ended
before a sample took it, against its CPU time, the samples at least half of it (a signal
that came while the writer was held, unanswered, once turned the event off for good: 6 to
22% sampled). A program that leaves no
number free and dup2()s over the event (the agent then gives it up) is still sampled: the timer
takes over, with a note."""
import functools
import os
import re
import resource
import subprocess

import e2elib as e

MODES = ["close-loop", "close-range", "closefrom", "dup2", "stdio"]
NFILES = 6
# CPU time between two of the 72 blocks fd-chaos writes (its default 18: 1.3 s a run, eleven
# runs): 0.29 s, still ~70 samples of the 4 ms tick a run between and around the writes (each
# uses the agent's descriptors: its task-clock event, libunwind's pipe), and the sampled
# check's tolerance comes from the samples (e2elib.Sampled)
WORK_MS = 4
BLOCKS = NFILES * 12
CHASE_MS = 200  # the chased thread's CPU time: 200 samples at 1 ms


def files_of(d):
    out = {}
    for i in range(NFILES):
        p = os.path.join(d, "data.%d" % i)
        with open(p, "rb") as f:
            out[i] = f.read()
    return out


def logs_are_text(res):
    d = os.path.join(res, "log")
    for name in os.listdir(d):
        if name.startswith("."):
            continue
        with open(os.path.join(d, name), "rb") as f:
            data = f.read()
        if b"PCHK" in data or b"PCRAW" in data or b"\0" in data:
            return False, name
    return True, ""


def native(w, mode):
    """The program alone: its exit code, output and files (its CPU work left out: they are
    the same)."""
    nd = w.join("native-" + mode)
    os.mkdir(nd)
    nat = e.run([e.prog("fd-chaos"), mode, nd, "0"])
    e.check(nat.returncode == 0, "%s: runs natively (%d: %s)" % (mode, nat.returncode, nat.stderr))
    return nat, nd


def hard_nofile():
    """Hard RLIMIT_NOFILE = soft: our descriptors then sit just under it, where dup2() in the
    program's dup2 mode lands on them (with room above the soft limit they sit beyond
    dup2()'s reach)."""
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, soft))


def one(w, mode, clock, nat, nd, hard=False):
    tag = "%s-%s%s" % (mode, clock, "-hard" if hard else "")
    pd = w.join("prof-" + tag)
    os.mkdir(pd)
    res = w.join("res-" + tag)
    argv = [e.tool("pcollect"), "-collect", "hotspots", "-r", res, "-quiet",
            "-finalization-mode=none", "-knob", "sampling-clock=" + clock, "--",
            e.prog("fd-chaos"), mode, pd, str(WORK_MS)]
    r = subprocess.run(argv, preexec_fn=hard_nofile if hard else None, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, timeout=120, env=e.tool_environ())
    e.check(r.returncode == nat.returncode and r.stdout == nat.stdout,
            "%s: exit code and stdout as without the collector (%d %r; %d %r)"
            % (tag, r.returncode, r.stdout, nat.returncode, nat.stdout))
    want, got = files_of(nd), files_of(pd)
    e.check(all(want[i] == got[i] for i in range(NFILES)),
            "%s: every data file holds exactly what the program wrote (sizes %s)"
            % (tag, [len(got[i]) for i in range(NFILES)]))
    e.check(not any(b"PCHK" in got[i] for i in range(NFILES)), "%s: no raw chunk in them" % tag)
    ok, bad = logs_are_text(res)
    e.check(ok, "%s: the agent's log holds text only (%s)" % (tag, bad))
    threads = e.thread_streams(e.load_streams(res))
    cpu = sum(s.cpu_ns() for s in threads)
    got_ns = e.sampled_ns(threads)
    interval = threads[0].header["interval_ns"]
    e.check(cpu > BLOCKS * WORK_MS * 1e6, "%s: the program used %.3f s of CPU (its %d blocks' "
            "%.3f s or more)" % (tag, cpu / 1e9, BLOCKS, BLOCKS * WORK_MS / 1e3))
    e.check_time(e.sampled_of([x for s in threads for x in s.samples()], interval,
                              threads=len(threads)), got_ns, cpu,
                 "%s: the program's samples against the CPU time its threads used" % tag)


@functools.lru_cache(maxsize=None)
def native_nofile(mode):
    """fd-chaos nofile* alone (once a mode: what it prints is the same for both clocks), its
    threads burning nothing: what it prints does not depend on their work."""
    return e.run([e.prog("fd-chaos"), mode, "0"])


def nofile(w, mode, clock):
    """fd-chaos nofile*: the program at its RLIMIT_NOFILE starts threads (nofile: 8 of 100 ms;
    nofile-burst: 32 of 10 ms at once, whose streams are made and cut together, each
    borrowing a number above the limit): every one has its stream, and the limit the program
    reads at the end is the one it set."""
    tag = "%s-%s" % (mode, clock)
    prefix, count = ("burst-", 32) if mode == "nofile-burst" else ("nofile-", 8)
    nat = native_nofile(mode)
    e.check(nat.returncode == 0 and re.match(r"opened \d+ more", nat.stdout),
            "%s: runs natively: %s" % (tag, nat.stdout.strip().replace("\n", "; ")))
    res = w.join("res-" + tag)
    # nofile-hard's threads get no stream: their work is never sampled, so they do none
    argv = [e.prog("fd-chaos"), mode] + (["0"] if mode == "nofile-hard" else [])
    r = e.pcollect(argv, result=res, finalization="full", quiet=False,
                   options=["-knob", "sampling-clock=" + clock])
    e.check(r.returncode == 0 and r.stdout == nat.stdout,
            "%s: the program opens as many files, and prints the same limit (%r)"
            % (tag, r.stdout))
    streams = e.load_streams(res)
    # Names set with pthread_setname_np are in the process stream.
    named = {x["tid"] for s in streams for x in s.of_type("thread_name") + s.of_type("thread_start")
             if x["name"].startswith(prefix)}
    workers = [s for s in e.thread_streams(streams) if s.tid in named]
    names = e.db_rows(res, "SELECT name FROM threads WHERE name LIKE ?", (prefix + "%",))
    if mode == "nofile-hard":
        # No descriptor at all below a hard limit: the threads are named as not sampled.
        e.check(not workers and re.search(r"note: +8 threads not sampled .*Too many open files",
                                          r.stderr),
                "%s: threads without a stream are named in the summary: %s"
                % (tag, [l for l in r.stderr.splitlines() if "note:" in l]))
        return
    e.check(len(workers) == count and len(names) == count,
            "%s: the %d threads have streams (%d, %d)" % (tag, count, len(workers), len(names)))
    e.check(all(s.stats["bytes_skipped"] == 0 for s in workers),
            "%s: every stream reads cleanly" % tag)
    for s in workers if count == 8 else []:
        e.check_time(e.sampled_of(s.samples(), s.header["interval_ns"]), e.sampled_ns([s]),
                     s.cpu_ns(), "%s: thread %d, its samples against its CPU time"
                     % (tag, s.tid))
    interval = workers[0].header["interval_ns"]
    e.check_time(e.sampled_of([x for s in workers for x in s.samples()], interval,
                              threads=count), e.sampled_ns(workers),
                 sum(s.cpu_ns() for s in workers),
                 "%s: the %d threads' samples against their CPU time" % (tag, count))
    if clock == "task-clock":
        # A thread that starts while another one borrows a number over the soft limit
        # (raw_window_open) may get its event after all: "N threads", N from 1 to count.
        e.check(re.search(r"note: +\d+ threads? sampled with the CPU-time timer .*no "
                          r"task-clock event \(Too many open files\)", r.stderr),
                "%s: the fall back to the timer is noted in the summary: %s"
                % (tag, [l for l in r.stderr.splitlines() if "note:" in l]))


def moved(w, mode, nthreads, replaced, least, **kw):
    """fd-chaos MODE CHASE_MS with task-clock at 1 ms (kw: pcollect's own arguments): exit
    code and stdout as without us, the program's count of replaced events (regex replaced)
    at least least, nthreads sampled, each one's samples against its CPU time. The Run."""
    nat = e.run([e.prog("fd-chaos"), mode, "0"], preexec_fn=kw.get("preexec_fn"))
    res = w.join("res-" + mode)
    r = e.pcollect([e.prog("fd-chaos"), mode, str(CHASE_MS)], result=res,
                   options=["-knob", "sampling-clock=task-clock", "-knob",
                            "sampling-interval=1"], **kw)
    e.check(r.returncode == nat.returncode == 0 and r.stdout == nat.stdout,
            "%s: exit code and stdout as without the collector (%d %r)"
            % (mode, r.returncode, r.stdout))
    m = re.search(replaced, r.stderr)
    e.check(m and int(m.group(1)) >= least, "%s: the program replaced the events %d times or "
            "more (%s)" % (mode, least, m.group(0) if m else r.stderr[-500:]))
    threads = e.thread_streams(e.load_streams(res))
    e.check(len(threads) == nthreads, "%s: %d threads sampled (%d)"
            % (mode, nthreads, len(threads)))
    for s in threads:
        # A signal that found the writer held (the chaser moving the event) leaves its time
        # to the next sample; what no sample took by the thread's end is counted lost, busy.
        interval = s.header["interval_ns"]
        busy = sum(x["weight"] for x in s.of_type("lost") if x["reason"] == 5) * interval
        sampled = e.sampled_ns([s])
        e.check_time(e.sampled_of(s.samples(), interval), sampled + busy, s.cpu_ns(),
                     "%s: thread %d, its samples (%.3f s) and the time lost as busy (%.3f s) "
                     "against its CPU time" % (mode, s.tid, sampled / 1e9, busy / 1e9))
        e.check(sampled >= 0.5 * s.cpu_ns(), "%s: thread %d, its samples hold at least half its "
                "CPU time (%.3f of %.3f s)" % (mode, s.tid, sampled / 1e9, s.cpu_ns() / 1e9))
    return r


def chase(w):
    """fd-chaos chase: the main thread burns CHASE_MS while the chaser moves both threads'
    task-clock events under them, thousands of times a second."""
    moved(w, "chase", 2, r"fd-chaos: (\d+) perf event descriptors replaced", 100)


def crowd(w):
    """fd-chaos crowd, hard RLIMIT_NOFILE = soft (the event sits under it, where dup2()
    reaches): every number taken, then dup2() over the event, which has nowhere to go. The
    thread is sampled with the timer from then on, and the summary says so."""
    r = moved(w, "crowd", 1, r"fd-chaos: \d+ descriptors opened, (\d+) perf events replaced",
              1, finalization="full", quiet=False, preexec_fn=hard_nofile)
    e.check(re.search(r"note: +1 thread sampled with the CPU-time timer .*no task-clock "
                      r"event \(Too many open files\)", r.stderr),
            "crowd: the timer's taking over is noted in the summary: %s"
            % [l for l in r.stderr.splitlines() if "note:" in l])

with e.Workdir("fds") as w:
    chase(w)
    crowd(w)
    natives = {mode: native(w, mode) for mode in MODES}
    for clock in ("timer", "task-clock"):
        for mode in MODES:
            one(w, mode, clock, *natives[mode])
        nofile(w, "nofile", clock)
        # Issue 10: two threads borrowing a number over the limit at once left one without
        # its stream (and could leave the limit raised); a burst of 32 made it likely.
        nofile(w, "nofile-burst", clock)
    # Both kinds of descriptor of ours (libunwind's pipe, the task-clock event) where dup2 lands.
    one(w, "dup2", "task-clock", *natives["dup2"], hard=True)
    nofile(w, "nofile-hard", "timer")
