/* SPDX-License-Identifier: MIT */
/* Binary search over sorted arrays: the one loop behind every "which range holds x" lookup. */
#ifndef PCOLLECT_FINALIZER_SORTED_H
#define PCOLLECT_FINALIZER_SORTED_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/*
 * How many elements of v[0..n) (size bytes each, sorted by the key at byte off of each) have
 * a key at most x: the last of them, at the index returned - 1, is the one that starts at or
 * before x (the range that may hold x); 0 when none does.
 */
#define SORTED_UPPER(name, type)                                                                   \
	static inline size_t name(const void *v, size_t n, size_t size, size_t off, type x)        \
	{                                                                                          \
		size_t lo = 0, hi = n;                                                             \
                                                                                                   \
		while (lo < hi) {                                                                  \
			size_t mid = lo + (hi - lo) / 2;                                           \
			type k;                                                                    \
                                                                                                   \
			memcpy(&k, (const char *)v + mid * size + off, sizeof(k));                 \
			if (k <= x)                                                                \
				lo = mid + 1;                                                      \
			else                                                                       \
				hi = mid;                                                          \
		}                                                                                  \
		return lo;                                                                         \
	}
SORTED_UPPER(sorted_upper_u64, uint64_t)
SORTED_UPPER(sorted_upper_i64, int64_t)
#undef SORTED_UPPER

/* The first index of the sorted v[0..n) whose value is at least x; n when none is. */
static inline size_t sorted_lower(const uint64_t *v, size_t n, uint64_t x)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid] < x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* qsort's order of uint64_t values, for the arrays these search. */
static inline int sorted_u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The index of x in the sorted v[0..n), or -1. */
static inline int64_t sorted_index(const uint64_t *v, size_t n, uint64_t x)
{
	size_t i = sorted_lower(v, n, x);

	return i < n && v[i] == x ? (int64_t)i : -1;
}

#endif
