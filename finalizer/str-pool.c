/* SPDX-License-Identifier: MIT */
/* Interned strings on top of the hash index. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "finalizer/str-pool.h"

void str_pool_init(struct str_pool *p)
{
	memset(p, 0, sizeof(*p));
	hash_index_init(&p->index);
}

void str_pool_release(struct str_pool *p)
{
	size_t i;

	for (i = 0; i < p->n; i++)
		free(p->strs[i]);
	free(p->strs);
	hash_index_release(&p->index);
	memset(p, 0, sizeof(*p));
}

struct str_key {
	const struct str_pool *p;
	const char *s;
	size_t len;
};

static bool str_eq(const void *ctx, uint32_t idx)
{
	const struct str_key *k = ctx;
	const char *t = k->p->strs[idx];

	return !strncmp(t, k->s, k->len) && t[k->len] == '\0';
}

static int str_make(const void *ctx, void *elem)
{
	const struct str_key *k = ctx;
	char *copy = malloc(k->len + 1);

	if (!copy)
		return -ENOMEM;
	memcpy(copy, k->s, k->len);
	copy[k->len] = '\0';
	*(char **)elem = copy;
	return 0;
}

int64_t str_pool_intern_len(struct str_pool *p, const char *s, size_t len)
{
	struct str_key k = { p, s, len };

	return HASH_INDEX_GET(&p->index, hash_bytes(s, len), str_eq, str_make, &k, p->strs, p->n,
			      p->cap);
}

int64_t str_pool_intern(struct str_pool *p, const char *s)
{
	return str_pool_intern_len(p, s, strlen(s));
}

const char *str_pool_get(struct str_pool *p, const char *s)
{
	int64_t id;

	if (!s)
		return NULL;
	id = str_pool_intern(p, s);
	return id < 0 ? NULL : p->strs[id];
}
