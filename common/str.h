/* SPDX-License-Identifier: MIT */
/* Small string helpers the tools share. */
#ifndef PCOLLECT_COMMON_STR_H
#define PCOLLECT_COMMON_STR_H

#include <stddef.h>

/* The n strings of v joined by sep: a new string (caller frees), NULL when out of memory. */
char *str_join(const char *const *v, size_t n, const char *sep);

#endif
