/* SPDX-License-Identifier: MIT */
/* Line tables and inline chains from DWARF 2-5 with libdwarf (20210528 API). */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dwarf.h>
#include <libdwarf.h>

#include "common/path.h"
#include "finalizer/demangle.h"
#include "finalizer/dwarf-info.h"
#include "finalizer/elf-file.h"
#include "finalizer/hash-index.h"
#include "finalizer/line-table.h"

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

struct cu_ctx {
	Dwarf_Debug dbg;
	Dwarf_Half version;
	Dwarf_Off cu_start, cu_end; /* global offsets of this unit: decl_file is only
				       meaningful for DIEs inside it */
	uint64_t base;		    /* the unit's base address (DWARF 2-4 ranges) */
	/* The unit's line table: read here (lt), else through libdwarf (lc). */
	const struct line_sections *sections;
	struct line_table lt;
	bool have_lt;
	const char *comp_dir; /* DW_AT_comp_dir */
	Dwarf_Line_Context lc;
	Dwarf_Unsigned line_version;
	Dwarf_Signed file_base, file_end; /* valid file numbers: [file_base, file_end) */
	const char **files;		  /* full paths by number - file_base, when asked */
	bool inline_chains;
	struct str_pool *pool;
	const uint64_t *addrs; /* all addresses */
	struct scope *scopes;
	size_t nscopes, cap;
	int32_t *best; /* per address (global index): deepest scope, -1 none */
	struct dwarf_frame **frames; /* where chains go: this worker's array */
	size_t *nframes, *fcap;
	int err;
};

static void drop_error(Dwarf_Debug dbg, Dwarf_Error *e)
{
	if (*e) {
		dwarf_dealloc_error(dbg, *e);
		*e = NULL;
	}
}

static int range_add(struct range_set *s, uint64_t lo, uint64_t hi)
{
	if (hi <= lo)
		return 0;
	if (array_reserve(&s->r, &s->cap, s->n + 1, sizeof(*s->r)))
		return -ENOMEM;
	s->r[s->n].lo = lo;
	s->r[s->n].hi = hi;
	s->n++;
	return 0;
}

/* The offset or index an attribute holds (DW_FORM_sec_offset, rnglistx, data). */
static int attr_offset(Dwarf_Debug dbg, Dwarf_Attribute a, Dwarf_Unsigned *out)
{
	Dwarf_Error e = NULL;
	Dwarf_Off off;

	if (dwarf_global_formref(a, &off, &e) == DW_DLV_OK) {
		*out = off;
		return 0;
	}
	drop_error(dbg, &e);
	if (dwarf_formudata(a, out, &e) == DW_DLV_OK)
		return 0;
	drop_error(dbg, &e);
	return -1;
}

static void rnglists_read(struct cu_ctx *c, Dwarf_Attribute a, Dwarf_Half form,
			  Dwarf_Unsigned value, struct range_set *s)
{
	Dwarf_Rnglists_Head head = NULL;
	Dwarf_Unsigned count = 0, goff = 0, i;
	Dwarf_Error e = NULL;

	if (dwarf_rnglists_get_rle_head(a, form, value, &head, &count, &goff, &e) != DW_DLV_OK) {
		drop_error(c->dbg, &e);
		return;
	}
	for (i = 0; i < count; i++) {
		unsigned len = 0, code = 0;
		Dwarf_Unsigned raw1, raw2, lo, hi;
		Dwarf_Bool unavailable = 0;

		if (dwarf_get_rnglists_entry_fields_a(head, i, &len, &code, &raw1, &raw2,
						      &unavailable, &lo, &hi, &e) != DW_DLV_OK) {
			drop_error(c->dbg, &e);
			break;
		}
		switch (code) {
		case DW_RLE_startx_endx:
		case DW_RLE_startx_length:
		case DW_RLE_offset_pair:
		case DW_RLE_start_end:
		case DW_RLE_start_length:
			if (!unavailable && range_add(s, lo, hi))
				c->err = -ENOMEM;
			break;
		default:
			break;
		}
	}
	dwarf_dealloc_rnglists_head(head);
}

static void ranges_read(struct cu_ctx *c, Dwarf_Die die, Dwarf_Unsigned off, struct range_set *s)
{
	Dwarf_Ranges *r = NULL;
	Dwarf_Signed n = 0, i;
	Dwarf_Unsigned bytes = 0;
	Dwarf_Off real = 0;
	Dwarf_Error e = NULL;
	uint64_t base = c->base;

	if (dwarf_get_ranges_b(c->dbg, off, die, &real, &r, &n, &bytes, &e) != DW_DLV_OK) {
		drop_error(c->dbg, &e);
		return;
	}
	for (i = 0; i < n; i++) {
		if (r[i].dwr_type == DW_RANGES_END)
			break;
		if (r[i].dwr_type == DW_RANGES_ADDRESS_SELECTION)
			base = r[i].dwr_addr2;
		else if (range_add(s, base + r[i].dwr_addr1, base + r[i].dwr_addr2))
			c->err = -ENOMEM;
	}
	dwarf_ranges_dealloc(c->dbg, r, n);
}

/*
 * The code ranges of die into s (emptied first). Returns true when the DIE has code
 * addresses (DW_AT_low_pc/high_pc or DW_AT_ranges).
 */
static bool die_ranges(struct cu_ctx *c, Dwarf_Die die, struct range_set *s)
{
	Dwarf_Addr lo, hi;
	Dwarf_Half form = 0;
	enum Dwarf_Form_Class cls;
	Dwarf_Attribute a = NULL;
	Dwarf_Error e = NULL;
	Dwarf_Unsigned value;
	bool has = false;

	s->n = 0;
	if (dwarf_lowpc(die, &lo, &e) == DW_DLV_OK) {
		if (dwarf_highpc_b(die, &hi, &form, &cls, &e) == DW_DLV_OK) {
			if (cls == DW_FORM_CLASS_CONSTANT)
				hi += lo;
			if (range_add(s, lo, hi))
				c->err = -ENOMEM;
			return true;
		}
		drop_error(c->dbg, &e);
		/* low_pc alone: a single address (labels, empty functions). */
	} else {
		drop_error(c->dbg, &e);
	}
	if (dwarf_attr(die, DW_AT_ranges, &a, &e) != DW_DLV_OK) {
		drop_error(c->dbg, &e);
		return false;
	}
	if (dwarf_whatform(a, &form, &e) == DW_DLV_OK && !attr_offset(c->dbg, a, &value)) {
		has = true;
		if (c->version >= 5 || form == DW_FORM_rnglistx)
			rnglists_read(c, a, form, value, s);
		else
			ranges_read(c, die, value, s);
	}
	drop_error(c->dbg, &e);
	dwarf_dealloc_attribute(a);
	return has;
}

static bool ranges_contain(const struct range_set *s, uint64_t addr)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (addr >= s->r[i].lo && addr < s->r[i].hi)
			return true;
	return false;
}

/* Keep in out (capacity n) the indices of in whose address lies in s. Returns how many. */
static size_t subset(const struct cu_ctx *c, const struct range_set *s, const uint32_t *in,
		     size_t n, uint32_t *out)
{
	size_t i, k = 0;

	for (i = 0; i < n; i++)
		if (ranges_contain(s, c->addrs[in[i]]))
			out[k++] = in[i];
	return k;
}

static const char *attr_string(struct cu_ctx *c, Dwarf_Die die, Dwarf_Half at)
{
	Dwarf_Attribute a = NULL;
	Dwarf_Error e = NULL;
	char *s = NULL;
	const char *r = NULL;

	if (dwarf_attr(die, at, &a, &e) != DW_DLV_OK) {
		drop_error(c->dbg, &e);
		return NULL;
	}
	if (dwarf_formstring(a, &s, &e) == DW_DLV_OK && s)
		r = str_pool_get(c->pool, s);
	drop_error(c->dbg, &e);
	dwarf_dealloc_attribute(a);
	return r;
}

static bool attr_udata(struct cu_ctx *c, Dwarf_Die die, Dwarf_Half at, Dwarf_Unsigned *v)
{
	Dwarf_Attribute a = NULL;
	Dwarf_Error e = NULL;
	bool ok = false;

	if (dwarf_attr(die, at, &a, &e) != DW_DLV_OK) {
		drop_error(c->dbg, &e);
		return false;
	}
	if (dwarf_formudata(a, v, &e) == DW_DLV_OK) {
		ok = true;
	} else {
		Dwarf_Signed sv;

		/* DW_FORM_implicit_const (gcc 12's decl_file, call_file) reads as signed. */
		drop_error(c->dbg, &e);
		if (dwarf_formsdata(a, &sv, &e) == DW_DLV_OK && sv >= 0) {
			*v = (Dwarf_Unsigned)sv;
			ok = true;
		}
	}
	drop_error(c->dbg, &e);
	dwarf_dealloc_attribute(a);
	return ok;
}

/* The DIE an attribute refers to (abstract origin, specification), or NULL. */
static Dwarf_Die attr_die(struct cu_ctx *c, Dwarf_Die die, Dwarf_Half at)
{
	Dwarf_Attribute a = NULL;
	Dwarf_Error e = NULL;
	Dwarf_Off off;
	Dwarf_Die target = NULL;

	if (dwarf_attr(die, at, &a, &e) != DW_DLV_OK) {
		drop_error(c->dbg, &e);
		return NULL;
	}
	if (dwarf_global_formref(a, &off, &e) != DW_DLV_OK ||
	    dwarf_offdie_b(c->dbg, off, 1, &target, &e) != DW_DLV_OK)
		target = NULL;
	drop_error(c->dbg, &e);
	dwarf_dealloc_attribute(a);
	return target;
}

/* The raw entry of file number i: its name and directory, from whichever table was read. */
static bool file_entry(struct cu_ctx *c, Dwarf_Signed i, const char **name, const char **dir)
{
	Dwarf_Unsigned dirno = 0, mtime, len;
	Dwarf_Form_Data16 *md5;
	Dwarf_Signed ndirs = 0;
	Dwarf_Error e = NULL;

	*name = *dir = NULL;
	if (c->have_lt) {
		const struct line_file *f = line_table_file(&c->lt, (uint64_t)i);

		if (!f || !f->name)
			return false;
		*name = f->name;
		/* Directory 0: DWARF 5 lists the compilation directory; before, it is implicit
		   (NULL here: the compilation directory is prepended below anyway). */
		if (f->dir < c->lt.ndirs)
			*dir = c->lt.dirs[f->dir];
		return true;
	}
	if (dwarf_srclines_files_data_b(c->lc, i, name, &dirno, &mtime, &len, &md5, &e) !=
		    DW_DLV_OK || !*name) {
		drop_error(c->dbg, &e);
		return false;
	}
	if (dwarf_srclines_include_dir_count(c->lc, &ndirs, &e) != DW_DLV_OK)
		ndirs = 0;
	drop_error(c->dbg, &e);
	/* DWARF 5 numbers directories from 0 (the compilation directory); before, 0 is the
	   compilation directory and the table starts at 1. */
	if ((c->line_version >= 5 && (Dwarf_Signed)dirno < ndirs) ||
	    (c->line_version < 5 && dirno > 0 && (Dwarf_Signed)dirno <= ndirs)) {
		if (dwarf_srclines_include_dir_data(c->lc, (Dwarf_Signed)dirno, dir, &e) !=
		    DW_DLV_OK)
			*dir = NULL;
		drop_error(c->dbg, &e);
	}
	return true;
}

/*
 * The full path of file number idx of the unit's line table (numbers as in the line program
 * and DW_AT_decl_file: from 0 in DWARF 5, from 1 before), composed as dwarf_srcfiles()
 * does: an absolute name as is, else the directory, and the compilation directory before a
 * relative one. (Not dwarf_srcfiles() itself: libdwarf 20210528 builds those paths in
 * static buffers, which two threads reading two modules would share.)
 */
static const char *file_name(struct cu_ctx *c, Dwarf_Unsigned idx)
{
	const char *name, *dir, *comp = c->comp_dir, *r;
	Dwarf_Signed i = (Dwarf_Signed)idx;
	char *full = NULL, *rel;

	if (i < c->file_base || i >= c->file_end)
		return NULL;
	if (!c->files) {
		c->files = calloc((size_t)(c->file_end - c->file_base), sizeof(*c->files));
		if (!c->files) {
			c->err = -ENOMEM;
			return NULL;
		}
	}
	if (c->files[i - c->file_base])
		return c->files[i - c->file_base];
	if (!file_entry(c, i, &name, &dir))
		return NULL;
	if (name[0] == '/') {
		full = strdup(name);
	} else {
		if (dir && dir[0] == '/') {
			full = path_join(dir, name);
		} else {
			rel = dir && *dir ? path_join(dir, name) : strdup(name);
			full = rel && comp && *comp ? path_join(comp, rel) : rel;
			if (full != rel)
				free(rel);
		}
	}
	if (!full) {
		c->err = -ENOMEM;
		return NULL;
	}
	path_clean(full);
	r = str_pool_get(c->pool, full);
	free(full);
	if (!r)
		c->err = -ENOMEM;
	return c->files[i - c->file_base] = r;
}

/*
 * Names and definition of the function a subprogram/inlined DIE stands for, following
 * DW_AT_abstract_origin and DW_AT_specification (a few hops at most).
 */
static void scope_names(struct cu_ctx *c, Dwarf_Die die, struct scope *s)
{
	Dwarf_Die cur = die, next;
	int hop;

	for (hop = 0; hop < 6 && cur; hop++) {
		Dwarf_Off off = 0;
		Dwarf_Error e = NULL;
		Dwarf_Unsigned v;

		if (!s->mangled) {
			s->mangled = attr_string(c, cur, DW_AT_linkage_name);
			if (!s->mangled)
				s->mangled = attr_string(c, cur, DW_AT_MIPS_linkage_name);
		}
		if (!s->name)
			s->name = attr_string(c, cur, DW_AT_name);
		if (!s->decl_line && dwarf_dieoffset(cur, &off, &e) == DW_DLV_OK &&
		    off >= c->cu_start && off < c->cu_end &&
		    attr_udata(c, cur, DW_AT_decl_line, &v)) {
			s->decl_line = (uint32_t)v;
			if (attr_udata(c, cur, DW_AT_decl_file, &v))
				s->decl_file = file_name(c, v);
		}
		drop_error(c->dbg, &e);
		if (s->name && s->mangled)
			break;
		next = attr_die(c, cur, DW_AT_abstract_origin);
		if (!next)
			next = attr_die(c, cur, DW_AT_specification);
		if (cur != die)
			dwarf_dealloc_die(cur);
		cur = next;
	}
	if (cur && cur != die)
		dwarf_dealloc_die(cur);
	if (s->mangled) {
		char *d = demangle(s->mangled);

		if (d) {
			s->name = str_pool_get(c->pool, d);
			free(d);
		} else if (!s->name) {
			s->name = s->mangled;
		}
	}
}

static int32_t scope_add(struct cu_ctx *c, Dwarf_Die die, int32_t parent, bool inlined)
{
	struct scope *s;
	Dwarf_Unsigned v;

	if (array_reserve(&c->scopes, &c->cap, c->nscopes + 1, sizeof(*c->scopes))) {
		c->err = -ENOMEM;
		return -1;
	}
	s = &c->scopes[c->nscopes];
	memset(s, 0, sizeof(*s));
	s->parent = inlined ? parent : -1;
	s->depth = inlined && parent >= 0 ? c->scopes[parent].depth + 1 : 0;
	if (inlined) {
		if (attr_udata(c, die, DW_AT_call_line, &v))
			s->call_line = (uint32_t)v;
		if (attr_udata(c, die, DW_AT_call_file, &v))
			s->call_file = file_name(c, v);
	}
	scope_names(c, die, s);
	return (int32_t)c->nscopes++;
}

static void visit_children(struct cu_ctx *c, Dwarf_Die parent, int32_t scope,
			   const uint32_t *idx, size_t n);

static void visit_die(struct cu_ctx *c, Dwarf_Die die, int32_t scope, const uint32_t *idx,
		      size_t n, struct range_set *rs)
{
	Dwarf_Half tag = 0;
	Dwarf_Error e = NULL;
	uint32_t *sub;
	size_t k, i;
	int32_t s;

	if (dwarf_tag(die, &tag, &e) != DW_DLV_OK) {
		drop_error(c->dbg, &e);
		return;
	}
	switch (tag) {
	case DW_TAG_subprogram:
	case DW_TAG_inlined_subroutine:
		if (tag == DW_TAG_inlined_subroutine && (!c->inline_chains || scope < 0))
			return;
		if (!die_ranges(c, die, rs) || !rs->n)
			return;
		sub = malloc(n * sizeof(*sub));
		if (!sub) {
			c->err = -ENOMEM;
			return;
		}
		k = subset(c, rs, idx, n, sub);
		if (k) {
			s = scope_add(c, die, scope, tag == DW_TAG_inlined_subroutine);
			if (s >= 0) {
				for (i = 0; i < k; i++) {
					int32_t b = c->best[sub[i]];

					if (b < 0 || c->scopes[b].depth <= c->scopes[s].depth)
						c->best[sub[i]] = s;
				}
				visit_children(c, die, s, sub, k);
			}
		}
		free(sub);
		return;
	case DW_TAG_lexical_block:
	case DW_TAG_try_block:
	case DW_TAG_catch_block:
		if (scope < 0)
			return;
		if (die_ranges(c, die, rs) && rs->n) {
			sub = malloc(n * sizeof(*sub));
			if (!sub) {
				c->err = -ENOMEM;
				return;
			}
			k = subset(c, rs, idx, n, sub);
			if (k)
				visit_children(c, die, scope, sub, k);
			free(sub);
		} else {
			visit_children(c, die, scope, idx, n);
		}
		return;
	case DW_TAG_namespace:
	case DW_TAG_class_type:
	case DW_TAG_structure_type:
	case DW_TAG_union_type:
	case DW_TAG_module:
		/* C++ and Fortran put function definitions inside these. */
		if (scope < 0)
			visit_children(c, die, scope, idx, n);
		return;
	default:
		return;
	}
}

static void visit_children(struct cu_ctx *c, Dwarf_Die parent, int32_t scope,
			   const uint32_t *idx, size_t n)
{
	Dwarf_Die child = NULL, sib = NULL;
	Dwarf_Error e = NULL;
	struct range_set rs = { 0 };

	if (dwarf_child(parent, &child, &e) != DW_DLV_OK) {
		drop_error(c->dbg, &e);
		return;
	}
	while (child && !c->err) {
		visit_die(c, child, scope, idx, n, &rs);
		if (dwarf_siblingof_b(c->dbg, child, 1, &sib, &e) != DW_DLV_OK) {
			drop_error(c->dbg, &e);
			sib = NULL;
		}
		dwarf_dealloc_die(child);
		child = sib;
	}
	if (child)
		dwarf_dealloc_die(child);
	free(rs.r);
}

/*
 * The line table's answer for the addresses idx[0..n) (sorted by address): each row range
 * [row, next row) of a sequence gives its file and line to the wanted addresses inside it;
 * where ranges overlap, the one starting last wins. Nothing is kept per row.
 */
struct rows {
	const uint64_t *addrs;
	const uint32_t *idx;
	size_t n;
	uint64_t *best_lo;	/* per wanted address: start of its range, UINT64_MAX none */
	uint64_t *fileno, *line;
	uint64_t prev_lo, prev_file, prev_line;
	bool have_prev;
};

static void row_take(void *ctx, uint64_t addr, uint64_t file, uint64_t line, bool end)
{
	struct rows *w = ctx;
	size_t k;

	/* A row ends the previous row's range [prev_lo, addr). */
	if (w->have_prev && addr > w->prev_lo) {
		size_t lo = 0, hi = w->n;

		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (w->addrs[w->idx[mid]] < w->prev_lo)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (k = lo; k < w->n && w->addrs[w->idx[k]] < addr; k++) {
			if (w->best_lo[k] != UINT64_MAX && w->best_lo[k] > w->prev_lo)
				continue;
			w->best_lo[k] = w->prev_lo;
			w->fileno[k] = w->prev_file;
			w->line[k] = w->prev_line;
		}
	}
	w->have_prev = !end;
	w->prev_lo = addr;
	w->prev_file = file;
	w->prev_line = line;
}

/* Rows through libdwarf, for tables line_table_parse() refused. */
static void rows_libdwarf(struct cu_ctx *c, struct rows *w)
{
	Dwarf_Line *lines = NULL;
	Dwarf_Signed count = 0, i;
	Dwarf_Error e = NULL;

	if (dwarf_srclines_from_linecontext(c->lc, &lines, &count, &e) != DW_DLV_OK) {
		drop_error(c->dbg, &e);
		return;
	}
	for (i = 0; i < count; i++) {
		Dwarf_Addr addr = 0;
		Dwarf_Unsigned lineno = 0, file = 0;
		Dwarf_Bool end = 0;

		if (dwarf_lineaddr(lines[i], &addr, &e) != DW_DLV_OK ||
		    dwarf_lineno(lines[i], &lineno, &e) != DW_DLV_OK ||
		    dwarf_line_srcfileno(lines[i], &file, &e) != DW_DLV_OK ||
		    dwarf_lineendsequence(lines[i], &end, &e) != DW_DLV_OK) {
			drop_error(c->dbg, &e);
			continue;
		}
		row_take(w, addr, file, lineno, end);
	}
}

/* Returns how many addresses got a line, or -ENOMEM. */
static long lines_assign(struct cu_ctx *c, const uint32_t *idx, size_t n,
			 struct dwarf_lookup *out)
{
	struct rows w = { .addrs = c->addrs, .idx = idx, .n = n };
	long found = 0;
	size_t k;

	if ((!c->have_lt && !c->lc) || !n)
		return 0;
	w.best_lo = malloc(n * sizeof(*w.best_lo));
	w.fileno = malloc(n * sizeof(*w.fileno));
	w.line = malloc(n * sizeof(*w.line));
	if (!w.best_lo || !w.fileno || !w.line) {
		found = -ENOMEM;
		goto out;
	}
	for (k = 0; k < n; k++)
		w.best_lo[k] = UINT64_MAX;
	if (c->have_lt)
		line_table_run(&c->lt, row_take, &w); /* a bad end keeps the rows before it */
	else
		rows_libdwarf(c, &w);
	for (k = 0; k < n; k++)
		if (w.best_lo[k] != UINT64_MAX) {
			out->leaf_file[idx[k]] = file_name(c, w.fileno[k]);
			out->leaf_line[idx[k]] = (uint32_t)w.line[k];
			found++;
		}
	found = c->err ? c->err : found;
out:
	free(w.best_lo);
	free(w.fileno);
	free(w.line);
	return found;
}

/* Emit the chain of address i from its deepest scope. */
static int chain_emit(struct cu_ctx *c, struct dwarf_lookup *out, uint32_t i)
{
	int32_t s = c->best[i], path[256];
	uint32_t depth = 0, k;

	for (; s >= 0 && depth < 256; s = c->scopes[s].parent)
		path[depth++] = s;
	if (array_reserve(c->frames, c->fcap, *c->nframes + depth, sizeof(**c->frames)))
		return -ENOMEM;
	out->first[i] = (uint32_t)*c->nframes;
	out->count[i] = depth;
	for (k = 0; k < depth; k++) {
		const struct scope *sc = &c->scopes[path[depth - 1 - k]];
		struct dwarf_frame *f = &(*c->frames)[(*c->nframes)++];

		f->name = sc->name;
		f->mangled = sc->mangled;
		f->decl_file = sc->decl_file;
		f->decl_line = sc->decl_line;
		if (k + 1 < depth) {
			/* The position in this frame is the call of the next, inlined one. */
			const struct scope *inner = &c->scopes[path[depth - 2 - k]];

			f->file = inner->call_file;
			f->line = inner->call_line;
		} else {
			f->file = out->leaf_file[i];
			f->line = out->leaf_line[i];
		}
	}
	return 0;
}

/* The unit's DW_AT_stmt_list offset, or -1. */
static int64_t stmt_list(struct cu_ctx *c, Dwarf_Die cu_die)
{
	Dwarf_Attribute a = NULL;
	Dwarf_Error e = NULL;
	Dwarf_Unsigned off = 0;
	int64_t r = -1;

	if (dwarf_attr(cu_die, DW_AT_stmt_list, &a, &e) == DW_DLV_OK) {
		if (!attr_offset(c->dbg, a, &off))
			r = (int64_t)off;
		dwarf_dealloc_attribute(a);
	}
	drop_error(c->dbg, &e);
	return r;
}

/* Open the unit's line table: read directly when possible, else through libdwarf. */
static void lines_open(struct cu_ctx *c, Dwarf_Die cu_die)
{
	Dwarf_Attribute a = NULL;
	Dwarf_Error e = NULL;
	Dwarf_Small tables = 0;
	Dwarf_Half asize = 8;
	char *comp = NULL;
	int64_t off = stmt_list(c, cu_die);

	c->lc = NULL;
	c->files = NULL;
	c->have_lt = false;
	c->comp_dir = NULL;
	c->file_base = c->file_end = 0;
	if (dwarf_attr(cu_die, DW_AT_comp_dir, &a, &e) == DW_DLV_OK) {
		if (dwarf_formstring(a, &comp, &e) == DW_DLV_OK)
			c->comp_dir = comp;
		dwarf_dealloc_attribute(a);
	}
	drop_error(c->dbg, &e);
	if (dwarf_get_die_address_size(cu_die, &asize, &e) != DW_DLV_OK)
		asize = 8;
	drop_error(c->dbg, &e);
	if (off >= 0 && c->sections &&
	    !line_table_parse(&c->lt, c->sections, (uint64_t)off, asize)) {
		c->have_lt = true;
		c->file_base = c->lt.file_base;
		c->file_end = (Dwarf_Signed)(c->lt.file_base + c->lt.nfiles);
		return;
	}
	if (off < 0 ||
	    dwarf_srclines_b(cu_die, &c->line_version, &tables, &c->lc, &e) != DW_DLV_OK) {
		drop_error(c->dbg, &e);
		c->lc = NULL;
		return;
	}
	{
		const char *cd = NULL;
		Dwarf_Signed count = 0;

		if (dwarf_srclines_comp_dir(c->lc, &cd, &e) == DW_DLV_OK && cd)
			c->comp_dir = cd;
		drop_error(c->dbg, &e);
		if (dwarf_srclines_files_indexes(c->lc, &c->file_base, &count, &c->file_end,
						 &e) != DW_DLV_OK)
			c->file_base = c->file_end = 0;
		drop_error(c->dbg, &e);
	}
}

static void lines_close(struct cu_ctx *c)
{
	free(c->files);
	c->files = NULL;
	if (c->have_lt)
		line_table_release(&c->lt);
	c->have_lt = false;
	if (c->lc)
		dwarf_srclines_dealloc_b(c->lc);
	c->lc = NULL;
}

/*
 * Lines and inline chains of the addresses idx[0..n) in one unit. gated: the unit gave no
 * address ranges, so only the addresses its line table holds are looked for in its DIEs.
 */
static int cu_resolve(struct cu_ctx *c, Dwarf_Die cu_die, uint32_t *idx, size_t n,
		      bool gated, struct dwarf_lookup *out)
{
	long got;
	size_t i, k;
	int err = 0;

	lines_open(c, cu_die);
	got = lines_assign(c, idx, n, out);
	if (got < 0)
		err = (int)got;
	if (gated && !err) {
		for (i = 0, k = 0; i < n; i++)
			if (out->leaf_file[idx[i]] || out->leaf_line[idx[i]])
				idx[k++] = idx[i];
		n = k;
	}
	c->nscopes = 0;
	if (!err && n)
		visit_children(c, cu_die, -1, idx, n);
	err = err ? err : c->err;
	for (i = 0; i < n && !err; i++)
		if (c->best[idx[i]] >= 0 && !out->count[idx[i]])
			err = chain_emit(c, out, idx[i]);
	for (i = 0; i < n; i++)
		c->best[idx[i]] = -1;
	lines_close(c);
	return err;
}

static int lookup_alloc(struct dwarf_lookup *out, size_t n)
{
	memset(out, 0, sizeof(*out));
	out->first = calloc(n ? n : 1, sizeof(*out->first));
	out->count = calloc(n ? n : 1, sizeof(*out->count));
	out->leaf_file = calloc(n ? n : 1, sizeof(*out->leaf_file));
	out->leaf_line = calloc(n ? n : 1, sizeof(*out->leaf_line));
	if (!out->first || !out->count || !out->leaf_file || !out->leaf_line) {
		dwarf_lookup_release(out);
		return -ENOMEM;
	}
	return 0;
}

void dwarf_lookup_release(struct dwarf_lookup *l)
{
	size_t i;

	free(l->first);
	free(l->count);
	free(l->leaf_file);
	free(l->leaf_line);
	free(l->frames);
	for (i = 0; i < l->npools; i++)
		str_pool_release(&l->pools[i]);
	free(l->pools);
	memset(l, 0, sizeof(*l));
}

static int u32_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * The addresses inside rs that no earlier unit took, ascending, into idx; they become this
 * unit's (an address belongs to the first unit covering it). Returns how many.
 */
static size_t cu_addresses(const uint64_t *addrs, size_t n, const struct range_set *rs,
			   bool *owned, uint32_t *idx)
{
	size_t k = 0, i, r;

	for (r = 0; r < rs->n; r++) {
		/* addrs is sorted: binary search the first address of each range. */
		size_t lo = 0, hi = n;

		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (addrs[mid] < rs->r[r].lo)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (i = lo; i < n && addrs[i] < rs->r[r].hi; i++)
			if (!owned[i]) {
				owned[i] = true;
				idx[k++] = (uint32_t)i;
			}
	}
	if (rs->n > 1 && k > 1)
		qsort(idx, k, sizeof(*idx), u32_cmp); /* ranges need not be sorted */
	return k;
}

/* A compilation unit to read: where its first DIE is and its addresses. */
struct unit {
	Dwarf_Off die;
	Dwarf_Off start, end;
	Dwarf_Half version;
	uint64_t base;
	size_t idx_off, k; /* its addresses: unit_idx[idx_off .. + k) */
	unsigned worker;   /* which worker read it */
};

/* libdwarf 20210528 sets process-wide state while it opens and closes a file. */
static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t init_once = PTHREAD_ONCE_INIT;

static void init_libdwarf(void)
{
	/* Everything is freed explicitly here: the search tree libdwarf keeps of every
	   allocation, to free them in dwarf_finish(), is only a cost. */
	dwarf_set_de_alloc_flag(0);
}

static int debug_open(const char *path, Dwarf_Debug *dbg, char *err, size_t errsize)
{
	Dwarf_Error e = NULL;
	int res;

	pthread_once(&init_once, init_libdwarf);
	pthread_mutex_lock(&init_lock);
	res = dwarf_init_path(path, NULL, 0, DW_DLC_READ, DW_GROUPNUMBER_ANY, NULL, NULL, dbg,
			      NULL, 0, NULL, &e);
	pthread_mutex_unlock(&init_lock);
	if (res == DW_DLV_OK)
		return 0;
	*dbg = NULL;
	if (res == DW_DLV_NO_ENTRY)
		return -ENODATA;
	snprintf(err, errsize, "%s", e ? dwarf_errmsg(e) : "unknown libdwarf error");
	if (e)
		dwarf_dealloc_error(NULL, e);
	return -EINVAL;
}

static void debug_close(Dwarf_Debug dbg)
{
	Dwarf_Error e = NULL;

	if (!dbg)
		return;
	pthread_mutex_lock(&init_lock);
	dwarf_finish(dbg, &e);
	pthread_mutex_unlock(&init_lock);
}

/* Read one unit: point c at it and resolve its addresses. */
static int unit_resolve(struct cu_ctx *c, const struct unit *u, uint32_t *idx, bool gated,
			struct dwarf_lookup *out)
{
	Dwarf_Die die = NULL;
	Dwarf_Error e = NULL;
	int ret;

	if (dwarf_offdie_b(c->dbg, u->die, 1, &die, &e) != DW_DLV_OK) {
		drop_error(c->dbg, &e);
		return 0;
	}
	c->version = u->version;
	c->cu_start = u->start;
	c->cu_end = u->end;
	c->base = u->base;
	ret = cu_resolve(c, die, idx, u->k, gated, out);
	dwarf_dealloc_die(die);
	return ret ? ret : c->err;
}

/* The units are shared among workers, each with its own libdwarf handle and string pool. */
struct work {
	const char *path;
	struct unit *units;
	size_t nunits;
	uint32_t *unit_idx;
	struct dwarf_lookup *out;
	atomic_size_t next;
	atomic_int err;
};

struct worker {
	struct work *w;
	unsigned id;
	struct cu_ctx c;
	struct dwarf_frame *frames;
	size_t nframes, fcap;
	struct str_pool *pool;
};

static int ctx_init(struct cu_ctx *c, Dwarf_Debug dbg, const uint64_t *addrs, size_t n,
		    bool inline_chains, const struct line_sections *sections,
		    struct str_pool *pool)
{
	size_t i;

	memset(c, 0, sizeof(*c));
	c->dbg = dbg;
	c->sections = sections;
	c->pool = pool;
	c->addrs = addrs;
	c->inline_chains = inline_chains;
	c->best = malloc((n ? n : 1) * sizeof(*c->best));
	if (!c->best)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		c->best[i] = -1;
	return 0;
}

static void *worker_run(void *arg)
{
	struct worker *wk = arg;
	struct work *w = wk->w;
	size_t i;

	while (!atomic_load(&w->err) && (i = atomic_fetch_add(&w->next, 1)) < w->nunits) {
		struct unit *u = &w->units[i];
		int e;

		u->worker = wk->id;
		e = unit_resolve(&wk->c, u, w->unit_idx + u->idx_off, false, w->out);
		if (e) {
			int zero = 0;

			atomic_compare_exchange_strong(&w->err, &zero, e);
		}
	}
	return NULL;
}

static int unit_size_cmp(const void *a, const void *b)
{
	size_t x = ((const struct unit *)a)->k, y = ((const struct unit *)b)->k;

	return x > y ? -1 : x < y;
}

/*
 * Read the units on up to jobs threads (the caller's included, on dbg). Chains land in each
 * worker's array, then are appended to out->frames; the helpers' string pools go to out.
 */
static int units_resolve(struct work *w, struct cu_ctx *c0, int jobs)
{
	struct worker *wk;
	pthread_t *tids;
	size_t i, j, base;
	unsigned k, nw = 1;
	int ret;

	if (jobs > (int)w->nunits)
		jobs = (int)w->nunits;
	if (jobs < 1)
		jobs = 1;
	wk = calloc((size_t)jobs, sizeof(*wk));
	tids = calloc((size_t)jobs, sizeof(*tids));
	if (!wk || !tids) {
		free(wk);
		free(tids);
		return -ENOMEM;
	}
	/* Biggest first: the large units do not end up last on one thread. */
	if (w->nunits > 1)
		qsort(w->units, w->nunits, sizeof(*w->units), unit_size_cmp);
	wk[0].w = w;
	wk[0].c = *c0;
	wk[0].c.frames = &w->out->frames;
	wk[0].c.nframes = &w->out->nframes;
	wk[0].c.fcap = &w->out->cap;
	/* The pools must not move once the helpers use them. */
	if (jobs > 1 && array_reserve(&w->out->pools, &w->out->pools_cap,
				      w->out->npools + (size_t)jobs - 1, sizeof(*w->out->pools)))
		jobs = 1;
	for (k = 1; k < (unsigned)jobs; k++) {
		Dwarf_Debug d;
		char err[256];

		if (debug_open(w->path, &d, err, sizeof(err)))
			break;
		wk[k].w = w;
		wk[k].id = k;
		wk[k].pool = &w->out->pools[w->out->npools];
		str_pool_init(wk[k].pool);
		w->out->npools++;
		if (ctx_init(&wk[k].c, d, c0->addrs, w->out->n, c0->inline_chains, c0->sections,
			     wk[k].pool)) {
			debug_close(d);
			break;
		}
		wk[k].c.frames = &wk[k].frames;
		wk[k].c.nframes = &wk[k].nframes;
		wk[k].c.fcap = &wk[k].fcap;
		if (pthread_create(&tids[k], NULL, worker_run, &wk[k])) {
			free(wk[k].c.best);
			debug_close(d);
			break;
		}
		nw++;
	}
	worker_run(&wk[0]);
	*c0 = wk[0].c; /* its scopes array may have moved */
	for (k = 1; k < nw; k++) {
		pthread_join(tids[k], NULL);
		free(wk[k].c.best);
		free(wk[k].c.scopes);
		debug_close(wk[k].c.dbg);
	}
	ret = atomic_load(&w->err);
	/* Append each helper's chains; their first[] become offsets into out->frames. */
	for (k = 1; k < nw && !ret; k++) {
		base = w->out->nframes;
		if (wk[k].nframes &&
		    array_reserve(&w->out->frames, &w->out->cap, base + wk[k].nframes,
				  sizeof(*w->out->frames))) {
			ret = -ENOMEM;
			break;
		}
		if (wk[k].nframes)
			memcpy(w->out->frames + base, wk[k].frames,
			       wk[k].nframes * sizeof(*wk[k].frames));
		w->out->nframes += wk[k].nframes;
		for (i = 0; i < w->nunits; i++) {
			const struct unit *u = &w->units[i];

			if (u->worker != k)
				continue;
			for (j = 0; j < u->k; j++) {
				uint32_t a = w->unit_idx[u->idx_off + j];

				if (w->out->count[a])
					w->out->first[a] += (uint32_t)base;
			}
		}
	}
	for (k = 1; k < nw; k++)
		free(wk[k].frames);
	free(wk);
	free(tids);
	return ret;
}

/*
 * The units without ranges (gcc gives none to units without code, but some producers
 * may leave them out) only get the addresses no unit with ranges holds, and only those
 * their line table has.
 */
static int rangeless_resolve(struct cu_ctx *c, const struct unit *v, size_t nv, size_t n,
			     const bool *owned, uint32_t *idx, struct dwarf_lookup *out)
{
	size_t i, k = 0, j;
	uint32_t *tmp;
	int ret = 0;

	for (i = 0; i < n; i++)
		if (!owned[i])
			idx[k++] = (uint32_t)i;
	if (!k || !nv)
		return 0;
	tmp = malloc(k * sizeof(*tmp));
	if (!tmp)
		return -ENOMEM;
	for (j = 0; j < nv && k && !ret; j++) {
		struct unit u = v[j];
		size_t left = 0;

		u.k = k;
		memcpy(tmp, idx, k * sizeof(*tmp));
		ret = unit_resolve(c, &u, tmp, true, out);
		/* The addresses this unit's line table holds are answered; the others go on. */
		for (i = 0; i < k; i++)
			if (!out->leaf_file[idx[i]] && !out->leaf_line[idx[i]])
				idx[left++] = idx[i];
		if (left < k)
			out->cus_parsed++;
		k = left;
	}
	free(tmp);
	return ret;
}

/*
 * Each thread opens its own libdwarf handle, which loads the debug sections again: worth it
 * only for many addresses, and a few threads are enough (memory grows with each).
 */
#define ADDRS_PER_THREAD 2048
#define UNITS_PER_THREAD 2
#define MAX_THREADS 4

static int threads_for(int jobs, size_t naddrs, size_t nunits)
{
	size_t t = naddrs / ADDRS_PER_THREAD;

	if (t > nunits / UNITS_PER_THREAD)
		t = nunits / UNITS_PER_THREAD;
	if (t > MAX_THREADS)
		t = MAX_THREADS;
	if ((size_t)jobs < t)
		t = (size_t)jobs;
	return t > 1 ? (int)t : 1;
}

int dwarf_info_resolve(const char *path, const uint64_t *addrs, size_t n, bool inline_chains,
		       int jobs, struct str_pool *pool, struct dwarf_lookup *out, char *err,
		       size_t errsize)
{
	Dwarf_Debug dbg = NULL;
	Dwarf_Error e = NULL;
	struct cu_ctx c;
	struct range_set rs = { 0 };
	struct work w;
	struct unit *units = NULL, *rl = NULL;
	size_t nunits = 0, units_cap = 0, nrl = 0, rl_cap = 0, nidx = 0;
	Dwarf_Off cu_start = 0, cu_end = 0;
	struct elf_file ef;
	struct line_sections ls = { 0 };
	bool have_ef = false;
	uint32_t *idx = NULL;
	bool *owned = NULL;
	int res, ret;

	err[0] = '\0';
	ret = lookup_alloc(out, n);
	if (ret)
		return ret;
	out->n = n;
	ret = debug_open(path, &dbg, err, errsize);
	if (ret) {
		dwarf_lookup_release(out);
		return ret;
	}
	/* The line tables are read from the sections directly (line-table.h). */
	if (n && !elf_file_open(&ef, path)) {
		have_ef = true;
		if (elf_file_section(&ef, ".debug_line", &ls.line, &ls.line_size))
			ls.line = NULL;
		elf_file_section(&ef, ".debug_line_str", &ls.line_str, &ls.line_str_size);
		elf_file_section(&ef, ".debug_str", &ls.str, &ls.str_size);
	}
	ret = ctx_init(&c, dbg, addrs, n, inline_chains, ls.line ? &ls : NULL, pool);
	idx = malloc((n ? n : 1) * sizeof(*idx));
	owned = calloc(n ? n : 1, sizeof(*owned));
	if (ret || !idx || !owned) {
		ret = -ENOMEM;
		goto out;
	}
	/* First the unit headers: which unit holds which address. */
	for (;;) {
		Dwarf_Unsigned hlen = 0, typeoff = 0, next = 0;
		Dwarf_Half version = 0, asize = 0, lsize = 0, esize = 0, cutype = 0;
		Dwarf_Off abbrev = 0, die_off = 0;
		Dwarf_Sig8 sig;
		Dwarf_Die cu_die = NULL;
		Dwarf_Addr low = 0;
		struct unit u;

		res = dwarf_next_cu_header_d(dbg, 1, &hlen, &version, &abbrev, &asize, &lsize,
					     &esize, &sig, &typeoff, &next, &cutype, &e);
		if (res == DW_DLV_NO_ENTRY)
			break;
		if (res != DW_DLV_OK) {
			snprintf(err, errsize, "%s", dwarf_errmsg(e));
			drop_error(dbg, &e);
			break; /* keep what the earlier units gave */
		}
		out->cus++;
		/* The unit spans from the previous unit's end to the next header. */
		cu_start = cu_end;
		cu_end = next;
		if (!n)
			continue; /* nothing to look for: only count the units */
		if (dwarf_siblingof_b(dbg, NULL, 1, &cu_die, &e) != DW_DLV_OK ||
		    dwarf_dieoffset(cu_die, &die_off, &e) != DW_DLV_OK) {
			drop_error(dbg, &e);
			if (cu_die)
				dwarf_dealloc_die(cu_die);
			continue;
		}
		if (dwarf_lowpc(cu_die, &low, &e) != DW_DLV_OK)
			low = 0;
		drop_error(dbg, &e);
		u = (struct unit){ .die = die_off, .start = cu_start, .end = cu_end,
				   .version = version, .base = low };
		c.version = version;
		c.base = low;
		if (die_ranges(&c, cu_die, &rs)) {
			u.idx_off = nidx;
			u.k = cu_addresses(addrs, n, &rs, owned, idx + nidx);
			nidx += u.k;
			if (u.k && array_reserve(&units, &units_cap, nunits + 1, sizeof(*units)))
				ret = -ENOMEM;
			else if (u.k)
				units[nunits++] = u;
		} else if (array_reserve(&rl, &rl_cap, nrl + 1, sizeof(*rl))) {
			ret = -ENOMEM;
		} else {
			rl[nrl++] = u;
		}
		dwarf_dealloc_die(cu_die);
		if (ret || c.err) {
			ret = ret ? ret : c.err;
			goto out;
		}
	}
	/* Then the units that hold addresses, on several threads when there are many. */
	out->cus_parsed = nunits;
	memset(&w, 0, sizeof(w));
	w.path = path;
	w.units = units;
	w.nunits = nunits;
	w.unit_idx = idx;
	w.out = out;
	atomic_init(&w.next, 0);
	atomic_init(&w.err, 0);
	ret = units_resolve(&w, &c, threads_for(jobs, n, nunits));
	if (!ret) {
		uint32_t *rest = malloc((n ? n : 1) * sizeof(*rest));

		c.frames = &out->frames;
		c.nframes = &out->nframes;
		c.fcap = &out->cap;
		ret = rest ? rangeless_resolve(&c, rl, nrl, n, owned, rest, out) : -ENOMEM;
		free(rest);
	}
out:
	free(rs.r);
	free(units);
	free(rl);
	free(idx);
	free(owned);
	free(c.best);
	free(c.scopes);
	debug_close(dbg);
	if (have_ef)
		elf_file_close(&ef);
	if (ret)
		dwarf_lookup_release(out);
	return ret;
}
