# SPDX-License-Identifier: MIT
"""Allocations of known size by known Python functions (tests/e2e/python-memory.py).

  make_bytearrays  8 bytearrays of 4 MiB (+1 byte each, CPython's terminator), held
  make_lists       4 lists of 2^20 items (8 MiB of item pointers each), held
  make_numpy       (numpy importable only) 2 arrays of 2^20 float64 zeros (8 MiB each, by
                   numpy's C code: calloc), held
All are held together (the process's peak), then released before the end: nothing leaks.
"""
import sys

MB = 1 << 20
held = []


def make_bytearrays():
    for _ in range(8):
        held.append(bytearray(4 * MB))  # BYTEARRAY


def make_lists():
    for _ in range(4):
        held.append([None] * MB)  # LIST


def make_numpy(np):
    for _ in range(2):
        held.append(np.zeros(MB))  # NUMPY


def main():
    try:
        import numpy as np
    except ImportError:
        np = None
    make_bytearrays()
    make_lists()
    if np is not None:
        make_numpy(np)
    del held[:]
    print("numpy" if np is not None else "no numpy")
    sys.stdout.flush()


main()
