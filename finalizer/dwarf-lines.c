/* SPDX-License-Identifier: MIT */
/* A unit's line table (read directly, else through libdwarf) and the full names of its files. */
#define LOG_DOMAIN "dwarf"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/path.h"
#include "finalizer/dwarf-info-private.h"

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
		    DW_DLV_OK ||
	    !*name) {
		dbg_drop_error(c->dbg, &e);
		return false;
	}
	if (dwarf_srclines_include_dir_count(c->lc, &ndirs, &e) != DW_DLV_OK)
		ndirs = 0;
	dbg_drop_error(c->dbg, &e);
	/* DWARF 5 numbers directories from 0 (the compilation directory); before, 0 is the
	   compilation directory and the table starts at 1. */
	if ((c->line_version >= 5 && (Dwarf_Signed)dirno < ndirs) ||
	    (c->line_version < 5 && dirno > 0 && (Dwarf_Signed)dirno <= ndirs)) {
		if (dwarf_srclines_include_dir_data(c->lc, (Dwarf_Signed)dirno, dir, &e) !=
		    DW_DLV_OK)
			*dir = NULL;
		dbg_drop_error(c->dbg, &e);
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
const char *cu_file_name(struct cu_ctx *c, Dwarf_Unsigned idx)
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
 * The line table's answer for the addresses idx[0..n) (sorted by address): each row range
 * [row, next row) of a sequence gives its file and line to the wanted addresses inside it;
 * where ranges overlap, the one starting last wins. Nothing is kept per row.
 */
struct rows {
	const uint64_t *addrs;
	const uint32_t *idx;
	size_t n;
	uint64_t *best_lo; /* per wanted address: start of its range, UINT64_MAX none */
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
		dbg_drop_error(c->dbg, &e);
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
			dbg_drop_error(c->dbg, &e);
			continue;
		}
		row_take(w, addr, file, lineno, end);
	}
}

long cu_lines_assign(struct cu_ctx *c, const uint32_t *idx, size_t n, struct dwarf_lookup *out)
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
			out->leaf_file[idx[k]] = cu_file_name(c, w.fileno[k]);
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

/* The unit's DW_AT_stmt_list offset, or -1. */
static int64_t stmt_list(struct cu_ctx *c, Dwarf_Die cu_die)
{
	Dwarf_Attribute a = NULL;
	Dwarf_Error e = NULL;
	Dwarf_Unsigned off = 0;
	int64_t r = -1;

	if (dwarf_attr(cu_die, DW_AT_stmt_list, &a, &e) == DW_DLV_OK) {
		if (!dbg_attr_offset(c->dbg, a, &off))
			r = (int64_t)off;
		dwarf_dealloc_attribute(a);
	}
	dbg_drop_error(c->dbg, &e);
	return r;
}

void cu_lines_open(struct cu_ctx *c, Dwarf_Die cu_die)
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
	dbg_drop_error(c->dbg, &e);
	if (dwarf_get_die_address_size(cu_die, &asize, &e) != DW_DLV_OK)
		asize = 8;
	dbg_drop_error(c->dbg, &e);
	if (off >= 0 && c->sections &&
	    !line_table_parse(&c->lt, c->sections, (uint64_t)off, asize)) {
		c->have_lt = true;
		c->file_base = c->lt.file_base;
		c->file_end = (Dwarf_Signed)(c->lt.file_base + c->lt.nfiles);
		return;
	}
	if (off >= 0 && c->sections)
		log_debug("unit at 0x%llx: its line table is read through libdwarf (the direct "
			  "reader refused it)",
			  (unsigned long long)c->cu_start);
	if (off < 0 ||
	    dwarf_srclines_b(cu_die, &c->line_version, &tables, &c->lc, &e) != DW_DLV_OK) {
		dbg_drop_error(c->dbg, &e);
		c->lc = NULL;
		return;
	}
	{
		const char *cd = NULL;
		Dwarf_Signed count = 0;

		if (dwarf_srclines_comp_dir(c->lc, &cd, &e) == DW_DLV_OK && cd)
			c->comp_dir = cd;
		dbg_drop_error(c->dbg, &e);
		if (dwarf_srclines_files_indexes(c->lc, &c->file_base, &count, &c->file_end, &e) !=
		    DW_DLV_OK)
			c->file_base = c->file_end = 0;
		dbg_drop_error(c->dbg, &e);
	}
}

void cu_lines_close(struct cu_ctx *c)
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
