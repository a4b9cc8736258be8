# SPDX-License-Identifier: MIT
"""asyncio tasks under pcollect: each task's frames under its name, its suspensions timed.

sitecustomize (api/python) calls install() when the program imports asyncio. From then on
BaseEventLoop.create_task (what asyncio.create_task, ensure_future, TaskGroup, gather and
asyncio.run reach, whatever task factory the loop has) hands the task a wrapper of the
coroutine: the task runs _task(), which runs the coroutine in a driver whose code object is
named "[task NAME]" (file "<pcollect task>"). The driver's frame is on the stack whenever
the task runs, so the agent's walk, which already reads every frame's code object, finds
the task in every sample at no cost per step (preport -group-by task). The driver times
each suspension (from the coroutine's yield to its next step) and hands it to the agent
with the suspended coroutines' code objects and offsets (PCOLLECT_OP_TASK_WAIT): the Task
Wait Time at the await line. docs/python.md says what the program can tell.
"""
import re
import sys
import time
import types

_OP_TASK_WAIT = 5  # enum pcollect_agent_op in common/agent-api.h
_FILE = "<pcollect task>"
_OURS = (_FILE, __file__)  # the driver's code and this module's
_MAX_NAMES = 4096  # task names given a code object of their own; later ones share "[task *]"
_DEPTH = 64  # suspended coroutines described per wait (TASK_FRAMES in agent-task.c)
_CO_ITERABLE_COROUTINE = 0x100
_ALONE_NS = 1000000  # suspensions this long are told one by one (a timeline row each)
_FLUSH_NS = 100000000  # shorter ones are told summed, this often
_DEFAULT_NAME = re.compile(r"Task-\d+\Z")

_drivers = {}
_call = None
_looked = False


def _agent():
    """The agent's entry point, or None (not profiled): looked up once."""
    global _call, _looked
    if not _looked:
        _looked = True
        try:
            import ctypes
            fn = ctypes.CDLL(None).pcollect_agent_call
            fn.argtypes = (ctypes.c_int, ctypes.c_char_p)
            fn.restype = ctypes.c_int
            _call = fn
        except (ImportError, OSError, AttributeError):
            _call = None
    return _call


def _where(coro):
    """The suspended coroutines of coro's await chain, innermost first: b"CODE:OFFSET" each."""
    parts = []
    c = coro
    while c is not None and len(parts) < _DEPTH:
        f = getattr(c, "cr_frame", None) or getattr(c, "gi_frame", None)
        if f is None:
            break
        parts.append("%x:%x" % (id(f.f_code), f.f_lasti))
        c = getattr(c, "cr_await", None) or getattr(c, "gi_yieldfrom", None)
    parts.reverse()
    return " ".join(parts).encode()


def _drive(coro, call):
    """Run coro as the task's coroutine, step for step; time each suspension. A suspension
    of _ALONE_NS or more is told to the agent at once; shorter ones are summed per await
    chain and told every _FLUSH_NS and at the task's end (a call costs the agent tens of
    microseconds of reads: told every step, a task switching every few microseconds would
    run ten times slower). The agent is called from this frame: it puts the coroutines on
    top of this frame's stack."""
    send, throw, now = coro.send, coro.throw, time.monotonic_ns
    where_of, op = _where, _OP_TASK_WAIT
    value = exc = None
    sums = {}
    flushed = now()
    try:
        while True:
            try:
                if exc is None:
                    fut = send(value)
                else:
                    fut = throw(exc)
            except StopIteration as stop:
                return stop.value
            except BaseException as e:
                _hide(e)
                raise
            exc = value = None
            start = now()
            try:
                value = yield fut
            except GeneratorExit:
                coro.close()
                raise
            except BaseException as e:
                _hide(e)  # thrown in here at the yield: the program's coroutine gets it next
                exc = e
            if call is None:
                continue
            end = now()
            if end - start >= _ALONE_NS:
                call(op, b"w %d %d %s" % (start, end - start, where_of(coro)))
                continue
            where = where_of(coro)
            s = sums.get(where)
            if s is None:
                sums[where] = [1, end - start]
            else:
                s[0] += 1
                s[1] += end - start
            if end - flushed >= _FLUSH_NS:
                for where, (count, total) in sums.items():
                    call(op, b"s %d %d %d %s" % (end, count, total, where))
                sums.clear()
                flushed = end
    finally:
        # Also when a pending task is dropped (its close() at exit): nothing may be raised.
        try:
            end = now()
            for where, (count, total) in sums.items():
                call(op, b"s %d %d %d %s" % (end, count, total, where))
        except Exception:
            pass


def _driver(name):
    """The driver under the task's name: a code object per name, made once."""
    fn = _drivers.get(name)
    if fn is None:
        if len(_drivers) >= _MAX_NAMES:
            name = "*"
            fn = _drivers.get(name)
    if fn is None:
        mark = "[task %s]" % name
        code = _drive.__code__
        fields = dict(co_name=mark, co_filename=_FILE,
                      co_flags=code.co_flags | _CO_ITERABLE_COROUTINE)
        if sys.version_info >= (3, 11):
            fields["co_qualname"] = mark
        fn = types.FunctionType(code.replace(**fields), _drive.__globals__, mark)
        _drivers[name] = fn
    return fn


def _task_name(coro, tasks):
    """The task's name: asyncio's, or for the default "Task-N" its coroutine's name."""
    task = tasks.current_task()
    name = task.get_name() if task is not None else None
    if not isinstance(name, str) or _DEFAULT_NAME.match(name):
        name = getattr(coro, "__qualname__", None) or "Task-*"
    return name


def _hide(e):
    """Take this frame (the first entry of e's traceback) out of the traceback the program
    sees: a bare raise then adds none on 3.11+ (it re-raises e with e.__traceback__), so the
    program's tracebacks read as without pcollect. On 3.10 a re-raise keeps the traceback
    it caught: the two frames stay there (docs/python.md)."""
    tb = e.__traceback__
    if tb is not None and tb.tb_frame.f_code.co_filename in _OURS:
        e.__traceback__ = tb.tb_next


async def _task(coro):
    """What the task runs: coro in the driver named after the task."""
    from asyncio import tasks
    try:
        return await _driver(_task_name(coro, tasks))(coro, _agent())
    except BaseException as e:
        _hide(e)
        raise


def install(base_events):
    """Have base_events.BaseEventLoop.create_task wrap every coroutine it is given."""
    cls = base_events.BaseEventLoop
    create = cls.create_task
    if getattr(create, "_pcollect", False):
        return

    def create_task(self, coro, *args, **kwargs):
        if type(coro) is types.CoroutineType:
            wrapped = _task(coro)
            # The task's repr names the program's coroutine, as without pcollect.
            wrapped.__name__, wrapped.__qualname__ = coro.__name__, coro.__qualname__
            try:
                return create(self, wrapped, *args, **kwargs)
            except BaseException:
                wrapped.close()  # the program's coroutine alone is "never awaited", as before
                raise
        return create(self, coro, *args, **kwargs)

    create_task._pcollect = True
    create_task.__doc__ = create.__doc__
    create_task.__qualname__ = create.__qualname__
    cls.create_task = create_task
