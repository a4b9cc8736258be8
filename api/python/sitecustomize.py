# SPDX-License-Identifier: MIT
"""pcollect's start-up hook for the Python programs it starts (docs/python.md: asyncio, pools).

pcollect puts this directory at the end of PYTHONPATH, so Python's site module imports this
file at start-up, unless a sitecustomize of the program's own comes first (then asyncio tasks
are not named, and that one runs as it would). It imports nothing itself: when the program
imports asyncio, pcollect._tasks names its tasks' frames and times their suspensions; when
it imports concurrent.futures.thread or multiprocessing.pool, pcollect._pools has each task
of a thread pool name the stack that submitted it (preport -stitch). The sitecustomize this
one hides (the distribution's) runs after it. PCOLLECT_ASYNCIO=0 turns the tasks off,
PCOLLECT_POOLS=0 the pools.
"""
import sys

# The import system's own classes, loaded before site runs: importlib.util would cost the
# start of every program tens of milliseconds.
from _frozen_importlib import module_from_spec as _module_from_spec
from _frozen_importlib_external import PathFinder as _PathFinder


# The modules pcollect patches once loaded: name -> (its pcollect module, function, what it
# is for, said when it fails).
_PATCHES = {}


def _patch(module, mod, fn, what):
    try:
        getattr(getattr(__import__("pcollect." + mod), mod), fn)(module)
    except Exception as e:  # the program goes on, unpatched
        sys.stderr.write("pcollect: cannot %s: %s\n" % (what, e))


class _PatchHook:
    """A finder that lets the modules of _PATCHES load as usual, then has them patched."""

    def find_spec(self, name, path=None, target=None):
        what = _PATCHES.pop(name, None)
        if what is None:
            return None
        if not _PATCHES:
            try:
                sys.meta_path.remove(self)
            except ValueError:
                pass
        spec = _PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        run = spec.loader.exec_module

        def exec_module(module):
            run(module)
            _patch(module, *what)

        spec.loader.exec_module = exec_module
        return spec


def _chain():
    """Run the sitecustomize this file hides: the first one after this directory."""
    import os
    here = os.path.dirname(os.path.realpath(__file__))
    after = [p for p in sys.path if p and os.path.isdir(p)]
    for i, p in enumerate(after):
        if os.path.realpath(p) == here:
            after = after[i + 1:]
            break
    spec = _PathFinder.find_spec("sitecustomize", after)
    if spec is None or spec.loader is None:
        return
    module = _module_from_spec(spec)
    spec.loader.exec_module(module)


def _start():
    import os
    if os.environ.get("PCOLLECT_ASYNCIO", "1") != "0":
        _PATCHES["asyncio.base_events"] = ("_tasks", "install", "name asyncio tasks")
    if os.environ.get("PCOLLECT_POOLS", "1") != "0":
        _PATCHES["concurrent.futures.thread"] = ("_pools", "install_futures",
                                                 "follow thread pool tasks")
        _PATCHES["multiprocessing.pool"] = ("_pools", "install_pool", "follow thread pool tasks")
    for name in list(_PATCHES):
        if name in sys.modules:
            _patch(sys.modules[name], *_PATCHES.pop(name))
    if _PATCHES:
        sys.meta_path.insert(0, _PatchHook())
    _chain()


_start()
del _start, _chain
