/* SPDX-License-Identifier: MIT */
/* An open-addressing hash index (linear probing) over caller-owned elements. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "finalizer/hash-index.h"

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

int hash_index_add(struct hash_index *h, uint64_t hash, uint32_t idx)
{
	/* Keep the load under 1/2 so probes stay short. */
	if ((h->n + 1) * 2 > h->cap) {
		size_t ncap = h->cap ? h->cap * 2 : 64, i;
		struct hash_slot *ns = calloc(ncap, sizeof(*ns));

		if (!ns)
			return -ENOMEM;
		for (i = 0; i < h->cap; i++)
			if (h->slots[i].idx1)
				slot_put(ns, ncap, h->slots[i].hash, h->slots[i].idx1);
		free(h->slots);
		h->slots = ns;
		h->cap = ncap;
	}
	slot_put(h->slots, h->cap, hash, idx + 1);
	h->n++;
	return 0;
}
