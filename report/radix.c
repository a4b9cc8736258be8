/* SPDX-License-Identifier: MIT */
/* A stable radix sort of (64-bit key, value) pairs: rows and keys by time, without qsort. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "report/bigmem.h"
#include "report/radix.h"

uint64_t radix_key_desc_double(double d)
{
	uint64_t u;

	if (d == 0)
		d = 0; /* -0.0 and 0.0 are equal */
	memcpy(&u, &d, sizeof(u));
	/* Ascending order of doubles as unsigned integers, then reversed. */
	u = u >> 63 ? ~u : u ^ (uint64_t)1 << 63;
	return ~u;
}

int radix_sort(struct radix_item *items, size_t n)
{
	size_t count[8][256], i;
	struct radix_item *tmp, *src = items, *dst;
	int pass;

	if (n < 2)
		return 0;
	memset(count, 0, sizeof(count));
	for (i = 0; i < n; i++)
		for (pass = 0; pass < 8; pass++)
			count[pass][items[i].key >> (8 * pass) & 0xff]++;
	tmp = big_malloc(n * sizeof(*tmp));
	if (!tmp)
		return -ENOMEM;
	dst = tmp;
	for (pass = 0; pass < 8; pass++) {
		size_t *c = count[pass], sum = 0, b;

		if (c[src[0].key >> (8 * pass) & 0xff] == n)
			continue; /* every key has this byte */
		for (b = 0; b < 256; b++) {
			size_t k = c[b];

			c[b] = sum;
			sum += k;
		}
		for (i = 0; i < n; i++)
			dst[c[src[i].key >> (8 * pass) & 0xff]++] = src[i];
		src = dst;
		dst = src == items ? tmp : items;
	}
	if (src != items)
		memcpy(items, src, n * sizeof(*items));
	free(tmp);
	return 0;
}
