# SPDX-License-Identifier: MIT
"""Samples that cannot have Python frames: spin in Python first (frames expected), then CPU in
a thread made by C code (no Python thread state), then Python code in a sub-interpreter (not
walked). Each must be sampled as native code with a note, never crash the program. Each
phase burns a budget of CPU time (PY_MS, NATIVE_MS, SUB_MS). Prints one JSON line: for each
phase its CLOCK_MONOTONIC window [t0, t1] (ns) and the main thread's CPU time in it (s):
{"spin": [t0, t1, cpu], "cthread": [...], "sub": [...]}; "sub" is the sub-interpreter's
run_string alone, without making and ending it.

usage: degrade.py LIBPYBURN [PY_MS NATIVE_MS SUB_MS]   (default 300, 300 and 300)
"""
import ctypes
import json
import sys
import time
from work import spin_for

# The sub-interpreter's work: the same loop, its own clock (it shares no module with us).
SUB = """
import resource
def cpu_ns():
    ru = resource.getrusage(resource.RUSAGE_THREAD)
    return int((ru.ru_utime + ru.ru_stime) * 1e9)
x = 0
end = cpu_ns() + %d
while cpu_ns() < end:
    for i in range(5000):
        x = (x * 7 + i) & 0xFFFF
"""


def phase(fn, *args):
    t0, c0 = time.monotonic_ns(), time.thread_time_ns()
    fn(*args)
    c1, t1 = time.thread_time_ns(), time.monotonic_ns()
    return [t0, t1, (c1 - c0) / 1e9]


def in_c_thread(lib, ms):
    return lib.pyburn_thread_spin(ms)


def in_subinterpreter(ms):
    try:
        import _interpreters as xi
    except ImportError:
        import _xxsubinterpreters as xi
    sub = xi.create()
    try:
        return phase(xi.run_string, sub, SUB % int(ms * 1e6))
    finally:
        xi.destroy(sub)


def main():
    lib = ctypes.CDLL(sys.argv[1])
    lib.pyburn_thread_spin.argtypes = [ctypes.c_double]
    lib.pyburn_thread_spin.restype = ctypes.c_long
    py, native, sub = (float(a) for a in (sys.argv[2:5] if len(sys.argv) > 4 else
                                          (300, 300, 300)))
    out = {"spin": phase(spin_for, py), "cthread": phase(in_c_thread, lib, native)}
    out["sub"] = in_subinterpreter(sub)  # last: 3.10 and 3.13 lose the main thread's state
    print(json.dumps(out))


if __name__ == "__main__":
    main()
