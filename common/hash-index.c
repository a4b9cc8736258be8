/* SPDX-License-Identifier: MIT */
/* An open-addressing hash index (linear probing) over caller-owned elements. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/hash-index.h"

void hash_index_init(struct hash_index *h)
{
	memset(h, 0, sizeof(*h));
}

void hash_index_release(struct hash_index *h)
{
	free(h->slots);
	memset(h, 0, sizeof(*h));
}

int64_t hash_index_find(const struct hash_index *h, uint64_t hash, hash_eq_fn eq, const void *ctx)
{
	size_t mask, i;

	if (!h->cap)
		return -1;
	mask = h->cap - 1;
	for (i = (size_t)hash & mask;; i = (i + 1) & mask) {
		const struct hash_slot *s = &h->slots[i];

		if (!s->idx1)
			return -1;
		if (s->hash == hash && eq(ctx, s->idx1 - 1))
			return (int64_t)(s->idx1 - 1);
	}
}

static void slot_put(struct hash_slot *slots, size_t cap, uint64_t hash, uint32_t idx1)
{
	size_t mask = cap - 1, i;

	for (i = (size_t)hash & mask; slots[i].idx1; i = (i + 1) & mask)
		;
	slots[i].hash = hash;
	slots[i].idx1 = idx1;
}

/* Room for one more entry: the load stays under 1/2 so probes stay short. */
static int room_for_one(struct hash_index *h)
{
	size_t ncap, i;
	struct hash_slot *ns;

	if ((h->n + 1) * 2 <= h->cap)
		return 0;
	ncap = h->cap ? h->cap * 2 : 64;
	ns = calloc(ncap, sizeof(*ns));
	if (!ns)
		return -ENOMEM;
	for (i = 0; i < h->cap; i++)
		if (h->slots[i].idx1)
			slot_put(ns, ncap, h->slots[i].hash, h->slots[i].idx1);
	free(h->slots);
	h->slots = ns;
	h->cap = ncap;
	return 0;
}

int hash_index_add(struct hash_index *h, uint64_t hash, uint32_t idx)
{
	if (room_for_one(h))
		return -ENOMEM;
	slot_put(h->slots, h->cap, hash, idx + 1);
	h->n++;
	return 0;
}

int64_t hash_index_get(struct hash_index *h, uint64_t hash, hash_eq_fn eq, hash_make_fn make,
		       const void *ctx, void *arr, size_t *n, size_t *cap, size_t el)
{
	int64_t idx = hash_index_find(h, hash, eq, ctx);
	char *base;
	int ret;

	if (idx >= 0)
		return idx;
	if (*n >= UINT32_MAX)
		return -EOVERFLOW; /* the index holds 32-bit element numbers */
	ret = array_reserve(arr, cap, *n + 1, el);
	if (!ret)
		ret = room_for_one(h);
	if (ret)
		return ret;
	memcpy(&base, arr, sizeof(base)); /* the caller's pointer, of whatever type */
	if (make)
		ret = make(ctx, base + *n * el);
	else
		memset(base + *n * el, 0, el);
	if (ret)
		return ret;
	slot_put(h->slots, h->cap, hash, (uint32_t)*n + 1);
	h->n++;
	return (int64_t)(*n)++;
}
