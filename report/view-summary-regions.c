/* SPDX-License-Identifier: MIT */
/* The summary's Regions section: the time of each region the program named, nested included. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
#include "report/report-private.h"
#include "report/summary-private.h"

/*
 * Like PyOP2's timed regions: a row per region with the sort metric's value inside it
 * (regions nested in it included), the regions in the order of their names so that "solve"
 * stands above "solve/assemble", then [no region] for the samples outside every region.
 * A name that was only ever an outer level (every sample of "solve" in one of its inner
 * regions) has its row too.
 */

static int path_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* True when path is prefix or a region inside it. */
static bool within(const char *path, const char *prefix)
{
	size_t n = strlen(prefix);

	return !strncmp(path, prefix, n) && (path[n] == '\0' || path[n] == '/');
}

/* Every region path and each of its outer levels, sorted, once each (owned strings). */
static char **all_levels(const struct model *m, size_t *out)
{
	char **v = NULL;
	size_t n = 0, cap = 0, i, k;

	if (GROW(v, 1, cap))
		return NULL;
	for (i = 0; i < m->nregions; i++) {
		const char *p = m->regions[i], *slash;

		for (slash = p;; slash++) {
			slash = strchr(slash, '/');
			if (GROW(v, n + 1, cap))
				goto fail;
			v[n] = strndup(p, slash ? (size_t)(slash - p) : strlen(p));
			if (!v[n++])
				goto fail;
			if (!slash)
				break;
		}
	}
	qsort(v, n, sizeof(*v), path_cmp);
	for (i = k = 0; i < n; i++) {
		if (k && !strcmp(v[k - 1], v[i])) {
			free(v[i]);
			continue;
		}
		v[k++] = v[i];
	}
	*out = k;
	return v;
fail:
	while (n-- > 0)
		free(v[n]);
	free(v);
	return NULL;
}

int summary_regions(struct summary *s)
{
	struct report *r = s->r;
	const struct model *m = &r->m;
	int k = r->sort_metric;
	int64_t *leaf, outside = 0;
	size_t i, j, n = 0;
	char **levels;

	if (!m->nregions)
		return 0;
	leaf = calloc(m->nregions, sizeof(*leaf));
	levels = all_levels(m, &n);
	if (!leaf || !levels) {
		free(leaf);
		free(levels);
		return -ENOMEM;
	}
	for (i = 0; i < r->nrecs; i++) {
		const struct model_sample *smp = report_sample(r, &r->recs[i]);
		int region;

		if (smp->metric != k)
			continue;
		region = report_sample_region(r, smp);
		if (region >= 0)
			leaf[region] += smp->value;
		else
			outside += smp->value;
	}
	for (i = 0; i < n; i++) {
		int64_t v = 0;

		for (j = 0; j < m->nregions; j++)
			if (within(m->regions[j], levels[i]))
				v += leaf[j];
		summary_row_value(s, "Regions", levels[i], k, v, true);
		free(levels[i]);
	}
	summary_row_value(s, "Regions", model_region_label(m, -1), k, outside, true);
	free(levels);
	free(leaf);
	return 0;
}
