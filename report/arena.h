/* SPDX-License-Identifier: MIT */
/* Strings copied into big chunks freed together: a model's names, a table's cells. */
#ifndef PCOLLECT_REPORT_ARENA_H
#define PCOLLECT_REPORT_ARENA_H

#include <stddef.h>

struct arena_chunk;

/* Zeroed, an arena is empty, with chunks of ARENA_CHUNK bytes. */
struct arena {
	struct arena_chunk *chunks; /* the newest first */
	size_t chunk_size;          /* bytes of a chunk (a longer string gets one of its own); 0:
				       ARENA_CHUNK */
};

#define ARENA_CHUNK (64 * 1024)

/* Free every chunk: the arena is empty after (its chunk size kept). */
void arena_release(struct arena *a);

/* A copy of s that lives until arena_release(); NULL stays NULL, and NULL when memory runs
   out. */
char *arena_strdup(struct arena *a, const char *s);

#endif
