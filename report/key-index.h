/* SPDX-License-Identifier: MIT */
/* common/hash-index.h over 64-bit keys that are their own identity: (stack, thread) pairs... */
#ifndef PCOLLECT_REPORT_KEY_INDEX_H
#define PCOLLECT_REPORT_KEY_INDEX_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/grow.h"
#include "common/hash-index.h"
#include "report/bigmem.h"

/*
 * hash_mix() is one to one (splitmix64's finalizer: xor-shifts and odd multiplications), so
 * the hash of a key tells it from every other key: the index alone maps a key to a number,
 * with no array of keys to compare. The number is the element index hash_index_add() stores.
 */
static inline bool key_index_same(const void *ctx, uint32_t idx)
{
	(void)ctx;
	(void)idx;
	return true; /* equal hashes: equal keys */
}

/* The number stored for key, or -1. */
static inline int key_index_get(const struct hash_index *h, uint64_t key)
{
	return (int)hash_index_find(h, hash_mix(key), key_index_same, NULL);
}

/* Store value (>= 0) for key, which has none yet. 0 or -ENOMEM. */
static inline int key_index_add(struct hash_index *h, uint64_t key, int value)
{
	return hash_index_add(h, hash_mix(key), (uint32_t)value);
}

/*
 * The element of key in the array *arr the index numbers (*n elements of el bytes, room for
 * *cap): the number stored for key; for a new key, *n, after the array grew by an element
 * for the caller to fill, *n counted it and *added was set. -ENOMEM.
 */
static inline int key_index_slot(struct hash_index *h, uint64_t key, void *arr, size_t *n,
				 size_t *cap, size_t el, bool *added)
{
	int k = key_index_get(h, key);

	*added = k < 0;
	if (k >= 0)
		return k;
	if (array_reserve(arr, cap, *n + 1, el) || key_index_add(h, key, (int)*n))
		return -ENOMEM;
	return (int)(*n)++;
}

/* key_index_slot() of an array variable, its count and its capacity. */
#define KEY_INDEX_SLOT(h, key, arr, n, cap, added)                                                 \
	key_index_slot((h), (key), &(arr), &(n), &(cap), sizeof(*(arr)), (added))

/*
 * Room in an empty index (any hash_index, keyed so or not) for n entries at once, its slots on
 * huge pages (report/bigmem.h): a big index then never grows, and its probes miss the TLB
 * less (calloc()'s 4 KB pages made the derived maps of a big result 2x slower to probe than
 * report's earlier map of its own). It sets the fields common/hash-index.h documents: cap (a
 * power of two) empty slots; a reserve in common/hash-index.c would take its place. Does
 * nothing to an index that has slots. 0 or -ENOMEM.
 */
static inline int key_index_reserve(struct hash_index *h, size_t n)
{
	size_t cap = 64;

	if (h->cap)
		return 0;
	while (cap < 2 * (n + 1))
		cap *= 2;
	if (!(h->slots = big_calloc(cap, sizeof(*h->slots))))
		return -ENOMEM;
	h->cap = cap;
	return 0;
}

#endif
