/* SPDX-License-Identifier: MIT */
/* Small string helpers the tools share (common/str.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/str.h"

char *str_join(const char *const *v, size_t n, const char *sep)
{
	size_t len = 1, at = 0, i;
	char *s;

	for (i = 0; i < n; i++)
		len += strlen(v[i]) + (i ? strlen(sep) : 0);
	s = malloc(len);
	if (!s)
		return NULL;
	s[0] = '\0';
	for (i = 0; i < n; i++)
		at += (size_t)snprintf(s + at, len - at, "%s%s", i ? sep : "", v[i]);
	return s;
}

long str_find_field(const void *rows, size_t n, size_t size, size_t offset, const char *name,
		    bool nocase)
{
	const char *row = rows;
	size_t i;

	for (i = 0; i < n; i++, row += size) {
		const char *s;

		memcpy(&s, row + offset, sizeof(s));
		if (!(nocase ? strcasecmp(s, name) : strcmp(s, name)))
			return (long)i;
	}
	return -1;
}
