#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""pcollect -target-pid on a process in another pid namespace (issue 22, item 4), made here
with unshare --pid --fork: attach-target worker, whose thread burns CPU in phase_one while
main waits in pthread_join (the busy thread is not the one pcollect stops), runs as the
namespace's init (pid 1) seeing the host's /proc (a container given the host's /proc: /proc
names its threads by the host's ids, which its timers and clocks do not take), and as a child
of a shell (pid 2) with a /proc of its own (--mount-proc). Attached from outside for 1 s, the
worker is sampled: the CPU time the agent measured in it against what the kernel counted
around the pcollect run (/proc of the host, e2elib's check_attached), its samples against
that; the agent logs no thread it could not sample, and the program prints and exits as it
does alone in the same namespace. Skipped where the kernel refuses a pid namespace here."""
import os
import subprocess
import time

import e2elib as e

prog = e.prog("attach-target")


def command(how, go):
    """unshare's argv for the target, as init (pid 1) or as a shell's child (pid 2)."""
    base = ["unshare", "--pid", "--fork"]
    if how == "init-host-proc":
        return base + [prog, "worker", go]
    # Not the shell's last command, or it would exec the program as pid 1.
    return base + ["--mount-proc", "sh", "-c", '"$0" worker "$1"; exit $?', prog, go]


def children(pid):
    try:
        with open("/proc/%d/task/%d/children" % (pid, pid)) as f:
            return [int(x) for x in f.read().split()]
    except OSError:
        return []


def target_of(top):
    """The host pid of the attach-target process under unshare (pid top), once it runs."""
    for _ in range(500):
        todo = [top]
        while todo:
            pid = todo.pop()
            try:
                with open("/proc/%d/cmdline" % pid, "rb") as f:
                    argv = f.read().split(b"\0")
            except OSError:
                continue
            if os.path.basename(argv[0]) == b"attach-target":
                return pid
            todo += children(pid)
        time.sleep(0.01)
    e.fail("attach-target did not start under unshare")


def start(argv):
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # The first line a byte at a time from the descriptor: p.stdout.readline() may buffer the
    # lines after it too (the whole output of a target that ends at once), which
    # communicate(), reading the descriptor, then never sees.
    raw = b""
    while not raw.endswith(b"\n"):
        c = os.read(p.stdout.fileno(), 1)
        if not c:
            break
        raw += c
    line = raw.decode()
    if not line.startswith("pid="):
        out, err = p.communicate(timeout=60)
        if p.returncode and ("Operation not permitted" in err or "Invalid argument" in err):
            e.skip("the kernel refuses a new pid namespace here: " + err.strip())
        e.fail("attach-target did not start under unshare: %r %s" % (line, err.strip()))
    return p, line


def run_case(w, how):
    # Alone, in the same namespace: the file exists already, so it ends at once.
    go = w.join(how + "-go")
    open(go, "w").close()
    p, first = start(command(how, go))
    out, err = p.communicate(timeout=60)
    alone = (first + out, p.returncode)
    os.unlink(go)

    p, first = start(command(how, go))
    host = target_of(p.pid)
    want_pid = "pid=1" if how == "init-host-proc" else "pid=2"
    e.check(first.strip() == want_pid, "%s: the target is %s in its namespace, %d outside"
            % (how, want_pid, host))
    for _ in range(500):
        workers = [int(t) for t in os.listdir("/proc/%d/task" % host) if int(t) != host]
        if workers:
            break
        time.sleep(0.01)
    worker = workers[0]
    res = w.join("res-" + how)
    argv = [e.tool("pcollect"), "-collect", "hotspots", "-target-pid", str(host), "-r", res,
            "-finalization-mode=none", "-quiet", "-duration", "1"]
    before, t0 = e.stat_cpu_ns(host, worker), time.monotonic_ns()
    r = e.run(argv, env=e.tool_env())
    t1, after = time.monotonic_ns(), e.stat_cpu_ns(host, worker)
    open(go, "w").close()
    out, err = p.communicate(timeout=60)
    e.check(r.returncode == 0, "%s: pcollect -target-pid %d exits 0 (got %d: %s)"
            % (how, host, r.returncode, r.stderr.strip()))
    e.check((first + out, p.returncode) == alone, "%s: the program prints and exits as alone "
            "(exit %d, %r; alone: %r)" % (how, p.returncode, first + out, alone))
    log = e.agent_log(res)
    e.check("cannot" not in log, "%s: the agent sampled every thread (log: %s)"
            % (how, " | ".join(log.strip().splitlines())))

    streams = e.load_streams(res)
    samples = e.named_samples(streams)
    busy = [s for s in e.thread_streams(streams)
            if any(x[0] is s and "phase_one" in x[2] for x in samples)]
    e.check(len(busy) == 1, "%s: one thread stream has phase_one's samples (%d)"
            % (how, len(busy)))
    e.check_attached((before, after, t1 - t0), busy[0], how + " (the worker)")
    mine = [x for x in samples if x[0] is busy[0]]
    interval = busy[0].header["interval_ns"]
    stats = e.sampled_of(mine, interval)
    e.check_time(stats, stats.total_ns, busy[0].cpu_ns(),
                 "%s: the worker's samples against the CPU time the agent measured" % how)


if os.geteuid() != 0:
    e.skip("a pid namespace needs root here (unshare --pid); the test runs as uid %d"
           % os.geteuid())
with e.Workdir("attach-pidns") as w:
    for case in ("init-host-proc", "child-own-proc"):
        run_case(w, case)
