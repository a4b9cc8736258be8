/* SPDX-License-Identifier: MIT */
/* Lexical path helpers (common/path.h). */
#include "common/path.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

char *path_join(const char *dir, const char *name)
{
	size_t a = strlen(dir), b = strlen(name);
	bool sep = a && dir[a - 1] != '/';
	char *p = malloc(a + sep + b + 1);

	if (p) {
		memcpy(p, dir, a);
		if (sep)
			p[a] = '/';
		memcpy(p + a + sep, name, b + 1);
	}
	return p;
}

void path_clean(char *p)
{
	bool abs = *p == '/';
	char *out = p, *in = p, *floor = p; /* floor: ".." never pops at or below it */

	if (!*p)
		return; /* no room for "." */
	if (abs)
		*out++ = '/', floor = out;
	while (*in) {
		char *seg;
		size_t n;

		while (*in == '/')
			in++;
		seg = in;
		while (*in && *in != '/')
			in++;
		n = (size_t)(in - seg);
		if (n == 0 || (n == 1 && seg[0] == '.'))
			continue;
		if (n == 2 && seg[0] == '.' && seg[1] == '.') {
			if (out > floor) {
				while (out > floor && *--out != '/')
					;
				continue;
			}
			if (abs)
				continue; /* "/.." is "/" */
			/* A leading "..": kept, and nothing before it can be popped any more. */
			if (out > p)
				*out++ = '/';
			*out++ = '.', *out++ = '.';
			floor = out;
			continue;
		}
		if (out > p && out[-1] != '/')
			*out++ = '/';
		memmove(out, seg, n);
		out += n;
	}
	if (out == p)
		*out++ = '.';
	*out = '\0';
}
