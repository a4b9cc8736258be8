/* SPDX-License-Identifier: MIT */
/* Function extents from the unwind tables: the FDEs of .eh_frame (or .debug_frame). */
#ifndef PCOLLECT_FINALIZER_EH_FRAME_H
#define PCOLLECT_FINALIZER_EH_FRAME_H

#include <stddef.h>
#include <stdint.h>

#include <libelf.h>

/* The code one FDE describes: [start, end), ELF virtual addresses. */
struct fde_range {
	uint64_t start, end;
};

enum fde_source {
	FDE_NONE = 0,        /* no unwind table with an FDE */
	FDE_EH_FRAME = 1,    /* .eh_frame (the table .eh_frame_hdr indexes) */
	FDE_DEBUG_FRAME = 2, /* .debug_frame */
};

struct fde_table {
	struct fde_range *v; /* sorted by start, disjoint, none empty */
	size_t n;
	enum fde_source source;
};

/*
 * Read every FDE of elf's .eh_frame, else (when it has none) of its .debug_frame: the extent
 * of one function, or of one part of a function the compiler split off (".cold"). The records
 * are parsed as the DWARF and LSB specifications say: CIE augmentations, pointer encodings
 * (absolute, pc-relative, text- and data-relative; 2, 4, 8 bytes or LEB128), 32- and 64-bit
 * lengths. FDEs outside the executable sections (left by code the linker discarded) are
 * dropped; where two overlap, the earlier ends where the later starts. A little-endian file
 * only. Returns 0 (a file without unwind tables gives an empty table) or -ENOMEM.
 */
int fde_table_load(struct fde_table *t, Elf *elf);

/*
 * Make a table of v[0..n) (malloc'ed, any order; taken over, freed on failure): sorted and
 * cleaned as fde_table_load() does. For tables read back from the symbol cache. 0 or -ENOMEM.
 */
int fde_table_adopt(struct fde_table *t, struct fde_range *v, size_t n, enum fde_source source);

void fde_table_release(struct fde_table *t);

/* The range holding addr, or NULL. */
const struct fde_range *fde_table_find(const struct fde_table *t, uint64_t addr);

/* The range starting exactly at addr, or NULL. */
const struct fde_range *fde_table_at(const struct fde_table *t, uint64_t addr);

/* The section name of a source: ".eh_frame", ".debug_frame" or "none". */
const char *fde_source_name(enum fde_source s);

#endif
