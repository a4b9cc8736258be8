/* SPDX-License-Identifier: MIT */
/* The C functions a Python interpreter or extension module registers by name (its PyMethodDef
   tables), named as cProfile names them, read from the module's file. */
#ifndef PCOLLECT_FINALIZER_PYMETHOD_TABLE_H
#define PCOLLECT_FINALIZER_PYMETHOD_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include <libelf.h>

struct pymethod {
	uint64_t addr; /* ml_meth: the ELF virtual address of the C function */
	char *name;    /* "{method 'sort' of 'numpy.ndarray' objects}", owned */
	uint32_t rank; /* among names of one function, the lowest is kept */
};

struct pymethod_table {
	struct pymethod *v; /* sorted by addr, one per address */
	size_t n, cap;
};

/*
 * Read the method tables of elf (finalizer/pymethod-table.c says how they are found), whose
 * file was loaded from path (its directories qualify an extension module's name, as
 * "numpy/core/_multiarray_umath.cpython-311-x86_64-linux-gnu.so" gives
 * "numpy.core._multiarray_umath"). A file that does not use the Python C API (no dynamic
 * symbol "Py..." or "_Py...") gives an empty table. Never trusts the file: every read is
 * bounds-checked, and what does not look exactly like a method table is left out.
 * Returns 0 or -ENOMEM (t empty on failure).
 */
int pymethod_table_load(struct pymethod_table *t, Elf *elf, const char *path);
void pymethod_table_release(struct pymethod_table *t);
/* The cProfile name of the method whose C function starts at addr, or NULL. */
const char *pymethod_table_find(const struct pymethod_table *t, uint64_t addr);

#endif
