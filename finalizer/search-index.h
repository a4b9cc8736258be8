/* SPDX-License-Identifier: MIT */
/* The files under the -search-dir directories, found by base name. */
#ifndef PCOLLECT_FINALIZER_SEARCH_INDEX_H
#define PCOLLECT_FINALIZER_SEARCH_INDEX_H

#include <stddef.h>

struct search_entry {
	const char *base; /* points into path */
	char *path;       /* owned */
	unsigned dir;     /* which -search-dir, in command-line order */
	unsigned depth;   /* 0: directly in the directory */
};

struct search_index {
	struct search_entry *e; /* sorted by (base, dir, depth) */
	size_t n, cap;
	size_t truncated; /* directories not walked because of the limits */
};

/* Limits of the walk: subdirectory depth and files per -search-dir. */
#define SEARCH_MAX_DEPTH 8
#define SEARCH_MAX_FILES 200000

/*
 * Walk each directory (recursively, up to SEARCH_MAX_DEPTH levels, not following symbolic
 * links to directories) and index its regular files by base name. A directory that cannot be
 * read is skipped (with a warning when it is one of dirs). Returns 0 or -ENOMEM.
 */
int search_index_build(struct search_index *x, const char *const *dirs, size_t n);
void search_index_release(struct search_index *x);

/*
 * The files named base, best first: earlier -search-dir first, and within one directory the
 * shallowest first. Returns how many (at most max) were put in out.
 */
size_t search_index_find(const struct search_index *x, const char *base, const char **out,
			 size_t max);

#endif
