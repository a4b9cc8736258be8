# SPDX-License-Identifier: MIT
"""Thread pool tasks under the call that submitted them (preport -stitch).

sitecustomize (api/python) calls install_futures() when the program imports
concurrent.futures.thread and install_pool() when it imports multiprocessing.pool. From then
on ThreadPoolExecutor.submit (and so its map) and ThreadPool.apply_async (joblib's threading
backend) ask the agent for the submitting thread's stack (PCOLLECT_OP_ORIGIN_TAKE: an id in
that thread's stream) and give the pool, in place of the callable, a wrapper that tells the
agent, in the worker, that the task it runs was submitted there (PCOLLECT_OP_ORIGIN_TASK:
a RAW_REC_ORIGIN of kind 2 at its start, its end another). Not profiled, or submitted from a
thread that is not sampled: the pool gets the program's callable. docs/python.md says what
the program can tell.
"""
import sys
from _thread import get_native_id

from pcollect import _tasks

_OP_ORIGIN_TAKE = 6  # enum pcollect_agent_op in common/agent-api.h
_OP_ORIGIN_TASK = 7
_tasks._OURS += (__file__,)  # tracebacks lose this module's frames too (_tasks._hide)


def _wrap(fn, call, stack):
    """fn, run in a worker under the submitting stack (of the calling thread)."""
    arg = b"%d %d" % (get_native_id(), stack)
    hide = _tasks._hide

    def pool_task(*args, **kwargs):
        call(_OP_ORIGIN_TASK, arg)
        try:
            return fn(*args, **kwargs)
        except BaseException as e:
            hide(e)
            raise
        finally:
            call(_OP_ORIGIN_TASK, None)

    return pool_task


def _patched(real, qualname, key):
    """real (a pool's method that takes the callable after self, or as keyword key) in a
    wrapper that gives the pool _wrap(callable), made to look like real (its profile frame
    too: its name, and its qualified name on 3.11+). A call real refuses is refused as
    real refuses it."""
    agent, wrap, op, hide = _tasks._agent, _wrap, _OP_ORIGIN_TAKE, _tasks._hide

    def submit(self, *args, **kwargs):
        call = agent()
        if call is not None and (args or key in kwargs):
            stack = call(op, None)
            if stack > 0:
                if args:
                    args = (wrap(args[0], call, stack),) + args[1:]
                else:
                    kwargs[key] = wrap(kwargs[key], call, stack)
        try:
            return real(self, *args, **kwargs)
        except BaseException as e:
            hide(e)
            raise

    fields = dict(co_name=qualname.rpartition(".")[2])
    if sys.version_info >= (3, 11):
        fields["co_qualname"] = qualname
    submit.__code__ = submit.__code__.replace(**fields)
    submit.__name__, submit.__qualname__ = fields["co_name"], qualname
    submit.__doc__ = real.__doc__
    submit.__wrapped__ = real
    submit._pcollect = True
    return submit


def install_futures(thread):
    """Have concurrent.futures.thread.ThreadPoolExecutor.submit wrap every callable."""
    cls = thread.ThreadPoolExecutor
    if not getattr(cls.submit, "_pcollect", False):
        cls.submit = _patched(cls.submit, "ThreadPoolExecutor.submit", "fn")


def install_pool(pool):
    """Have multiprocessing.pool.ThreadPool.apply_async wrap every callable (a process
    pool's tasks are pickled: they stay the program's)."""
    cls = pool.ThreadPool
    if not getattr(cls.apply_async, "_pcollect", False):
        cls.apply_async = _patched(cls.apply_async, "ThreadPool.apply_async", "func")
