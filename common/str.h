/* SPDX-License-Identifier: MIT */
/* Small string helpers the tools share. */
#ifndef PCOLLECT_COMMON_STR_H
#define PCOLLECT_COMMON_STR_H

#include <stdbool.h>
#include <stddef.h>

/* The n strings of v joined by sep: a new string (caller frees), NULL when out of memory. */
char *str_join(const char *const *v, size_t n, const char *sep);

/*
 * The index of the first of the n records of rows (size bytes each) whose string at offset
 * (a char pointer field: offsetof()) is name, ignoring case when nocase; -1 when none is.
 */
long str_find_field(const void *rows, size_t n, size_t size, size_t offset, const char *name,
		    bool nocase);

#endif
