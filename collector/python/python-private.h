/* SPDX-License-Identifier: MIT */
/* pyagent internals shared by its files: the interpreter found and the ELF lookup. */
#ifndef PCOLLECT_COLLECTOR_PYTHON_PRIVATE_H
#define PCOLLECT_COLLECTOR_PYTHON_PRIVATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "collector/python/python-layout.h"
#include "collector/python/python.h"

/* The interpreter pyagent walks; written by pyagent_on_module() before sampling starts. */
struct pyagent_runtime {
	int state;	    /* enum pyagent_module of the interpreter found, 0 = none */
	int minor;	    /* 3.minor, -1 unknown */
	uint32_t version;   /* RAW_PY_VERSION(3, minor) */
	struct pylayout L;  /* offsets (3.13: refreshed from _Py_DebugOffsets) */
	uintptr_t runtime;  /* &_PyRuntime */
	uintptr_t code_type;  /* &PyCode_Type */
	uintptr_t frame_type; /* &PyFrame_Type (3.10 frames are objects) */
	size_t rt_lo, rt_len; /* the span of _PyRuntime one sample copies */
	size_t ts_len;	      /* bytes of a PyThreadState one sample copies */
	char path[256];	      /* the module that holds it (diagnostics) */
};
extern struct pyagent_runtime pyagent_rt;

struct pyelf_sym {
	const char *name; /* in */
	bool found;	  /* out */
	uint64_t value;	  /* out: st_value (add the load bias) */
	uint64_t size;	  /* out: st_size */
	bool has_data;	  /* out: data holds the first bytes of its initial value */
	uint8_t data[8];  /* out: from the file's section (.rodata, .data) */
};

/*
 * Look syms up in .dynsym and .symtab of the ELF file at path (defined symbols only). When
 * rodata_minor is not NULL, also look for a "python3.N" string in read-only data and
 * store N there (-1 if none). Returns 0, -ENOEXEC for a file that is not ELF64, or -errno.
 */
int pyelf_scan(const char *path, struct pyelf_sym *syms, size_t nsyms, int *rodata_minor);

/* The code-identity table (python-codes.c): the id of the code object at addr. */
uint64_t pycodes_lookup(struct pyagent_thread *t, struct raw_writer *w, uintptr_t addr,
			const uint8_t *code, int pid);

/* Guarded copy with the pid already known (python-read.c): 0 or -1. */
int pyread(int pid, void *dst, uintptr_t src, size_t len);

#endif
