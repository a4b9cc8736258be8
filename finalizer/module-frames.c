/* SPDX-License-Identifier: MIT */
/* The frames of a module's addresses: DWARF's inline chain, else the symbol, else the FDE range
   (func@0x<start>) or the address alone; names demangled once per symbol. */
#define LOG_DOMAIN "module"
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
#include "finalizer/demangle.h"
#include "finalizer/module-private.h"
#include "finalizer/mpi-names.h"

static struct sym_frame *frame_push(struct module *m)
{
	if (array_reserve(&m->frames, &m->fcap, m->nframes + 1, sizeof(*m->frames)))
		return NULL;
	memset(&m->frames[m->nframes], 0, sizeof(*m->frames));
	return &m->frames[m->nframes++];
}

/* The name of an address nothing resolves: "func@0x1a2b", "[vdso]@0x..", "[anon]@0x..". */
static const char *placeholder_name(struct module *m, uint64_t addr)
{
	char buf[64];

	if (m->kind == RAW_MODULE_VDSO)
		snprintf(buf, sizeof(buf), "[vdso]@0x%" PRIx64, addr);
	else if (m->kind == RAW_MODULE_ANON)
		snprintf(buf, sizeof(buf), "[anon]@0x%" PRIx64, addr);
	else
		snprintf(buf, sizeof(buf), "func@0x%" PRIx64, addr);
	return str_pool_get(&m->pool, buf);
}

/*
 * The C name of an MPI Fortran binding's function (interned), or NULL: one name for an MPI
 * function whatever the language that called it (finalizer/mpi-names.c).
 */
static const char *mpi_binding(struct module *m, const char *name)
{
	char c[128];

	return name && mpi_names_binding(m->name, name, c, sizeof(c)) ? str_pool_get(&m->pool, c)
								      : NULL;
}

/* Demangled symbol names, computed once per symbol. */
struct sym_names {
	const struct symtab *st;
	const char **dem; /* per symbol: interned display name */
	const char **mangled;
};

static const char *sym_display(struct module *m, struct sym_names *sn, const struct symtab_sym *s,
			       const char **mangled)
{
	size_t i = (size_t)(s - sn->st->syms);

	if (!sn->dem[i]) {
		char *d = demangle(s->name);
		const char *c = d ? NULL : mpi_binding(m, s->name);

		sn->dem[i] = str_pool_get(&m->pool, d ? d : c ? c : s->name);
		sn->mangled[i] = d || c ? str_pool_get(&m->pool, s->name) : NULL;
		free(d);
	}
	*mangled = sn->mangled[i];
	return sn->dem[i];
}

/*
 * The name of an address no symbol names: "func@0x<start>" of the FDE range that holds it
 * (*range true), else the address alone.
 */
static const char *unnamed(struct module *m, struct fde_src *fs, uint64_t addr, bool *range)
{
	const struct fde_table *t = m->kind == RAW_MODULE_FILE ? fde_src_get(fs) : NULL;
	const struct fde_range *r = t ? fde_table_find(t, addr) : NULL;

	*range = r != NULL;
	return placeholder_name(m, r ? r->start : addr);
}

/*
 * The symbol of addr. A symbol without a size reaches up to the next symbol, but not past
 * the start of another FDE range: that is another function, which has no symbol.
 */
static const struct symtab_sym *symbol_of(const struct symtab *st, struct fde_src *fs,
					  uint64_t addr)
{
	const struct symtab_sym *s = st->n ? symtab_find_addr(st, addr) : NULL;
	const struct fde_table *t;
	const struct fde_range *r;

	if (!s || s->size || !(t = fde_src_get(fs)))
		return s;
	r = fde_table_find(t, addr);
	return r && r->start > s->start ? NULL : s;
}

/*
 * A gcc outlined OpenMP function's frame ("main._omp_fn.0") has no definition line in DWARF:
 * it gets the line of the function's first instruction, the directive's, which
 * want_outlined_starts() had resolved.
 */
static void outlined_line(const struct module *m, const struct symtab *st,
			  const struct dwarf_lookup *dw, uint64_t addr, struct sym_frame *f)
{
	const struct symtab_sym *s;
	int64_t i;

	if (f->decl_line || !dw || !f->name || !strstr(f->name, "._omp_fn.") ||
	    !(s = symtab_find_addr(st, addr)) || (i = module_addr_index(m, s->start)) < 0 ||
	    !dw->leaf_line[i])
		return;
	f->decl_line = dw->leaf_line[i];
	if (!f->decl_file)
		f->decl_file = dw->leaf_file[i];
}

/*
 * Combine the symbol table, DWARF and FDE range answers into the chains of every address.
 * dw and fs may be NULL.
 */
int module_compose(struct module *m, const struct symtab *st, const struct dwarf_lookup *dw,
		   struct fde_src *fs)
{
	struct sym_names sn = { st, NULL, NULL };
	size_t i;
	int ret = 0;

	sn.dem = calloc(st->n ? st->n : 1, sizeof(*sn.dem));
	sn.mangled = calloc(st->n ? st->n : 1, sizeof(*sn.mangled));
	if (!sn.dem || !sn.mangled) {
		ret = -ENOMEM;
		goto out;
	}
	for (i = 0; i < m->naddrs; i++) {
		uint64_t a = m->addrs[i];
		uint32_t k, n = dw ? dw->count[i] : 0;
		const struct symtab_sym *s =
			n && dw->frames[dw->first[i]].name ? NULL : symbol_of(st, fs, a);
		const char *leaf_file = dw ? dw->leaf_file[i] : NULL;
		uint32_t leaf_line = dw ? dw->leaf_line[i] : 0;
		struct sym_frame *f;

		m->first[i] = (uint32_t)m->nframes;
		for (k = 0; k < n; k++) {
			const struct dwarf_frame *d = &dw->frames[dw->first[i] + k];

			f = frame_push(m);
			if (!f) {
				ret = -ENOMEM;
				goto out;
			}
			f->name = mpi_binding(m, d->name);
			if (f->name) {
				f->mangled = d->name;
			} else {
				f->name = d->name;
				f->mangled = d->mangled && d->name != d->mangled &&
							     strcmp(d->mangled, d->name)
						     ? d->mangled
						     : NULL;
			}
			if (!f->name && k == 0 && s)
				f->name = sym_display(m, &sn, s, &f->mangled);
			f->resolved = f->name != NULL;
			if (!f->name && k == 0)
				f->name = unnamed(m, fs, a, &f->range);
			else if (!f->name)
				f->name =
					placeholder_name(m, a); /* an inlined call without a name */
			f->decl_file = d->decl_file;
			f->decl_line = d->decl_line;
			f->file = d->file;
			f->line = d->line;
			if (k == 0)
				outlined_line(m, st, dw, a, f);
		}
		if (!n) {
			f = frame_push(m);
			if (!f) {
				ret = -ENOMEM;
				goto out;
			}
			if (s) {
				f->name = sym_display(m, &sn, s, &f->mangled);
				f->resolved = true;
			} else {
				f->name = unnamed(m, fs, a, &f->range);
			}
			f->file = leaf_file;
			f->line = leaf_line;
			outlined_line(m, st, dw, a, f);
			n = 1;
		}
		if (!f->name || (fs && fs->err)) {
			ret = -ENOMEM;
			goto out;
		}
		m->count[i] = n;
		if (m->frames[m->first[i]].resolved)
			m->addrs_resolved++;
		else if (m->frames[m->first[i]].range)
			m->addrs_ranged++;
		if (m->frames[m->first[i] + n - 1].file)
			m->addrs_with_line++;
	}
out:
	free(sn.dem);
	free(sn.mangled);
	return ret;
}

int module_resolve_placeholders(struct module *m)
{
	return module_compose(m, &(struct symtab){ 0 }, NULL, NULL);
}
