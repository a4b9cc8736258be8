/* SPDX-License-Identifier: MIT */
/* What the parts of the DWARF reader share: one unit's reading context and their entry points. */
#ifndef PCOLLECT_FINALIZER_DWARF_INFO_PRIVATE_H
#define PCOLLECT_FINALIZER_DWARF_INFO_PRIVATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <dwarf.h>
#include <libdwarf.h>

#include "finalizer/dwarf-info.h"
#include "finalizer/line-table.h"
#include "finalizer/str-pool.h"

/*
 * The reader is in four parts, each a file:
 *   dwarf-units.c   which compilation unit holds which address; the units read in parallel
 *   dwarf-ranges.c  the code ranges of a DIE (DW_AT_low_pc/high_pc, DW_AT_ranges, rnglists)
 *   dwarf-lines.c   a unit's line table and its file names
 *   dwarf-scopes.c  the functions and inlined calls covering an address, and their chains
 * dwarf-info.c opens the file, reads one unit with them and hands the answer back.
 */

struct addr_range {
	uint64_t lo, hi; /* [lo, hi) */
};

struct range_set {
	struct addr_range *r;
	size_t n, cap;
};

/* A function or inlined call covering at least one wanted address. */
struct scope {
	int32_t parent; /* scope index, -1 for a real function */
	uint32_t depth; /* 0 for a real function */
	const char *name, *mangled, *decl_file;
	uint32_t decl_line;
	const char *call_file; /* for inlined calls: where the call is, in the parent */
	uint32_t call_line;
};

/* Reading one unit at a time, on one libdwarf handle (one per thread). */
struct cu_ctx {
	Dwarf_Debug dbg;
	Dwarf_Half version;
	Dwarf_Off cu_start, cu_end; /* global offsets of this unit: decl_file is only
				       meaningful for DIEs inside it */
	uint64_t base;              /* the unit's base address (DWARF 2-4 ranges) */
	/* The unit's line table: read here (lt), else through libdwarf (lc). */
	const struct line_sections *sections;
	struct line_table lt;
	bool have_lt;
	const char *comp_dir; /* DW_AT_comp_dir */
	Dwarf_Line_Context lc;
	Dwarf_Unsigned line_version;
	Dwarf_Signed file_base, file_end; /* valid file numbers: [file_base, file_end) */
	const char **files;               /* full paths by number - file_base, when asked */
	bool inline_chains;
	struct str_pool *pool;
	const uint64_t *addrs; /* all addresses */
	struct scope *scopes;
	size_t nscopes, cap;
	int32_t *best;               /* per address (global index): deepest scope, -1 none */
	struct dwarf_frame **frames; /* where chains go: this worker's array */
	size_t *nframes, *fcap;
	int err;
};

/* A compilation unit to read: where its first DIE is and its addresses. */
struct cu_unit {
	Dwarf_Off die;
	Dwarf_Off start, end;
	Dwarf_Half version;
	uint64_t base;
	size_t idx_off, k; /* its addresses: cu_units.idx[idx_off .. + k) */
	int worker;        /* which worker read it */
};

/* Free libdwarf's error, if any, and clear it. */
void dbg_drop_error(Dwarf_Debug dbg, Dwarf_Error *e);

/* dwarf-info.c */
/* Open path with libdwarf: 0, -ENODATA (no DWARF), or -EINVAL with err set. */
int dbg_open(const char *path, Dwarf_Debug *dbg, char *err, size_t errsize);
void dbg_close(Dwarf_Debug dbg);
/* A context for reading the units of dbg for addrs[0..n). 0 or -ENOMEM. */
int cu_ctx_init(struct cu_ctx *c, Dwarf_Debug dbg, const uint64_t *addrs, size_t n,
		bool inline_chains, const struct line_sections *sections, struct str_pool *pool);
void cu_ctx_release(struct cu_ctx *c);
/*
 * Read unit u for the addresses idx[0..u->k) (reordered). gated: the unit gave no address
 * ranges, so only the addresses its line table holds are looked for in its DIEs. 0 or -errno.
 */
int cu_resolve_unit(struct cu_ctx *c, const struct cu_unit *u, uint32_t *idx, bool gated,
		    struct dwarf_lookup *out);

/* dwarf-ranges.c */
/* The offset or index an attribute holds (DW_FORM_sec_offset, rnglistx, data): 0 or -1. */
int dbg_attr_offset(Dwarf_Debug dbg, Dwarf_Attribute a, Dwarf_Unsigned *out);
/*
 * The code ranges of die into s (emptied first). Returns true when the DIE has code addresses
 * (DW_AT_low_pc/high_pc or DW_AT_ranges). Sets c->err on -ENOMEM.
 */
bool cu_die_ranges(struct cu_ctx *c, Dwarf_Die die, struct range_set *s);
bool range_set_contains(const struct range_set *s, uint64_t addr);

/* dwarf-lines.c */
/* Open the unit's line table: read directly when possible, else through libdwarf. */
void cu_lines_open(struct cu_ctx *c, Dwarf_Die cu_die);
void cu_lines_close(struct cu_ctx *c);
/* The line table's answer for idx[0..n) into out. How many got a line, or -ENOMEM. */
long cu_lines_assign(struct cu_ctx *c, const uint32_t *idx, size_t n, struct dwarf_lookup *out);
/* The full, clean path of file number idx of the unit's line table, interned; NULL if none. */
const char *cu_file_name(struct cu_ctx *c, Dwarf_Unsigned idx);

/* dwarf-scopes.c */
/* Find the deepest scope (c->best) of the addresses idx[0..n) among the unit's DIEs. */
void cu_scopes_visit(struct cu_ctx *c, Dwarf_Die cu_die, const uint32_t *idx, size_t n);
/* Emit the chain of address i from its deepest scope into c->frames. 0 or -ENOMEM. */
int cu_chain_emit(struct cu_ctx *c, struct dwarf_lookup *out, uint32_t i);

/* dwarf-units.c */
/*
 * Which unit holds which address: the units with ranges that hold some (an address belongs
 * to the first unit covering it), and the units without ranges.
 */
struct cu_units {
	struct cu_unit *v;
	size_t n, cap;
	struct cu_unit *rangeless;
	size_t nrangeless, rangeless_cap;
	uint32_t *idx; /* the addresses of v[i]: idx[v[i].idx_off .. + v[i].k) */
	bool *owned;   /* per address: held by a unit of v */
};

/*
 * Read the unit headers of c->dbg and partition out->n addresses among them; out->cus counts
 * the units. A bad header ends the scan (err set, the units before it kept). 0 or -ENOMEM.
 */
int cu_units_scan(struct cu_units *u, struct cu_ctx *c, struct dwarf_lookup *out, char *err,
		  size_t errsize);
/*
 * Resolve every address: the units of u->v on up to jobs threads (c is the first's context;
 * the others open path again), then the rangeless units for what is left.
 */
int cu_units_resolve(struct cu_units *u, const char *path, struct cu_ctx *c, int jobs,
		     struct dwarf_lookup *out);
void cu_units_release(struct cu_units *u);

#endif
