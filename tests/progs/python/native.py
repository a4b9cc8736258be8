# SPDX-License-Identifier: MIT
"""Known answer: call_native calls pyburn_spin (C, through ctypes) which burns CPU; the native
frame must appear under the Python frame that called it. py_work burns Python CPU beside it.

usage: native.py LIBPYBURN [NATIVE_ITERS PY_ITERS]
"""
import ctypes
import sys

ROUNDS = 10


def call_native(lib, n):
    return lib.pyburn_spin(n)  # CALL-NATIVE


def py_work(n):
    x = 0
    for i in range(n):
        x = (x * 7 + i) & 0xFFFF
    return x


def main():
    lib = ctypes.CDLL(sys.argv[1])
    lib.pyburn_spin.argtypes = [ctypes.c_long]
    lib.pyburn_spin.restype = ctypes.c_long
    native = int(sys.argv[2]) if len(sys.argv) > 2 else 80000000
    py = int(sys.argv[3]) if len(sys.argv) > 3 else 500000
    total = 0
    for _ in range(ROUNDS):
        total += call_native(lib, native) + py_work(py)
    print(total)


if __name__ == "__main__":
    main()
