# SPDX-License-Identifier: MIT
"""pcollect's start-up hook for the Python programs it starts (docs/python.md, asyncio).

pcollect puts this directory at the end of PYTHONPATH, so Python's site module imports this
file at start-up, unless a sitecustomize of the program's own comes first (then asyncio tasks
are not named, and that one runs as it would). It imports nothing itself: when the program
imports asyncio, pcollect._tasks names its tasks' frames and times their suspensions. The
sitecustomize this one hides (the distribution's) runs after it. PCOLLECT_ASYNCIO=0 turns
the tasks off.
"""
import sys

# The import system's own classes, loaded before site runs: importlib.util would cost the
# start of every program tens of milliseconds.
from _frozen_importlib import module_from_spec as _module_from_spec
from _frozen_importlib_external import PathFinder as _PathFinder


class _AsyncioHook:
    """A finder that lets asyncio.base_events load as usual, then has it patched."""

    def find_spec(self, name, path=None, target=None):
        if name != "asyncio.base_events":
            return None
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
            try:
                from pcollect import _tasks
                _tasks.install(module)
            except Exception as e:  # the program goes on, its tasks unnamed
                sys.stderr.write("pcollect: cannot name asyncio tasks: %s\n" % e)

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
        if "asyncio.base_events" in sys.modules:
            from pcollect import _tasks
            _tasks.install(sys.modules["asyncio.base_events"])
        else:
            sys.meta_path.insert(0, _AsyncioHook())
    _chain()


_start()
del _start, _chain
