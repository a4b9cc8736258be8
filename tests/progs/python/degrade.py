# SPDX-License-Identifier: MIT
"""Samples that cannot have Python frames: spin in Python first (frames expected), then CPU in
a thread made by C code (no Python thread state), then Python code in a sub-interpreter (not
walked). Each must be sampled as native code with a note, never crash the program.

usage: degrade.py LIBPYBURN [PY_ITERS NATIVE_ITERS]
"""
import ctypes
import sys


def spin(n):
    x = 0
    for i in range(n):
        x = (x * 7 + i) & 0xFFFF
    return x


def in_c_thread(lib, n):
    return lib.pyburn_thread_spin(n)


def in_subinterpreter(n):
    try:
        import _interpreters as xi
    except ImportError:
        import _xxsubinterpreters as xi
    sub = xi.create()
    try:
        xi.run_string(sub, "x = 0\nfor i in range(%d): x = (x * 7 + i) & 0xFFFF\n" % n)
    finally:
        xi.destroy(sub)


def main():
    lib = ctypes.CDLL(sys.argv[1])
    lib.pyburn_thread_spin.argtypes = [ctypes.c_long]
    lib.pyburn_thread_spin.restype = ctypes.c_long
    py = int(sys.argv[2]) if len(sys.argv) > 2 else 3000000
    native = int(sys.argv[3]) if len(sys.argv) > 3 else 240000000
    print(spin(py), in_c_thread(lib, native))
    in_subinterpreter(py)  # last: 3.10 and 3.13 lose the main thread's state after it


if __name__ == "__main__":
    main()
