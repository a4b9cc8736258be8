# SPDX-License-Identifier: MIT
"""Known answer for memory-consumption's leaks: one true leak of LEAK bytes, a block of the C
heap whose address the program drops (ctypes' malloc, never freed: valgrind's "definitely
lost"), and a module global of HELD bytes the program keeps to its end, which the interpreter
frees at its exit (the module's dictionary is cleared): not a leak. Everything else still
allocated at the end is the interpreter's own (its start-up, its allocator's arenas, what its
imports made). Prints the two sizes.
"""
import ctypes

LEAK = 3 * 1024 * 1024 + 4321
HELD = 8 * 1024 * 1024

libc = ctypes.CDLL(None)
libc.malloc.restype = ctypes.c_void_p
libc.malloc.argtypes = [ctypes.c_size_t]


def leak():
    libc.malloc(LEAK)  # LEAK-LINE: the address is dropped, the block never freed


held = bytearray(HELD)  # HELD-LINE: kept to the end, freed at the interpreter's exit
leak()
print("leaked %d bytes, held %d bytes to the end" % (LEAK, len(held)))
