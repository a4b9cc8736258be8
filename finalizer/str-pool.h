/* SPDX-License-Identifier: MIT */
/* Interned strings: each distinct string stored once, found by content, numbered from 0. */
#ifndef PCOLLECT_FINALIZER_STR_POOL_H
#define PCOLLECT_FINALIZER_STR_POOL_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/hash-index.h"

struct str_pool {
	char **strs; /* owned copies, by id */
	size_t n, cap;
	struct hash_index index;
};

void str_pool_init(struct str_pool *p);
void str_pool_release(struct str_pool *p);
/* The id of s (len bytes, need not be NUL terminated), adding a copy if new; -ENOMEM. */
int64_t str_pool_intern_len(struct str_pool *p, const char *s, size_t len);
int64_t str_pool_intern(struct str_pool *p, const char *s);
/* The stored copy of s (NULL for NULL or on allocation failure); valid until release. */
const char *str_pool_get(struct str_pool *p, const char *s);

/* A NUL-terminated copy of the len bytes at s (a string the raw reader points into, say): new,
   caller frees; NULL when out of memory. */
static inline char *str_dup_mem(const void *s, size_t len)
{
	char *d = malloc(len + 1);

	if (d) {
		memcpy(d, s, len);
		d[len] = '\0';
	}
	return d;
}

#endif
