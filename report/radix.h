/* SPDX-License-Identifier: MIT */
/* A stable radix sort of (64-bit key, value) pairs: rows and keys by time, without qsort. */
#ifndef PCOLLECT_REPORT_RADIX_H
#define PCOLLECT_REPORT_RADIX_H

#include <stddef.h>
#include <stdint.h>

struct radix_item {
	uint64_t key;
	size_t val;
};

/*
 * Sort items by key, smallest first; equal keys keep their order. Byte by byte from the
 * lowest (passes where every key has the same byte are skipped): a few sequential sweeps
 * instead of n log n indirect comparisons. Returns 0 or -ENOMEM.
 */
int radix_sort(struct radix_item *items, size_t n);

/* Keys that sort a signed integer, or a double (not NaN), from the largest down. */
static inline uint64_t radix_key_desc_int(int64_t v)
{
	return ~((uint64_t)v ^ (uint64_t)1 << 63);
}

uint64_t radix_key_desc_double(double d);

#endif
