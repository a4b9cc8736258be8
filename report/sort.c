/* SPDX-License-Identifier: MIT */
/* The order of rows: a flat table by -sort-desc and -limit, a tree node's children. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/options.h"
#include "report/report-private.h"

int report_heavier_cmp(const void *pa, const void *pb, void *arg)
{
	const struct report_heavier *o = arg;
	int a = *(const int *)pa, b = *(const int *)pb;
	int64_t va = o->v[(size_t)a * o->stride + o->col];
	int64_t vb = o->v[(size_t)b * o->stride + o->col];

	if (va != vb)
		return va > vb ? -1 : 1;
	return a < b ? -1 : a > b;
}

int report_sorted_children(const struct report *r, const struct cct *tree, int node, int **out,
			   size_t *n)
{
	struct report_heavier o = {
		.v = r->sort_side == REPORT_SELF ? tree->self : tree->total,
		.stride = tree->nm,
		.col = (size_t)r->sort_metric,
	};
	const struct cct_node *nodes = tree->nodes;
	size_t k = 0;
	int c;

	for (c = nodes[node].first_child; c >= 0; c = nodes[c].next_sibling)
		k++;
	*n = k;
	*out = malloc((k + 1) * sizeof(int));
	if (!*out)
		return -ENOMEM;
	k = 0;
	for (c = nodes[node].first_child; c >= 0; c = nodes[c].next_sibling)
		(*out)[k++] = c;
	qsort_r(*out, k, sizeof(int), report_heavier_cmp, &o);
	return 0;
}

/* A usage error for an unknown column, naming the nearest of t's columns. */
static int unknown_column(const struct table *t, const char *name, const char *view)
{
	const char **names = malloc((t->ncols + 1) * sizeof(*names));
	const char *near = NULL;
	size_t i;
	int rc;

	for (i = 0; names && i < t->ncols; i++)
		names[i] = t->cols[i].name;
	if (names)
		near = options_nearest(name, names, t->ncols);
	if (near)
		rc = report_usage_error("unknown column '%s' for -sort-desc in the %s view "
					"(did you mean '%s'?)",
					name, view, near);
	else
		rc = report_usage_error("unknown column '%s' for -sort-desc in the %s view", name,
					view);
	free(names);
	return rc;
}

/* The column called name, ignoring case. */
static int find_col_nocase(const struct table *t, const char *name)
{
	size_t i;

	for (i = 0; i < t->ncols; i++)
		if (!strcasecmp(t->cols[i].name, name))
			return (int)i;
	return -1;
}

int report_sort_limit(const struct report *r, struct table *t, const char *default_col)
{
	const char *name = r->o->sort_desc ? r->o->sort_desc : default_col;
	int col = name ? find_col_nocase(t, name) : -1;
	char buf[512];

	/* A metric named alone: its self (in a difference report, the difference of it). */
	if (name && col < 0 && model_find_metric(&r->m, name) >= 0) {
		const char *mname = r->m.metrics[model_find_metric(&r->m, name)].name;

		snprintf(buf, sizeof(buf), "%s:Self", mname);
		if ((col = find_col_nocase(t, buf)) < 0) {
			snprintf(buf, sizeof(buf), "%s:Self:Difference", mname);
			col = find_col_nocase(t, buf);
		}
	}
	if (name && col < 0)
		return unknown_column(t, name, r->view->name);
	if (col >= 0) {
		/* Rows of equal self time in order of their total time (the sort is stable): a
		 * caller above the leaves under -limit, not whichever function came first. */
		const char *self = strstr(t->cols[col].name, ":Self");
		int total;

		if (self) {
			snprintf(buf, sizeof(buf), "%.*s:Total%s", (int)(self - t->cols[col].name),
				 t->cols[col].name, self + 5);
			if ((total = find_col_nocase(t, buf)) >= 0)
				table_sort(t, total);
		}
		table_sort(t, col);
	}
	if (r->o->limit > 0)
		table_truncate(t, (size_t)r->o->limit);
	return 0;
}
