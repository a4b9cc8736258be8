/* SPDX-License-Identifier: MIT */
/* A table's database ids to the indexes of its rows in the model's array. */
#ifndef PCOLLECT_REPORT_IDMAP_H
#define PCOLLECT_REPORT_IDMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Rows are read in id order, so ids are sorted; as written by pfinalize they are also dense
 * (row i has id first + i), and then no id is stored at all. A table read in another order
 * (metrics, in display order) has few rows: its ids are found by their value, or one by one.
 * Zeroed, a map has no row.
 */
struct idmap {
	int64_t *ids; /* per row, filled only once the ids stop being dense */
	size_t n;
	int64_t base; /* the first row's id */
	bool sparse;
	bool unsorted; /* sparse ids out of order and too far apart for direct: a scan */
	int *direct;   /* sparse: id -> index when the ids are close enough, else NULL */
	int64_t max;
};

/* Room for n rows; the array is touched only if the ids turn out sparse. 0 or -ENOMEM. */
int idmap_alloc(struct idmap *map, size_t n);
/* Row i (rows in order, each once, i below what idmap_alloc() made room for) has id. */
void idmap_set(struct idmap *map, size_t i, int64_t id);
/* The n rows are set: ready for idmap_find(). 0 or -ENOMEM. */
int idmap_finish(struct idmap *map, size_t n);
/* idmap_find() of sparse ids. */
int idmap_find_sparse(const struct idmap *map, int64_t id);

/* The index of the row with id, or -1. Inline: a load finds an id per reference. */
static inline int idmap_find(const struct idmap *map, int64_t id)
{
	uint64_t k = (uint64_t)id - (uint64_t)map->base;

	if (map->sparse)
		return idmap_find_sparse(map, id);
	return k < map->n ? (int)k : -1;
}

void idmap_release(struct idmap *map);

#endif
