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

int64_t str_pool_intern_len(struct str_pool *p, const char *s, size_t len)
{
	struct str_key k = { p, s, len };
	uint64_t h = hash_bytes(s, len);
	int64_t id = hash_index_find(&p->index, h, str_eq, &k);
	char *copy;

	if (id >= 0)
		return id;
	if (array_reserve(&p->strs, &p->cap, p->n + 1, sizeof(*p->strs)))
		return -ENOMEM;
	copy = malloc(len + 1);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, s, len);
	copy[len] = '\0';
	if (hash_index_add(&p->index, h, (uint32_t)p->n)) {
		free(copy);
		return -ENOMEM;
	}
	p->strs[p->n] = copy;
	return (int64_t)p->n++;
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
