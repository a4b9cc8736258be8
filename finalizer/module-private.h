/* SPDX-License-Identifier: MIT */
/* Between the parts of module_resolve(): module.c, module-file.c, module-symbols.c,
   module-frames.c, module-objects.c, module-spin.c. */
#ifndef PCOLLECT_FINALIZER_MODULE_PRIVATE_H
#define PCOLLECT_FINALIZER_MODULE_PRIVATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "finalizer/dwarf-info.h"
#include "finalizer/eh-frame.h"
#include "finalizer/elf-file.h"
#include "finalizer/module.h"
#include "finalizer/symtab.h"

/* Sort v[0..*n) and drop repeats (*n becomes the distinct count). 0 or -ENOMEM. */
int module_sort_unique(uint64_t *v, size_t *n);

/* module-file.c */
/*
 * Open m's file in f: the result's archive copy by build-id, a -search-dir file, the original
 * path; never one whose build-id differs (the first such is kept in m->mismatch_path). Sets
 * m->found_in. False when none is found.
 */
bool module_find_file(struct module *m, const struct resolve_opts *o, struct elf_file *f);
/* A separate debug file with .debug_info for f (by build-id, .gnu_debuglink, -search-dir):
   a new path, caller frees; NULL when none. */
char *module_find_debug_file(struct module *m, const struct resolve_opts *o,
			     const struct elf_file *f);
/* The debug file of m from the debuginfod servers (m->fetch_debug says how it went): a new
   path, caller frees; NULL when none. */
char *module_fetch_debug_file(struct module *m, const struct resolve_opts *o);
/* A module not found here: its binary from the debuginfod servers, opened in f. */
bool module_fetch_binary(struct module *m, const struct resolve_opts *o, struct elf_file *f);

/* module-symbols.c */
/*
 * The FDE ranges of a module (finalizer/eh-frame.h), read on first need (fde_src_get): only a
 * module with an address no symbol names, or a stripped one (symtab_name_split_parts()),
 * needs them.
 */
struct fde_src {
	struct module *m;
	const struct resolve_opts *o;
	Elf *elf; /* the module's file; NULL: no ranges */
	struct fde_table t;
	bool tried;
	int err; /* -ENOMEM */
};
/* The ranges (from the symbol cache, else the file), or NULL: none, or fs->err set. */
const struct fde_table *fde_src_get(struct fde_src *fs);
/* A file module: found, its symbols and DWARF read, its addresses resolved. 0 or -ENOMEM. */
int module_resolve_file(struct module *m, const struct resolve_opts *o);
/* The vdso, from this machine's when its build-id is the same. 0 or -ENOMEM. */
int module_resolve_vdso(struct module *m);
/*
 * When st holds no .symtab, the .symtab of the debug file at path instead (read by load:
 * symtab_load or symtab_load_objects). True when it was taken (st's old table released).
 */
bool module_symtab_from_debug(struct symtab *st, const char *path,
			      int (*load)(struct symtab *t, Elf *elf));

/* module-frames.c */
/*
 * The frames of every address of m from the symbol table st, DWARF dw and the FDE ranges fs
 * (dw and fs may be NULL): m->first, m->count, m->frames and the address counts. 0 or -ENOMEM.
 */
int module_compose(struct module *m, const struct symtab *st, const struct dwarf_lookup *dw,
		   struct fde_src *fs);
/* Every address named by its placeholder ("func@0x1a2b"). 0 or -ENOMEM. */
int module_resolve_placeholders(struct module *m);

/* module-methods.c */
/*
 * After module_compose(): an address whose function (its FDE range, else its symbol) starts
 * at a method's C function in the file's method tables (finalizer/pymethod-table.h) gets that
 * method's cProfile name on its outermost frame, which is flagged method. 0 or -ENOMEM.
 */
int module_name_methods(struct module *m, Elf *elf, struct fde_src *fs, const struct symtab *st);

/* module-objects.c: m->obj_names from the variables of m's file. 0 or -ENOMEM. */
int module_resolve_objects(struct module *m, const struct resolve_opts *o);

/* module-spin.c: m->spin_code for an OpenMP runtime's addresses. 0 or -ENOMEM. */
int module_find_spin_code(struct module *m, const struct resolve_opts *o);

#endif
