/* SPDX-License-Identifier: MIT */
/* An open-addressing hash index over an array the caller owns: finds an element's index. */
#ifndef PCOLLECT_COMMON_HASH_INDEX_H
#define PCOLLECT_COMMON_HASH_INDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/grow.h" /* array_reserve */
#include "common/hash.h" /* hash_mix, hash_combine, hash_bytes for the callers' keys */

/*
 * The index stores (hash, element index) pairs only; the caller keeps the elements and
 * compares keys with its own function. This keeps one implementation for strings, frames,
 * tree nodes and (thread, node) pairs.
 */
struct hash_slot {
	uint64_t hash;
	uint32_t idx1; /* element index + 1; 0 = empty */
};

struct hash_index {
	struct hash_slot *slots;
	size_t cap; /* power of two */
	size_t n;
};

/* Compare the key at ctx with element idx: true when equal. */
typedef bool (*hash_eq_fn)(const void *ctx, uint32_t idx);
/* Build a new element at elem from the key at ctx: 0, or a negative errno. */
typedef int (*hash_make_fn)(const void *ctx, void *elem);

void hash_index_init(struct hash_index *h);
void hash_index_release(struct hash_index *h);

/* The element index whose key equals (hash, eq), or -1. */
int64_t hash_index_find(const struct hash_index *h, uint64_t hash, hash_eq_fn eq, const void *ctx);
/* Record that element idx has hash (the caller checked it is not there). 0 or -ENOMEM. */
int hash_index_add(struct hash_index *h, uint64_t hash, uint32_t idx);

/*
 * Find or add by key: the index of the element of the caller's array whose key equals the
 * one at ctx (hash, compared by eq), else a new element appended and indexed. The array is
 * *arr (a pointer to the caller's array pointer, of any type), *n elements of el bytes,
 * capacity *cap, grown with array_reserve(). A new element is built by make(ctx, elem)
 * (NULL: zeroed) once the array and the index have room, so a failure adds nothing. Returns
 * the index, or a negative errno (-ENOMEM, -EOVERFLOW past UINT32_MAX elements, or make's).
 */
int64_t hash_index_get(struct hash_index *h, uint64_t hash, hash_eq_fn eq, hash_make_fn make,
		       const void *ctx, void *arr, size_t *n, size_t *cap, size_t el);

/* hash_index_get() on an array variable with its count and capacity variables. */
#define HASH_INDEX_GET(h, hash, eq, make, ctx, arr, n, cap)                                        \
	hash_index_get((h), (hash), (eq), (make), (ctx), &(arr), &(n), &(cap), sizeof(*(arr)))

#endif
