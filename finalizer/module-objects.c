/* SPDX-License-Identifier: MIT */
/* A module's data: the variables that hold the sync objects waits named. */
#define LOG_DOMAIN "module"
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/log.h"
#include "finalizer/module-private.h"

/* Name each wanted object with the variable symbol covering it. 0 or -ENOMEM. */
static int name_objects(struct module *m, const struct symtab *st)
{
	size_t i;

	for (i = 0; i < m->nobjs; i++) {
		const struct symtab_sym *s = symtab_find_addr(st, m->objs[i]);
		char buf[1024];

		if (!s || !s->size)
			continue; /* an unsized symbol says nothing of where it ends */
		if (m->objs[i] == s->start)
			snprintf(buf, sizeof(buf), "%s", s->name);
		else
			snprintf(buf, sizeof(buf), "%s+0x%" PRIx64, s->name, m->objs[i] - s->start);
		if (!(m->obj_names[i] = str_pool_get(&m->pool, buf)))
			return -ENOMEM;
	}
	return 0;
}

/*
 * The variables holding the sync objects a wait named: from the file's .symtab, else its
 * separate debug file's, else .dynsym (exported variables only). Read apart from the
 * functions, which may come from the symbol cache. Returns 0 (nothing found is no error) or
 * -ENOMEM.
 */
int module_resolve_objects(struct module *m, const struct resolve_opts *o)
{
	struct elf_file f;
	struct symtab st = { 0 };
	char *debug = NULL;
	int ret;

	if (module_sort_unique(m->objs, &m->nobjs))
		return -ENOMEM;
	m->obj_names = calloc(m->nobjs ? m->nobjs : 1, sizeof(*m->obj_names));
	if (!m->obj_names)
		return -ENOMEM;
	if (m->kind != RAW_MODULE_FILE || m->path[0] != '/' || !module_find_file(m, o, &f))
		return 0;
	ret = symtab_load_objects(&st, f.elf);
	if (!ret && st.source != SYMTAB_SYMTAB && (debug = module_find_debug_file(m, o, &f)))
		module_symtab_from_debug(&st, debug, symtab_load_objects);
	if (!ret)
		ret = name_objects(m, &st);
	log_debug("'%s': %zu sync objects in its data, named from %s", m->path, m->nobjs,
		  st.source == SYMTAB_SYMTAB   ? ".symtab"
		  : st.source == SYMTAB_DYNSYM ? ".dynsym"
					       : "nothing");
	free(debug);
	symtab_release(&st);
	elf_file_close(&f);
	return ret;
}
