/* SPDX-License-Identifier: MIT */
/* Big arrays (tree nodes, rows, cells) on huge pages: far fewer page faults than 4 KB pages. */
#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "report/bigmem.h"

#define HUGE_PAGE ((size_t)2 << 20)
/* Below this, zeroing a whole huge page costs more than the 4 KB faults it saves. */
#define BIG_MIN ((size_t)1 << 20)

void *big_malloc(size_t size)
{
	size_t rounded = (size + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
	void *p;

	if (size < BIG_MIN || rounded < size)
		return malloc(size);
	/* Aligned and rounded to whole huge pages, so that every page of it can be one. */
	if (posix_memalign(&p, HUGE_PAGE, rounded))
		return NULL;
	/* Advice only: where the kernel says no, the array keeps 4 KB pages. */
	madvise(p, rounded, MADV_HUGEPAGE);
	return p;
}

void *big_calloc(size_t n, size_t size)
{
	void *p;

	if (size && n > SIZE_MAX / size)
		return NULL;
	if (n * size < BIG_MIN)
		return calloc(n, size);
	p = big_malloc(n * size);
	if (p)
		memset(p, 0, n * size);
	return p;
}

void *big_realloc(void *p, size_t size)
{
	size_t have = p ? malloc_usable_size(p) : 0;
	void *q;

	if (size < BIG_MIN)
		return realloc(p, size);
	if (have >= size)
		return p;
	q = big_malloc(size);
	if (!q)
		return NULL;
	if (p) {
		memcpy(q, p, have);
		free(p);
	}
	return q;
}
