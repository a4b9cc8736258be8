/* SPDX-License-Identifier: MIT */
/* A table's database ids to the indexes of its rows (report/idmap.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "report/bigmem.h"
#include "report/idmap.h"

int idmap_alloc(struct idmap *map, size_t n)
{
	map->ids = big_malloc((n ? n : 1) * sizeof(*map->ids));
	return map->ids ? 0 : -ENOMEM;
}

void idmap_set(struct idmap *map, size_t i, int64_t id)
{
	size_t k;

	if (!map->sparse) {
		if (!i)
			map->base = id;
		if ((uint64_t)id == (uint64_t)map->base + i)
			return;
		for (k = 0; k < i; k++)
			map->ids[k] = (int64_t)((uint64_t)map->base + k);
		map->sparse = true;
	}
	map->ids[i] = id;
}

int idmap_finish(struct idmap *map, size_t n)
{
	int64_t min;
	size_t i;

	map->n = n;
	if (!map->sparse)
		return 0;
	min = map->max = map->ids[0];
	for (i = 1; i < n; i++) {
		if (map->ids[i] < map->ids[i - 1])
			map->unsorted = true;
		if (map->ids[i] < min)
			min = map->ids[i];
		if (map->ids[i] > map->max)
			map->max = map->ids[i];
	}
	if (min >= 0 && (uint64_t)map->max <= 4 * (uint64_t)n + 1024) {
		map->direct = big_malloc(((size_t)map->max + 1) * sizeof(int));
		if (!map->direct)
			return -ENOMEM;
		for (i = 0; i <= (size_t)map->max; i++)
			map->direct[i] = -1;
		for (i = 0; i < n; i++)
			map->direct[map->ids[i]] = (int)i;
	}
	return 0;
}

int idmap_find_sparse(const struct idmap *map, int64_t id)
{
	size_t lo = 0, hi = map->n;

	if (map->direct)
		return id >= 0 && id <= map->max ? map->direct[id] : -1;
	if (map->unsorted) {
		for (lo = 0; lo < map->n; lo++)
			if (map->ids[lo] == id)
				return (int)lo;
		return -1;
	}
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (map->ids[mid] < id)
			lo = mid + 1;
		else if (map->ids[mid] > id)
			hi = mid;
		else
			return (int)mid;
	}
	return -1;
}

void idmap_release(struct idmap *map)
{
	free(map->ids);
	free(map->direct);
	memset(map, 0, sizeof(*map));
}
