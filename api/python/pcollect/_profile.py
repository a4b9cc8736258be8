# SPDX-License-Identifier: MIT
"""pcollect.profile(): profile a block of a running interpreter from inside it, and the
notebook magics %pcollect and %%pcollect built on it (docs/api.md).

The agent is not preloaded here: profile() starts `pcollect -target-pid <this process>
-target-loads-agent`, which makes the result directory and writes the agent's path and its
configuration to a pipe; this process loads the agent with ctypes and calls its
pcollect_attach() as `-target-pid` would through ptrace (no ptrace here), answers, runs the
block, and closes the pipe: pcollect lets the agent go (it stays loaded, idle) and finalizes.
The report shows the block's thread and the threads started during the block, not the
threads that ran before (a kernel's heartbeat and I/O threads), with the block's thread's
stacks starting at the block (preport -show-from).
"""
import ctypes
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import threading

from . import _tools


# pcollect_agent_call()'s operations (enum pcollect_agent_op in common/agent-api.h).
_PAUSE, _RESUME = 1, 2


class ProfileError(RuntimeError):
    """pcollect could not profile the block (its message says why)."""


def _threads_now():
    try:
        return {int(t) for t in os.listdir("/proc/self/task")}
    except OSError:
        return set()


class profile:
    """with pcollect.profile() as p: ...  then print(p), p.report(view="top-down"), p.result.

    result: the result directory (default: a temporary one, removed when p is collected
    unless keep=True); interval: the sampling interval in ms (default pcollect's 10);
    show_from: where the block's thread's stacks start (default: the function whose code
    holds the with statement, 'NAME@FILE'; None: whole stacks); options: more pcollect
    options ("-knob", "stack-depth=64")."""

    def __init__(self, result=None, interval=None, show_from="caller", options=(),
                 keep=None):
        self.result = result
        self.keep = keep if keep is not None else result is not None
        self.interval = interval
        self.show_from = show_from
        self.options = list(options)
        self.threads = []  # the block's thread and those started during it (TIDs)
        self._proc = self._tmp = self._call = None

    def __enter__(self):
        if self.show_from == "caller":
            code = sys._getframe(1).f_code
            self.show_from = "%s@%s" % (getattr(code, "co_qualname", code.co_name),
                                        code.co_filename)
        self._start()
        return self

    def __exit__(self, *exc):
        if self._call is not None:  # the block has ended: what follows is not of it
            self._call(_PAUSE, None)
        self._stop()
        return False

    def _start(self):
        if self.result is None:
            self._tmp = tempfile.mkdtemp(prefix="pcollect-profile-")
            self.result = os.path.join(self._tmp, "res")
        self._tid = threading.get_native_id()
        self._before = _threads_now() - {self._tid}
        # Paused until the block starts: the attach's own tail (ctypes returning, the answer
        # to pcollect) is not the block's, and a sample of it would be a stack outside it.
        argv = [_tools.tool("pcollect"), "-collect", "hotspots", "-target-pid",
                str(os.getpid()), "-target-loads-agent", "-start-paused", "-r", self.result,
                "-quiet"]
        if self.interval is not None:
            argv += ["-knob", "sampling-interval=%s" % self.interval]
        self._proc = subprocess.Popen(argv + self.options, stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        agent, config = self._read_config()
        try:
            lib = ctypes.CDLL(agent, mode=ctypes.RTLD_GLOBAL)
            attach = lib.pcollect_attach
            attach.argtypes = (ctypes.c_char_p,)
            attach.restype = ctypes.c_int
            rc = attach(config)
            call = lib.pcollect_agent_call
            call.argtypes = (ctypes.c_int, ctypes.c_char_p)
            call.restype = ctypes.c_int
        except (OSError, AttributeError) as e:
            rc = -22
            why = str(e)
        else:
            why = None
        self._proc.stdin.write(b"attached %d\n" % rc)
        self._proc.stdin.flush()
        if rc:
            _, err = self._proc.communicate()
            raise ProfileError(why or err.decode("utf-8", "replace").strip()
                               or "pcollect_attach: error %d" % rc)
        self._call = call
        call(_RESUME, None)  # the last thing before the block

    def _read_config(self):
        first = self._proc.stdout.readline()
        if not first.startswith(b"agent "):
            _, err = self._proc.communicate()
            raise ProfileError(err.decode("utf-8", "replace").strip() or
                               "pcollect exited with %d" % self._proc.returncode)
        lines = []
        for line in self._proc.stdout:
            if line == b"\n":
                break
            lines.append(line)
        return first[6:].rstrip(b"\n").decode(), b"".join(lines)

    def _stop(self):
        if not self._proc:
            return
        _, err = self._proc.communicate()  # closes its stdin: that ends the sampling
        self._proc.stdout.close()
        if self._proc.returncode:
            raise ProfileError(err.decode("utf-8", "replace").strip())
        self._proc = None
        self.threads = self._block_threads()

    def _block_threads(self):
        db = os.path.join(self.result, "result.db")
        try:
            con = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
            rows = con.execute("SELECT tid FROM threads WHERE samples > 0").fetchall()
            con.close()
        except sqlite3.Error:
            return []
        return sorted(t for (t,) in rows if t not in self._before)

    def report_argv(self, view="hotspots", fmt="text", limit=20, extra=()):
        """preport's command line for a view of the block (its threads, cut at the block)."""
        argv = [_tools.tool("preport"), "-r", self.result, "-format", fmt]
        if fmt in ("text", "csv", "json"):  # a view; the exports hold the whole profile
            argv += ["-view", view] + (["-limit", str(limit)] if limit and view != "summary"
                                       else [])
        for t in self.threads:
            argv += ["-filter", "thread=%d" % t]
        if self.show_from and self._tid in self.threads and view != "summary":
            argv += ["-show-from", self.show_from]
        return argv + list(extra)

    def report(self, view="hotspots", fmt="text", limit=20, extra=()):
        """A view of the block as text (or CSV, JSON, HTML with fmt)."""
        if not self.threads:
            return "pcollect: no samples in the block (shorter than the sampling interval?)\n"
        cp = subprocess.run(self.report_argv(view, fmt, limit, extra), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
        if cp.returncode:
            raise ProfileError(cp.stderr.decode("utf-8", "replace").strip())
        return cp.stdout.decode("utf-8", "replace")

    def __str__(self):
        return self.report()

    def __del__(self):
        if self._tmp and not self.keep:
            shutil.rmtree(self._tmp, ignore_errors=True)


# ---- IPython: %load_ext pcollect -------------------------------------------------------------

USAGE = """%pcollect [-view NAME] [-limit N] [-html] [-r DIR] [-interval MS] statement
%%pcollect [-view NAME] [-limit N] [-html] [-r DIR] [-interval MS]
<cell>

Profile the statement or the cell in this kernel (CPU time, native and Python frames) and
show a view of it: hotspots by default, -view top-down, bottom-up, ...; -html the HTML
report's views. -r DIR keeps the result there (preport -r DIR reads it later)."""


def _parse_magic(line):
    words = line.split()
    opts = {"view": "hotspots", "limit": 20, "html": False, "result": None,
            "interval": None}
    while words and words[0].startswith("-"):
        w = words.pop(0)
        if w == "-html":
            opts["html"] = True
        elif w in ("-view", "-limit", "-r", "-interval") and words:
            key = {"-view": "view", "-limit": "limit", "-r": "result",
                   "-interval": "interval"}[w]
            opts[key] = words.pop(0)
        else:
            raise ValueError("%%pcollect: unknown option '%s'\n%s" % (w, USAGE))
    return opts, " ".join(words)


def load_ipython_extension(ip):
    counter = [0]

    def pcollect_magic(line, cell=None):
        opts, stmt = _parse_magic(line)
        source = cell if cell is not None else stmt
        if not source.strip():
            print(USAGE)
            return None
        counter[0] += 1
        name = "<pcollect cell %d>" % counter[0]
        code = compile(source, name, "exec")
        p = profile(result=opts["result"], interval=opts["interval"],
                    show_from="<module>@" + name)
        with p:
            exec(code, ip.user_ns)
        if opts["html"]:
            from IPython.display import HTML, display
            page = p.report(fmt="html")
            srcdoc = page.replace("&", "&amp;").replace('"', "&quot;")
            display(HTML('<iframe srcdoc="%s" style="width:100%%;height:720px;border:0">'
                         '</iframe>' % srcdoc))
        else:
            print(p.report(view=opts["view"], limit=int(opts["limit"])), end="")
        return None

    ip.register_magic_function(pcollect_magic, "line_cell", "pcollect")
