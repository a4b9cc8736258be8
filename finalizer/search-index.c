/* SPDX-License-Identifier: MIT */
/* Indexing the -search-dir trees once, so each module's lookup is a binary search. */
#define LOG_DOMAIN "search"
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/cmp.h"
#include "common/log.h"
#include "common/hash-index.h"
#include "finalizer/search-index.h"

static int entry_add(struct search_index *x, const char *path, unsigned dir, unsigned depth)
{
	struct search_entry *e;
	const char *slash;

	if (array_reserve(&x->e, &x->cap, x->n + 1, sizeof(*x->e)))
		return -ENOMEM;
	e = &x->e[x->n];
	e->path = strdup(path);
	if (!e->path)
		return -ENOMEM;
	slash = strrchr(e->path, '/');
	e->base = slash ? slash + 1 : e->path;
	e->dir = dir;
	e->depth = depth;
	x->n++;
	return 0;
}

static int walk(struct search_index *x, const char *path, unsigned dir, unsigned depth,
		size_t *files)
{
	DIR *d;
	struct dirent *de;
	int ret = 0;

	if (depth > SEARCH_MAX_DEPTH) {
		x->truncated++;
		return 0;
	}
	d = opendir(path);
	if (!d) {
		/* The directory the user named is worth a warning; one below it is not. */
		if (depth == 0)
			log_warn("cannot read search directory '%s': %s", path, strerror(errno));
		else
			log_debug("'%s' skipped: %s", path, strerror(errno));
		return 0;
	}
	while ((de = readdir(d)) && !ret) {
		char child[4096];
		struct stat st;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (snprintf(child, sizeof(child), "%s/%s", path, de->d_name) >= (int)sizeof(child))
			continue;
		if (lstat(child, &st))
			continue;
		if (S_ISLNK(st.st_mode) && stat(child, &st))
			continue;
		if (S_ISREG(st.st_mode)) {
			if (++*files > SEARCH_MAX_FILES) {
				x->truncated++;
				break;
			}
			ret = entry_add(x, child, dir, depth);
		} else if (S_ISDIR(st.st_mode) && de->d_type != DT_LNK) {
			ret = walk(x, child, dir, depth + 1, files);
		}
	}
	closedir(d);
	return ret;
}

static int entry_cmp(const void *a, const void *b)
{
	const struct search_entry *x = a, *y = b;
	int c = strcmp(x->base, y->base);

	c = CMP_THEN(c, CMP_THEN(CMP(x->dir, y->dir), CMP(x->depth, y->depth)));
	return c ? c : strcmp(x->path, y->path);
}

int search_index_build(struct search_index *x, const char *const *dirs, size_t n)
{
	size_t i;
	int ret = 0;

	memset(x, 0, sizeof(*x));
	for (i = 0; i < n && !ret; i++) {
		size_t files = 0;
		char dir[4096];
		size_t len;

		snprintf(dir, sizeof(dir), "%s", dirs[i]);
		len = strlen(dir);
		while (len > 1 && dir[len - 1] == '/')
			dir[--len] = '\0';
		ret = walk(x, dir, (unsigned)i, 0, &files);
		log_debug("'%s': %zu files indexed%s", dir, files,
			  files > SEARCH_MAX_FILES ? " (the limit: the rest is not searched)" : "");
	}
	if (x->n)
		qsort(x->e, x->n, sizeof(*x->e), entry_cmp);
	return ret;
}

void search_index_release(struct search_index *x)
{
	size_t i;

	for (i = 0; i < x->n; i++)
		free(x->e[i].path);
	free(x->e);
	memset(x, 0, sizeof(*x));
}

size_t search_index_find(const struct search_index *x, const char *base, const char **out,
			 size_t max)
{
	size_t lo = 0, hi = x->n, k = 0;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (strcmp(x->e[mid].base, base) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < x->n && k < max && !strcmp(x->e[lo].base, base); lo++)
		out[k++] = x->e[lo].path;
	return k;
}
