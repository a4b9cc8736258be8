/* SPDX-License-Identifier: MIT */
/* Array growth with overflow checks, and freeing many arrays (common/grow.h). */
#include "common/grow.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int array_reserve(void *p, size_t *cap, size_t need, size_t el)
{
	size_t ncap;
	void *old, *np;

	if (need <= *cap)
		return 0;
	if (!el || need > SIZE_MAX / el)
		return -EOVERFLOW;
	ncap = *cap ? *cap : 16;
	while (ncap < need)
		ncap = ncap > SIZE_MAX / 2 ? need : ncap * 2;
	if (ncap > SIZE_MAX / el)
		ncap = need;
	/* The caller's pointer is read and written as bytes: it may be of any object type. */
	memcpy(&old, p, sizeof(old));
	np = realloc(old, ncap * el);
	if (!np)
		return -ENOMEM;
	memcpy(p, &np, sizeof(np));
	*cap = ncap;
	return 0;
}

void free_all(void *const ptrs[], size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(ptrs[i]);
}
