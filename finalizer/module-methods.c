/* SPDX-License-Identifier: MIT */
/* The C functions Python calls by name (builtins, methods of types, extension functions),
   named from the module's method tables as cProfile names them. */
#define LOG_DOMAIN "module"
#include <errno.h>

#include "common/log.h"
#include "finalizer/module-private.h"
#include "finalizer/pymethod-table.h"
#include "finalizer/sym-cache.h"

/*
 * Symbols name these functions in C ("builtin_sorted") or, in a stripped module, not at all
 * ("func@0x2e2b90"); the user knows them by the name their Python code calls. The function
 * that runs a method starts at its ml_meth; its extent is the FDE range (every stripped
 * module keeps .eh_frame) or, without one, the symbol that holds the address. A part gcc
 * split off (".cold") starts elsewhere and keeps its name.
 */
int module_name_methods(struct module *m, Elf *elf, struct fde_src *fs, const struct symtab *st)
{
	struct pymethod_table t;
	const struct fde_table *ft;
	size_t i, named = 0;
	int ret;

	if (fs->o->cache_dir && m->build_id_len && !sym_cache_load_methods(m, fs->o, &t)) {
		ret = 0;
	} else {
		ret = pymethod_table_load(&t, elf, m->path);
		/* an empty table too: most modules use no Python C API, and saying so is cheap */
		if (!ret && fs->o->cache_dir && m->build_id_len)
			sym_cache_store_methods(m, fs->o, &t); /* best effort */
	}
	if (ret || !t.n)
		return ret;
	ft = fde_src_get(fs);
	if (fs->err) {
		ret = fs->err;
		goto out;
	}
	for (i = 0; i < m->naddrs; i++) {
		uint64_t a = m->addrs[i];
		const struct fde_range *r = ft ? fde_table_find(ft, a) : NULL;
		const struct symtab_sym *s = r || !st->n ? NULL : symtab_find_addr(st, a);
		struct sym_frame *f = &m->frames[m->first[i]];
		const char *name = r   ? pymethod_table_find(&t, r->start)
				   : s ? pymethod_table_find(&t, s->start)
				       : NULL;

		if (!name || !m->count[i])
			continue;
		if (!(name = str_pool_get(&m->pool, name))) {
			ret = -ENOMEM;
			goto out;
		}
		/* The C name stays beside it, as a linkage name does. */
		f->mangled = f->resolved ? f->name : NULL;
		f->name = name;
		f->method = true;
		if (!f->resolved) {
			m->addrs_ranged -= f->range;
			m->addrs_resolved++;
		}
		f->resolved = true;
		f->range = false;
		named++;
	}
	log_debug("'%s': %zu methods in its method tables (PyMethodDef), %zu addresses in them",
		  m->path, t.n, named);
out:
	pymethod_table_release(&t);
	return ret;
}
