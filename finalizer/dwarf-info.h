/* SPDX-License-Identifier: MIT */
/* DWARF through libdwarf: source lines and inline chains for a set of addresses. */
#ifndef PCOLLECT_FINALIZER_DWARF_INFO_H
#define PCOLLECT_FINALIZER_DWARF_INFO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "finalizer/str-pool.h"

/* One frame of an inline chain. Strings are interned in the caller's pool. */
struct dwarf_frame {
	const char *name;      /* demangled linkage name, else DW_AT_name; NULL if none */
	const char *mangled;   /* linkage name, NULL if none */
	const char *decl_file; /* where the function is defined, NULL if unknown */
	uint32_t decl_line;
	const char *file; /* this frame's source position: the call site of the next */
	uint32_t line;    /* frame, or the line-table position for the innermost */
};

/*
 * The answer for n addresses. For address i, frames[first[i] .. first[i] + count[i]) is its
 * chain from the real function (outermost, depth 0) to the innermost inlined function;
 * count[i] is 0 when no DW_TAG_subprogram covers it. leaf_file[i]/leaf_line[i] is the line
 * table's answer (NULL/0 when none), also filled when count[i] is 0.
 */
struct dwarf_lookup {
	uint32_t *first, *count;
	const char **leaf_file;
	uint32_t *leaf_line;
	struct dwarf_frame *frames;
	size_t nframes, cap;
	size_t n;            /* addresses */
	uint64_t cus;        /* compilation units in the file */
	uint64_t cus_parsed; /* units that held one of the addresses and were read in full */
	/* Strings of the frames read by helper threads (the others are in the caller's pool):
	   they must live as long as the frames; take them over or release them here. */
	struct str_pool *pools;
	size_t npools, pools_cap;
};

/*
 * Resolve the sorted, distinct ELF virtual addresses addrs[0..n) of the file at path (a file
 * with .debug_info: the binary or its separate debug file). Only compilation units holding
 * one of the addresses are read beyond their first DIE, and only the subtrees covering them;
 * an address belongs to the first unit whose ranges cover it. With many addresses the units
 * are read on up to jobs threads (each with its own libdwarf handle); the result does not
 * depend on jobs. inline_chains false: only the real function and the line table (fast mode).
 * Strings are interned in pool (and in out->pools). Safe to call from several threads.
 * Returns 0, -ENODATA when the file has no DWARF, or another negative errno with err
 * (errsize bytes) set to libdwarf's message.
 */
int dwarf_info_resolve(const char *path, const uint64_t *addrs, size_t n, bool inline_chains,
		       int jobs, struct str_pool *pool, struct dwarf_lookup *out, char *err,
		       size_t errsize);
void dwarf_lookup_release(struct dwarf_lookup *l);

#endif
