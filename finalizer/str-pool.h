/* SPDX-License-Identifier: MIT */
/* Interned strings: each distinct string stored once, found by content, numbered from 0. */
#ifndef PCOLLECT_FINALIZER_STR_POOL_H
#define PCOLLECT_FINALIZER_STR_POOL_H

#include <stddef.h>
#include <stdint.h>

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

#endif
