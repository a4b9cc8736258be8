# SPDX-License-Identifier: MIT
"""pcollect's control API for Python: regions, pause and resume (docs/api.md).

    import pcollect

    with pcollect.region("assemble"):      # the calling thread's time in "assemble"
        assemble()

    @pcollect.region("solve")              # every call of solve() in "solve"
    def solve(): ...

    pcollect.pause()                       # no sampling (the whole collection)...
    teardown()
    pcollect.resume()                      # ...until resumed

Regions nest ("solve/assemble" in preport -group-by region). Outside a collection every call
is a no-op with the same names, so a program keeps its calls when it runs on its own. Under
pcollect the calls reach the agent through ctypes (common/agent-api.h); an agent loaded later
(pcollect -target-pid) is looked for again every RECHECK seconds until found.

pcollect puts this module's directory at the end of PYTHONPATH of the programs it starts;
elsewhere install it (meson installs it with the tools) or put its directory on PYTHONPATH.
"""
import functools
import threading
import time

__all__ = ["region", "region_begin", "region_end", "pause", "resume", "active", "profile"]

# enum pcollect_agent_op in common/agent-api.h
_PROBE, _PAUSE, _RESUME, _BEGIN, _END = 0, 1, 2, 3, 4
RECHECK = 0.05  # seconds between two looks for an agent while there is none

_call = None
_next_look = 0.0
_local = threading.local()


def _agent():
    """The agent's entry point, or None (not profiled)."""
    global _call, _next_look
    if _call is not None:
        return _call
    now = time.monotonic()
    if now < _next_look:
        return None
    _next_look = now + RECHECK
    try:
        import ctypes
        fn = ctypes.CDLL(None).pcollect_agent_call
    except (ImportError, OSError, AttributeError):
        return None
    fn.argtypes = (ctypes.c_int, ctypes.c_char_p)
    fn.restype = ctypes.c_int
    _call = fn
    return fn


def _levels():
    """This thread's open regions, innermost last: True for those the agent heard of."""
    levels = getattr(_local, "levels", None)
    if levels is None:
        levels = _local.levels = []
    return levels


def active():
    """True when this process is being profiled."""
    fn = _agent()
    return fn is not None and fn(_PROBE, None) == 0


def pause():
    """Stop sampling the whole collection until resume()."""
    fn = _agent()
    if fn is not None:
        fn(_PAUSE, None)


def resume():
    """Sample again (also after pcollect -start-paused)."""
    fn = _agent()
    if fn is not None:
        fn(_RESUME, None)


def region_begin(name):
    """The calling thread enters the region name (regions nest)."""
    fn = _agent()
    heard = fn is not None and fn(_BEGIN, str(name).encode("utf-8", "replace")) == 0
    _levels().append(heard)


def region_end():
    """The calling thread leaves its innermost region."""
    levels = _levels()
    if levels and levels.pop():
        fn = _agent()
        if fn is not None:
            fn(_END, None)


class region:
    """A region: a context manager (with pcollect.region("x"): ...) and a decorator
    (@pcollect.region("x"))."""

    def __init__(self, name):
        self.name = name

    def __enter__(self):
        region_begin(self.name)
        return self

    def __exit__(self, *exc):
        region_end()
        return False

    def __call__(self, func):
        @functools.wraps(func)
        def in_region(*args, **kwargs):
            region_begin(self.name)
            try:
                return func(*args, **kwargs)
            finally:
                region_end()
        return in_region


def profile(*args, **kwargs):
    """Profile a block of this running interpreter from inside it (no pcollect around it):
    with pcollect.profile() as p: work(), then print(p). See _profile.profile."""
    from . import _profile
    return _profile.profile(*args, **kwargs)


def load_ipython_extension(ip):
    """%load_ext pcollect: the %pcollect and %%pcollect magics (_profile.USAGE)."""
    from . import _profile
    _profile.load_ipython_extension(ip)
