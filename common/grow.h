/* SPDX-License-Identifier: MIT */
/* One way to grow an array (doubling, the multiplication checked for overflow) and to free many. */
#ifndef PCOLLECT_COMMON_GROW_H
#define PCOLLECT_COMMON_GROW_H

#include <stddef.h>

/*
 * Grow the array *p (of *cap elements of el bytes) to hold at least need elements: the
 * capacity doubles (from 16) until it suffices. p is the address of the caller's pointer
 * (any object pointer type). Returns 0, or -ENOMEM (the allocation failed) or -EOVERFLOW
 * (need * el does not fit in size_t), leaving *p and *cap unchanged. Not for the agent's
 * signal handler: it calls realloc().
 */
int array_reserve(void *p, size_t *cap, size_t need, size_t el);

/* array_reserve() for an array variable and its capacity: GROW(v, n + 1, cap). */
#define GROW(arr, need, cap) array_reserve(&(arr), &(cap), (need), sizeof(*(arr)))

/* free() each of the n pointers of ptrs (NULL ones too). */
void free_all(void *const ptrs[], size_t n);

/* A release function's arrays freed in one statement: FREE_ALL(t->a, t->b, t->c). */
#define FREE_ALL(...)                                                                              \
	free_all((void *const[]){ __VA_ARGS__ },                                                   \
		 sizeof((void *const[]){ __VA_ARGS__ }) / sizeof(void *))

#endif
