/* SPDX-License-Identifier: MIT */
/* The symbol cache: resolved address chains of a module, kept by build-id across runs. */
#ifndef PCOLLECT_FINALIZER_SYM_CACHE_H
#define PCOLLECT_FINALIZER_SYM_CACHE_H

#include <stddef.h>

#include "finalizer/module.h"

/*
 * Cache files live in <cache_dir>/<build-id>.sym (docs/pfinalize.md, "Symbol cache"); the
 * directory is $PCOLLECT_CACHE_DIR, else $XDG_CACHE_HOME/pcollect, else ~/.cache/pcollect,
 * and PCOLLECT_NO_CACHE=1 turns the cache off. Only modules resolved with DWARF have their
 * chains cached, so installing debug information later is never hidden by a stale entry.
 */

/* The cache directory to use, or NULL when the cache is off. Writes into buf. */
const char *sym_cache_dir(char *buf, size_t size);

/*
 * Fill m's frames for all of m->addrs (sorted, distinct; first/count allocated) from the
 * cache. Returns 0 when every address was there, -ENOENT otherwise (m untouched).
 */
int sym_cache_load(struct module *m, const struct resolve_opts *o);

/* Save m's chains, merged with what the file already held. Best effort: 0 or -errno. */
int sym_cache_store(struct module *m, const struct resolve_opts *o);

struct fde_table;

/*
 * The FDE ranges (finalizer/eh-frame.h) of m's build-id, <cache_dir>/<build-id>.fde: a
 * property of the code, so kept for any module, with or without DWARF. 0 (t filled) or
 * -ENOENT (no usable entry).
 */
int sym_cache_load_ranges(const struct module *m, const struct resolve_opts *o,
			  struct fde_table *t);
/* Save t as m's build-id's ranges. Best effort: 0 or -errno. */
int sym_cache_store_ranges(const struct module *m, const struct resolve_opts *o,
			   const struct fde_table *t);

struct pymethod_table;

/*
 * The Python method tables (finalizer/pymethod-table.h) of m's build-id read from m->path,
 * <cache_dir>/<build-id>.pym: 0 (t filled, released by the caller) or -ENOENT (t empty).
 * Reading them from the file costs a scan of its data (0.1 s for a libpython).
 */
int sym_cache_load_methods(const struct module *m, const struct resolve_opts *o,
			   struct pymethod_table *t);
/* Save t as m's build-id's method tables. Best effort: 0 or -errno. */
int sym_cache_store_methods(const struct module *m, const struct resolve_opts *o,
			    const struct pymethod_table *t);

#endif
