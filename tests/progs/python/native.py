# SPDX-License-Identifier: MIT
"""Known answer: call_native calls pyburn_spin (C, through ctypes), which burns NATIVE_MS of
CPU time; the native frame must appear under the Python frame that called it. py_work burns
PY_MS of CPU time in Python beside it; ROUNDS of each. Prints the CPU time each took in all
(time.thread_time around the calls) as one JSON line: {"native": s, "py": s}.

usage: native.py LIBPYBURN [NATIVE_MS PY_MS]   (default 40 and 20 ms)
"""
import ctypes
import json
import sys
import time
from work import spin_for

ROUNDS = 10


def call_native(lib, ms):
    return lib.pyburn_spin(ms)  # CALL-NATIVE


def py_work(ms):
    return spin_for(ms)


def main():
    lib = ctypes.CDLL(sys.argv[1])
    lib.pyburn_spin.argtypes = [ctypes.c_double]
    lib.pyburn_spin.restype = ctypes.c_long
    native = float(sys.argv[2]) if len(sys.argv) > 2 else 40
    py = float(sys.argv[3]) if len(sys.argv) > 3 else 20
    used = {"native": 0, "py": 0}
    for _ in range(ROUNDS):
        t0 = time.thread_time_ns()
        call_native(lib, native)
        t1 = time.thread_time_ns()
        py_work(py)
        used["native"] += t1 - t0
        used["py"] += time.thread_time_ns() - t1
    print(json.dumps({k: v / 1e9 for k, v in used.items()}))


if __name__ == "__main__":
    main()
