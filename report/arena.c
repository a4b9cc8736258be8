/* SPDX-License-Identifier: MIT */
/* Strings copied into big chunks freed together (report/arena.h). */
#include <stdlib.h>
#include <string.h>

#include "report/arena.h"

struct arena_chunk {
	struct arena_chunk *next;
	size_t used, size;
	char data[];
};

void arena_release(struct arena *a)
{
	struct arena_chunk *c, *next;

	for (c = a->chunks; c; c = next) {
		next = c->next;
		free(c);
	}
	a->chunks = NULL;
}

char *arena_strdup(struct arena *a, const char *s)
{
	struct arena_chunk *c = a->chunks;
	size_t n;

	if (!s)
		return NULL;
	n = strlen(s) + 1;
	if (!c || c->size - c->used < n) {
		size_t chunk = a->chunk_size ? a->chunk_size : ARENA_CHUNK;
		size_t size = n > chunk ? n : chunk;

		c = malloc(sizeof(*c) + size);
		if (!c)
			return NULL;
		c->used = 0;
		c->size = size;
		c->next = a->chunks;
		a->chunks = c;
	}
	memcpy(c->data + c->used, s, n);
	c->used += n;
	return c->data + c->used - n;
}
