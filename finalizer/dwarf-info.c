/* SPDX-License-Identifier: MIT */
/* Line tables and inline chains from DWARF 2-5 with libdwarf (20210528 API): the entry point. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
#include "common/log.h"
#include "finalizer/dwarf-info-private.h"
#include "finalizer/elf-file.h"

void dbg_drop_error(Dwarf_Debug dbg, Dwarf_Error *e)
{
	if (*e) {
		dwarf_dealloc_error(dbg, *e);
		*e = NULL;
	}
}

/* libdwarf 20210528 sets process-wide state while it opens and closes a file. */
static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t init_once = PTHREAD_ONCE_INIT;

static void init_libdwarf(void)
{
	/* Everything is freed explicitly here: the search tree libdwarf keeps of every
	   allocation, to free them in dwarf_finish(), is only a cost. */
	dwarf_set_de_alloc_flag(0);
}

int dbg_open(const char *path, Dwarf_Debug *dbg, char *err, size_t errsize)
{
	Dwarf_Error e = NULL;
	int res;

	pthread_once(&init_once, init_libdwarf);
	pthread_mutex_lock(&init_lock);
	res = dwarf_init_path(path, NULL, 0, DW_DLC_READ, DW_GROUPNUMBER_ANY, NULL, NULL, dbg, NULL,
			      0, NULL, &e);
	pthread_mutex_unlock(&init_lock);
	if (res == DW_DLV_OK)
		return 0;
	*dbg = NULL;
	if (res == DW_DLV_NO_ENTRY)
		return -ENODATA;
	err_set(err, errsize, "%s", e ? dwarf_errmsg(e) : "unknown libdwarf error");
	if (e)
		dwarf_dealloc_error(NULL, e);
	return -EINVAL;
}

void dbg_close(Dwarf_Debug dbg)
{
	Dwarf_Error e = NULL;

	if (!dbg)
		return;
	pthread_mutex_lock(&init_lock);
	dwarf_finish(dbg, &e);
	pthread_mutex_unlock(&init_lock);
}

int cu_ctx_init(struct cu_ctx *c, Dwarf_Debug dbg, const uint64_t *addrs, size_t n,
		bool inline_chains, const struct line_sections *sections, struct str_pool *pool)
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

void cu_ctx_release(struct cu_ctx *c)
{
	free(c->best);
	free(c->scopes);
	c->best = NULL;
	c->scopes = NULL;
}

/* Lines and inline chains of the addresses idx[0..n) in one unit. */
static int cu_resolve(struct cu_ctx *c, Dwarf_Die cu_die, uint32_t *idx, size_t n, bool gated,
		      struct dwarf_lookup *out)
{
	long got;
	size_t i, k;
	int err = 0;

	cu_lines_open(c, cu_die);
	got = cu_lines_assign(c, idx, n, out);
	if (got < 0)
		err = (int)got;
	if (gated && !err) {
		for (i = 0, k = 0; i < n; i++)
			if (out->leaf_file[idx[i]] || out->leaf_line[idx[i]])
				idx[k++] = idx[i];
		n = k;
	}
	if (!err)
		cu_scopes_visit(c, cu_die, idx, n);
	err = err ? err : c->err;
	for (i = 0; i < n && !err; i++)
		if (c->best[idx[i]] >= 0 && !out->count[idx[i]])
			err = cu_chain_emit(c, out, idx[i]);
	for (i = 0; i < n; i++)
		c->best[idx[i]] = -1;
	cu_lines_close(c);
	return err;
}

int cu_resolve_unit(struct cu_ctx *c, const struct cu_unit *u, uint32_t *idx, bool gated,
		    struct dwarf_lookup *out)
{
	Dwarf_Die die = NULL;
	Dwarf_Error e = NULL;
	int ret;

	if (dwarf_offdie_b(c->dbg, u->die, 1, &die, &e) != DW_DLV_OK) {
		dbg_drop_error(c->dbg, &e);
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
	out->n = n;
	return 0;
}

void dwarf_lookup_release(struct dwarf_lookup *l)
{
	size_t i;

	FREE_ALL(l->first, l->count, l->leaf_file, l->leaf_line, l->frames);
	for (i = 0; i < l->npools; i++)
		str_pool_release(&l->pools[i]);
	free(l->pools);
	memset(l, 0, sizeof(*l));
}

int dwarf_info_resolve(const char *path, const uint64_t *addrs, size_t n, bool inline_chains,
		       int jobs, struct str_pool *pool, struct dwarf_lookup *out, char *err,
		       size_t errsize)
{
	Dwarf_Debug dbg = NULL;
	struct cu_ctx c = { 0 };
	struct cu_units units = { 0 };
	struct elf_file ef;
	struct line_sections ls = { 0 };
	bool have_ef = false;
	int ret;

	err[0] = '\0';
	ret = lookup_alloc(out, n);
	if (ret)
		return ret;
	ret = dbg_open(path, &dbg, err, errsize);
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
	ret = cu_ctx_init(&c, dbg, addrs, n, inline_chains, ls.line ? &ls : NULL, pool);
	/* First the unit headers (which unit holds which address), then the units. */
	ret = ret ? ret : cu_units_scan(&units, &c, out, err, errsize);
	ret = ret ? ret : cu_units_resolve(&units, path, &c, jobs, out);
	cu_units_release(&units);
	cu_ctx_release(&c);
	dbg_close(dbg);
	if (have_ef)
		elf_file_close(&ef);
	if (ret)
		dwarf_lookup_release(out);
	return ret;
}
