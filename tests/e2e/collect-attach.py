#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""pcollect -target-pid on a process it did not start (tests/progs/attach-target):

- phases: CPU in phase_one until a file appears, then 0.3 s in phase_two, attached after
  0.3 s for 1.5 s (the file made once pcollect has let go): the CPU time the agent measured
  (THREAD_END) against what the kernel counted around the pcollect run (/proc, e2elib's
  check_attached), the samples against it within their tolerance, all of them in
  phase_one; the program's output and exit code are intact, and after the detach it finds
  no handler, no pending signal and no thread of ours;
- a thread created after the attach (pthread_create through the GOT entries the agent
  changed) has its stream, its name and its samples; a child forked after the attach is
  followed (its process stream, its 0.4 s of CPU sampled);
- -command pause, resume and stop on an attached collection, then Ctrl-C on another: pcollect
  lets the process go and the process runs on unchanged;
- pcollect SIGKILLed while attached: the agent lets the process go by itself within a second;
- refusals: no such process and a bad pid (exit 2), waits, memory-consumption or -trace-mpi
  asked of an attach (exit 2), a process that made itself not dumpable (exit 1, the cause and the fix), with
  nothing left behind.
Sample checks use e2elib.Sampled; no wall time is judged."""
import ctypes
import os
import signal
import subprocess
import time

import e2elib as e

PR_CAPBSET_DROP, CAP_SYS_PTRACE = 24, 19


# glibc's own signals 32 (SIGCANCEL) and 33 (SIGSETXID): the C library installs its handler of
# SIGSETXID when a process creates its first thread (the agent's control thread, for a program
# that had one thread) and relies on it from then on: a setuid() of a program with threads
# signals them all. They are not ours to take back, and below glibc's SIGRTMIN, which the
# agent's own signal is at or above.
GLIBC_SIGNALS = (1 << 31) | (1 << 32)


def signal_state(pid):
    """The signal fields of /proc/PID/status: handlers (SigCgt, less glibc's own), ignored,
    blocked, pending; as hexadecimal masks."""
    out = {}
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            key = line.split(":")[0]
            if key in ("SigCgt", "SigIgn", "SigBlk", "SigPnd", "ShdPnd"):
                mask = int(line.split()[1], 16)
                out[key] = "%x" % (mask & ~GLIBC_SIGNALS if key == "SigCgt" else mask)
    return out


def start(w, args):
    """Start attach-target ARGS as a program of its own; it prints its pid first."""
    p = subprocess.Popen([e.prog("attach-target")] + args, cwd=w.path, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=dict(os.environ, **e.tool_env()))
    line = p.stdout.readline()
    if not line.startswith("pid="):
        e.fail("attach-target did not start: %r %s" % (line, p.stderr.read()))
    return p


def finish(p, what, threads=1):
    """The target's end: exit code 3 and, after a detach, nothing of ours left in it."""
    out, err = p.communicate(timeout=120)
    e.check(p.returncode == 3, "%s: the target exits with its own code 3 (got %d: %s)"
            % (what, p.returncode, err.strip()))
    e.check(out.strip().splitlines()[-1] == REFERENCE.replace("threads=1", "threads=%d" % threads),
            "%s: the target's own report is as without us: %r (alone: %r)"
            % (what, out.strip().splitlines()[-1], REFERENCE))
    return out


def attach(res, pid, options=(), quiet=True):
    argv = [e.tool("pcollect"), "-collect", "hotspots", "-target-pid", str(pid), "-r", res,
            "-finalization-mode=none"] + (["-quiet"] if quiet else []) + list(options)
    return argv


def attached(res, pid, what):
    """pcollect -target-pid PID started in the background, once it says it has attached."""
    c = subprocess.Popen(attach(res, pid, quiet=False), stderr=subprocess.PIPE, text=True,
                         env=e.tool_environ())
    while "attached to process" not in c.stderr.readline():
        if c.poll() is not None:
            e.fail("%s: pcollect did not attach: %s" % (what, c.stderr.read()))
    return c


def weights(streams):
    """Weight by leaf function over the threads' streams, and the Sampled of them."""
    samples = e.named_samples(streams)
    by, total = {}, 0
    for _s, w, names, _f in samples:
        by[names[0]] = by.get(names[0], 0) + w
        total += w
    return by, samples


def ptrace_or_skip(w):
    """Skip (77) when this machine refuses ptrace to pcollect for a process of our own (Yama
    ptrace_scope 2 or 3, a container without CAP_SYS_PTRACE, a seccomp filter): nothing
    attached could be tested. The refusal must be the clear message, though."""
    go = w.join("probe-go")
    p = start(w, ["thread", go, "1"])
    r = e.run(attach(w.join("res-probe"), p.pid, ["-duration", "0.1"]), env=e.tool_env())
    open(go, "w").close()
    finish(p, "probe")
    if r.returncode == 1 and "Operation not permitted" in r.stderr:
        e.check("ptrace_scope" in r.stderr and "docs/pcollect.md" in r.stderr,
                "refused: the message says why and how to be let in (%s)" % r.stderr.strip())
        e.skip("ptrace to a process of our own is refused here: " + r.stderr.strip())
    e.check(r.returncode == 0, "probe: pcollect attaches to a process of ours (exit %d: %s)"
            % (r.returncode, r.stderr.strip()))


def under(samples, fn):
    """Weight of the samples with fn on their stack, and the total weight."""
    w, total = e.under(samples, [fn])
    return w[fn], total


def phases(w):
    res = w.join("res-phases")
    go = w.join("phases-go")
    p = start(w, ["until", go, "300"])
    time.sleep(0.3)
    signals = signal_state(p.pid)
    r, window = e.attach(attach(res, p.pid, ["-duration", "1.5"]), p.pid)
    signals_after = signal_state(p.pid)
    open(go, "w").close()
    e.check(r.returncode == 0, "phases: pcollect -target-pid exits 0 (got %d: %s)"
            % (r.returncode, r.stderr.strip()))
    e.check(signals_after == signals,
            "phases: after the detach, still in phase_one, /proc/%d/status shows the signal "
            "state found before the attach: no handler of ours, nothing pending (%s, before %s)"
            % (p.pid, signals_after, signals))
    finish(p, "phases")
    meta = e.read_meta(res)
    e.check(meta.get("target_pid") == str(p.pid) and meta.get("attach_end") == "duration",
            "phases: the metadata names the target and why sampling ended (%s, %s)"
            % (meta.get("target_pid"), meta.get("attach_end")))
    streams = e.load_streams(res)
    threads = e.thread_streams(streams)
    e.check(len(threads) == 1, "phases: one thread stream (%d)" % len(threads))
    e.check_attached(window, threads[0], "phases")
    by, samples = weights(streams)
    interval = threads[0].header["interval_ns"]
    stats = e.sampled_of(samples, interval)
    e.check_time(stats, stats.total_ns, threads[0].cpu_ns(),
                 "phases: samples against the CPU time the agent measured while attached")
    inside, total = under(samples, "phase_one")
    e.check(inside == total > 0 and under(samples, "phase_two")[0] == 0,
            "phases: every sample in phase_one (%s)" % by)
    e.finalize(res)


def new_thread(w):
    res = w.join("res-thread")
    go = w.join("go")
    p = start(w, ["thread", go, "400"])
    c = attached(res, p.pid, "thread")
    open(go, "w").close()
    out = finish(p, "thread", threads=2)
    _out, err = c.communicate(timeout=120)
    e.check(c.returncode == 0, "thread: pcollect lets go when the target ends (exit %d: %s)"
            % (c.returncode, err.strip()))
    e.check(e.read_meta(res).get("attach_end") == "exit", "thread: attach_end=exit")
    streams = e.load_streams(res)
    by_tid = {s.tid: s for s in e.thread_streams(streams)}
    worker = [s for s in by_tid.values() if s.tid != p.pid]
    e.check(len(worker) == 1, "thread: the thread made after the attach has a stream (%s)"
            % sorted(by_tid))
    wk = worker[0]
    e.check(wk.of_type("thread_start") and wk.of_type("thread_end"),
            "thread: its stream starts and ends with the thread")
    by, samples = weights([wk] + [s for s in streams if s.kind == "process"])
    stats = e.sampled_of(samples, wk.header["interval_ns"])
    inside, total = under(samples, "worker")
    e.check(inside == total > 0, "thread: its samples are in worker (%s)" % by)
    e.check_time(stats, stats.total_ns, wk.cpu_ns(), "thread: its samples against its CPU time")
    del out


def forked(w):
    """A child forked after the attach is followed: its own streams, its CPU time sampled."""
    res = w.join("res-fork")
    p = start(w, ["fork", "fork-go", "400"])
    c = attached(res, p.pid, "fork")
    open(w.join("fork-go"), "w").close()
    finish(p, "fork", threads=2)  # the agent's control thread: still attached
    _out, err = c.communicate(timeout=120)
    e.check(c.returncode == 0, "fork: pcollect lets go when the target ends (exit %d: %s)"
            % (c.returncode, err.strip()))
    streams = e.load_streams(res)
    procs = [x for s in streams if s.kind == "process" for x in s.of_type("process")]
    kids = [x for x in procs if x["pid"] != p.pid]
    e.check(len(kids) == 1 and kids[0]["ppid"] == p.pid and kids[0]["origin"] == e.ORIGIN_FORK,
            "fork: the child forked after the attach has its process stream, origin fork (%s)"
            % [(x["pid"], x["ppid"], x["origin"]) for x in procs])
    for who, pid in (("the target", p.pid), ("its child", kids[0]["pid"])):
        threads = [s for s in e.thread_streams(streams) if s.pid == pid]
        by, samples = weights(threads + [s for s in streams if s.kind == "process"])
        stats = e.sampled_of(samples, threads[0].header["interval_ns"]) if threads else None
        inside, total = under(samples, "phase_one")
        # The rest of the program's code after the attach runs too (its fork, the wait for
        # its child, its report: samples there seen under the sanitizers, whose fork and
        # printf are slower): every sample is under main, phase_one's time is its own.
        # The agent's own (Collector Overhead, a root of its own: the child's start in the
        # agent's fork handler) is no program's.
        own = under(samples, "[pcollect agent]")[0]
        in_main = under(samples, "main")[0]
        e.check(stats is not None and in_main == total - own and inside > 0,
                "fork: %s's samples are the program's, under main (%s)"
                % (who, by))
        e.check_time(stats, inside * stats.interval_ns, 400e6,
                     "fork: %s burnt 0.4 s in phase_one" % who, extra_ns=e.TICK_NS)


def steered(w):
    """-command pause, resume and stop on an attached collection; then Ctrl-C on another."""
    res = w.join("res-steered")
    go = w.join("steered-go")
    p = start(w, ["until", go, "100"])
    c = attached(res, p.pid, "steered")
    for cmd in ("pause", "resume", "stop"):
        time.sleep(0.3)
        r = e.run([e.tool("pcollect"), "-r", res, "-command", cmd], env=e.tool_env())
        e.check(r.returncode == 0, "steered: -command %s (exit %d: %s)"
                % (cmd, r.returncode, r.stderr.strip()))
    _out, err = c.communicate(timeout=120)
    e.check(c.returncode == 0 and e.read_meta(res).get("attach_end") == "command",
            "steered: -command stop ends the attachment (exit %d, %s)"
            % (c.returncode, err.strip()))
    again = w.join("res-interrupted")
    c = attached(again, p.pid, "interrupted")
    time.sleep(0.3)
    c.send_signal(signal.SIGINT)
    _out, err = c.communicate(timeout=120)
    e.check(c.returncode == 0 and e.read_meta(again).get("attach_end") == "interrupt",
            "interrupted: Ctrl-C lets the process go (exit %d, %s)" % (c.returncode, err.strip()))
    e.check(e.thread_streams(e.load_streams(again)),
            "interrupted: an agent attached a second time to one process samples again")
    open(go, "w").close()
    finish(p, "steered and interrupted")


def drop_ptrace_capability():
    """In the child before exec: no CAP_SYS_PTRACE (root's lets it attach to anything)."""
    if os.geteuid() == 0:
        ctypes.CDLL(None, use_errno=True).prctl(PR_CAPBSET_DROP, CAP_SYS_PTRACE, 0, 0, 0)


def refusals(w):
    pid = 4194300
    while os.path.exists("/proc/%d" % pid):
        pid -= 1
    res = w.join("res-refused")
    r = e.run(attach(res, pid), env=e.tool_env())
    e.check(r.returncode == 2 and "no such process" in r.stderr and
            len(r.stderr.strip().splitlines()) == 1,
            "no such process: exit 2, one line (%d: %s)" % (r.returncode, r.stderr.strip()))
    e.check(not os.path.exists(res), "no such process: no result directory left")
    r = e.run(attach(res, "12ab"), env=e.tool_env())
    e.check(r.returncode == 2 and "-target-pid" in r.stderr,
            "a pid that is no number: exit 2 (%d: %s)" % (r.returncode, r.stderr.strip()))
    for analysis in (["-collect", "threading"], ["-knob", "enable-wait-time=true"]):
        r = e.run(attach(res, os.getpid()) + analysis)
        e.check(r.returncode == 2 and "waits cannot be measured" in r.stderr and
                not os.path.exists(res),
                "%s with -target-pid: exit 2, why (%d: %s)"
                % (" ".join(analysis), r.returncode, r.stderr.strip()))
    # The allocator's wrappers are preloaded at a program's start: an attach cannot record them.
    r = e.run(attach(res, os.getpid()) + ["-collect", "memory-consumption"])
    e.check(r.returncode == 2 and "allocations cannot be recorded" in r.stderr and
            not os.path.exists(res),
            "-collect memory-consumption with -target-pid: exit 2, why (%d: %s)"
            % (r.returncode, r.stderr.strip()))
    # The MPI shims are preloaded at a program's start: an attach cannot trace MPI calls.
    r = e.run(attach(res, os.getpid()) + ["-trace-mpi"])
    e.check(r.returncode == 2 and "-trace-mpi" in r.stderr and "exclude" in r.stderr and
            not os.path.exists(res),
            "-trace-mpi with -target-pid: exit 2, why (%d: %s)" % (r.returncode, r.stderr.strip()))
    p = start(w, ["nodump", "nodump-go"])
    cp = subprocess.run(attach(res, p.pid), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                        text=True, env=dict(os.environ, **e.tool_env()),
                        preexec_fn=drop_ptrace_capability, timeout=120)
    err = cp.stderr.strip()
    e.check(cp.returncode == 1 and "Operation not permitted" in err and
            "PR_SET_DUMPABLE" in err and "ptrace_scope" in err,
            "not dumpable: exit 1 with the cause and the fix (%d: %s)" % (cp.returncode, err))
    e.check(not os.path.exists(res), "not dumpable: no result directory left")
    open(w.join("nodump-go"), "w").close()
    finish(p, "not dumpable")


def orphaned(w):
    """pcollect killed (SIGKILL: nothing of it runs) while attached: the agent sees its
    collector gone and lets the process go by itself within a second, as pcollect would
    have; the result still finalizes."""
    res = w.join("res-orphan")
    go = w.join("orphan-go")
    p = start(w, ["until", go, "300"])
    time.sleep(0.2)
    signals = signal_state(p.pid)
    c = attached(res, p.pid, "orphan")
    time.sleep(0.3)
    c.kill()
    c.wait(timeout=60)
    t0 = time.monotonic()
    while signal_state(p.pid) != signals and time.monotonic() - t0 < 5:
        time.sleep(0.05)
    let_go = time.monotonic() - t0
    e.check(signal_state(p.pid) == signals and let_go <= 1.5,
            "orphan: %.2f s after pcollect's SIGKILL, /proc/%d/status shows the signal state "
            "found before the attach (%s)" % (let_go, p.pid, signals))
    e.check("collector (pcollect) is gone" in e.agent_log(res),
            "orphan: the agent says why it let the process go")
    open(go, "w").close()
    finish(p, "orphan")
    cp = e.pfinalize(res)
    e.check(cp.returncode == 0, "orphan: the result finalizes (%s)" % cp.stderr.strip()[-300:])


with e.Workdir("attach") as w:
    ref = e.run([e.prog("attach-target"), "phases", "1", "1"], env=e.tool_env())
    if ref.returncode != 3:
        e.fail("attach-target alone: exit %d: %s" % (ref.returncode, ref.stderr))
    REFERENCE = ref.stdout.strip().splitlines()[-1]
    print("the target alone reports: " + REFERENCE)
    refusals(w)
    ptrace_or_skip(w)
    phases(w)
    new_thread(w)
    forked(w)
    steered(w)
    orphaned(w)
