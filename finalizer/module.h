/* SPDX-License-Identifier: MIT */
/* A module (executable, shared library, vdso, JIT region) and the symbolization of its code. */
#ifndef PCOLLECT_FINALIZER_MODULE_H
#define PCOLLECT_FINALIZER_MODULE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/raw-stream.h"
#include "finalizer/search-index.h"
#include "finalizer/str-pool.h"

/* One frame of an address's chain. Strings live in the module's pool. */
struct sym_frame {
	const char *name;      /* demangled; "func@0x1a2b" when unresolved; never NULL */
	const char *mangled;   /* linkage name when it differs from name, else NULL */
	const char *decl_file; /* where the function is defined, NULL if unknown */
	uint32_t decl_line;
	const char *file; /* source position of this frame, NULL if unknown */
	uint32_t line;
	bool resolved; /* the name came from symbols */
	bool range;    /* no symbol, but an FDE range holds the address: the name is
			  "func@0x<start of the range>", one function for all its addresses */
	bool method;   /* a Python-callable C function, named from the method tables as
			  cProfile names it (module_name_methods) */
};

/* What a debuginfod server answered for a module (debug_server_fetch()). */
enum module_fetch {
	MODULE_FETCH_NONE = 0,       /* not asked */
	MODULE_FETCH_DOWNLOADED = 1, /* fetched now */
	MODULE_FETCH_CACHED = 2,     /* libdebuginfod's cache had it */
	/* else a negative errno: -ENOENT no server has it, -EINVAL its file did not fit */
};

/* A distinct module of the result: the same (kind, path, build-id) in any process. */
struct module {
	char *path;       /* as loaded, owned */
	const char *name; /* base name, points into path */
	uint8_t build_id[RAW_MAX_BUILD_ID];
	size_t build_id_len;
	char build_id_hex[2 * RAW_MAX_BUILD_ID + 1]; /* "" when none */
	uint32_t kind;                               /* enum raw_module_kind */

	/* Module-relative addresses to resolve; sorted and made distinct by module_resolve(). */
	uint64_t *addrs;
	size_t naddrs, cap;
	uint64_t *wanted; /* MODULE_WANTED slots: addresses (+ 1) added lately, not added again */

	/* After module_resolve(): address i has frames[first[i] .. + count[i]), outermost first. */
	uint32_t *first, *count;
	struct sym_frame *frames;
	size_t nframes, fcap;
	struct str_pool pool;
	struct str_pool *more_pools; /* strings read by helper threads */
	size_t nmore_pools;

	/* What module_resolve() found. */
	char *resolved_path;  /* file read for symbols, NULL if none */
	char *debug_path;     /* separate debug file, NULL if none */
	char *mismatch_path;  /* a file skipped because its build-id differs */
	const char *symbols;  /* "dwarf", "symtab", "dynsym", "none" */
	const char *status;   /* "ok", "missing", "build-id-mismatch" */
	const char *found_in; /* "archive", "search-dir", "original", "self" (vdso), NULL */
	char *dwarf_error;    /* libdwarf's complaint, NULL if none */
	uint64_t cus, cus_parsed;
	bool from_cache;
	size_t addrs_resolved; /* addresses with a function name */
	size_t addrs_ranged;   /* addresses in an FDE range no symbol names (func@0x<start>) */
	size_t addrs_with_line;
	double seconds;   /* spent resolving */
	int fetch_debug;  /* enum module_fetch: the debug file from debuginfod */
	int fetch_binary; /* enum module_fetch: the binary from debuginfod (not found here) */

	/* Addresses of sync objects in the module's data (module-relative) to name; sorted and
	   made distinct by module_resolve(), which sets obj_names (NULL: no variable there). */
	uint64_t *objs;
	size_t nobjs, objs_cap;
	const char **obj_names; /* in pool */

	/*
	 * An OpenMP runtime (set by the finalizer before module_resolve()): per resolved address,
	 * whether its code lies in a spin-wait loop (module_spin_code()).
	 */
	bool want_spin_code;
	uint8_t *spin_code;

	/* Filled by the finalizer: sample counts whose innermost frame is here. */
	uint64_t leaf_samples;
	bool interpreter; /* runs Python: a sampled address is in _PyEval_EvalFrameDefault */
	int64_t db_id;
};

struct resolve_opts {
	const char *result_dir;
	const struct search_index *search; /* -search-dir files by base name */
	const char *debug_root;            /* "/usr/lib/debug" */
	bool inline_chains;                /* false in fast mode */
	int jobs;                          /* threads one large module may use */
	const char *cache_dir;             /* NULL: no symbol cache */
	bool debuginfod;                   /* ask the DEBUGINFOD_URLS servers for what is missing */
};

/* Set up m for the module described by rm (path and build-id copied). 0 or -ENOMEM. */
int module_init(struct module *m, const struct raw_module *rm);
void module_release(struct module *m);

/* Ask for addr (module-relative) to be resolved. 0 or -ENOMEM. */
int module_want(struct module *m, uint64_t addr);

/*
 * Find the module's file (archive by build-id, -search-dir, original path, debuginfod; never one
 * with a different build-id), read its symbols (.symtab, else .dynsym and the MiniDebugInfo),
 * DWARF (its own, a separate debug file's, or debuginfod's) and, for addresses no symbol
 * names, its FDE ranges, once, and resolve every wanted address.
 * Thread-safe across different modules. Returns 0 (a module that cannot be found or read
 * still gets placeholder frames) or -ENOMEM.
 */
int module_resolve(struct module *m, const struct resolve_opts *o);

/* Ask for the variable at addr (module-relative, in its data) to be named. 0 or -ENOMEM. */
int module_want_object(struct module *m, uint64_t addr);
/*
 * After module_resolve(): the variable at addr ("lock_a", "locks+0x28" inside an array or
 * struct), or NULL when no symbol covers it or it was not asked for.
 */
const char *module_object_name(const struct module *m, uint64_t addr);

/*
 * After module_resolve() of a module with want_spin_code: true when the instruction at addr
 * (a resolved address) lies within a few bytes of a PAUSE instruction, the hint every
 * spin-wait loop of the OpenMP runtimes executes (cpu_relax, KMP_CPU_PAUSE): the thread was
 * spinning there. False for other modules and addresses.
 */
bool module_spin_code(const struct module *m, uint64_t addr);

/* Index of addr among the resolved addresses, or -1. */
int64_t module_addr_index(const struct module *m, uint64_t addr);

#endif
