/* SPDX-License-Identifier: MIT */
/* The bottom-up view: each hotspot, then the callers that led to it, with each path's share. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/cmp.h"
#include "common/sat.h"
#include "report/report-private.h"

/* Deeper caller chains are cut (a note says so) so recursion cannot exhaust the C stack. */
#define MAX_DEPTH 2048

/* A share of a hotspot's self values: the leaf it was taken at, and the node reached going up. */
struct entry {
	int cur;
	int func;
	int leaf;
};

/* A run of entries with the same function, and the sum of their leaves' values (v). */
struct run {
	size_t start, len;
	int func;
	int64_t *v; /* per metric */
};

struct bottomup {
	struct report *r;
	struct table *t;
	const struct cct *tree;
	int name, depth, group;
	struct metric_cols mc;
	struct function_cols fc;
	size_t pruned;
	bool cut;
};

static int by_func(const void *pa, const void *pb)
{
	const struct entry *a = pa, *b = pb;

	return CMP_THEN(CMP(a->func, b->func), CMP(a->cur, b->cur));
}

struct run_order {
	size_t k;
};

static int by_value(const void *pa, const void *pb, void *arg)
{
	const struct run *a = pa, *b = pb;
	size_t k = ((const struct run_order *)arg)->k;

	return CMP_THEN(CMP(b->v[k], a->v[k]), CMP(a->func, b->func));
}

static void runs_free(struct run *runs, size_t n, int64_t *vals)
{
	(void)n;
	free(vals);
	free(runs);
}

/* Sort e by function and cut it into runs, heaviest first. Caller frees with runs_free(). */
static int make_runs(struct bottomup *b, struct entry *e, size_t n, struct run **runs,
		     size_t *nruns, int64_t **vals)
{
	const struct cct *tree = b->tree;
	size_t i, k = 0, j, nm = tree->nm;
	struct run_order o = { (size_t)b->r->sort_metric };

	qsort(e, n, sizeof(*e), by_func);
	*runs = malloc((n + 1) * sizeof(**runs));
	*vals = calloc((n + 1) * nm, sizeof(**vals));
	if (!*runs || !*vals) {
		runs_free(*runs, 0, *vals);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		const int64_t *v = cct_self(tree, e[i].leaf);

		if (!i || e[i].func != e[i - 1].func) {
			(*runs)[k] = (struct run){ i, 0, e[i].func, *vals + k * nm };
			k++;
		}
		(*runs)[k - 1].len++;
		for (j = 0; j < nm; j++)
			(*runs)[k - 1].v[j] = sat_add_i64((*runs)[k - 1].v[j], v[j]);
	}
	qsort_r(*runs, k, sizeof(**runs), by_value, &o);
	*nruns = k;
	return 0;
}

static int emit(struct bottomup *b, struct entry *e, size_t n, const struct run *run, int depth)
{
	const struct cct_node *nodes = b->tree->nodes;
	struct entry *up;
	struct run *runs = NULL;
	int64_t *vals = NULL;
	size_t i, m = 0, nruns;
	size_t row;
	int rc = 0;

	row = table_add_row(b->t, depth);
	table_set_text_ref(b->t, row, b->name, report_function_name(b->r, run->func));
	report_set_metric_cols(b->r, b->t, row, &b->mc, run->v, NULL);
	report_set_function_cols(b->r, b->t, row, &b->fc, run->func);
	table_set_int(b->t, row, b->depth, depth);
	if (depth >= MAX_DEPTH) {
		b->cut = true;
		return 0;
	}
	/* One step up: each share moves to its caller; shares that reached the top end here. */
	up = malloc((n + 1) * sizeof(*up));
	if (!up)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		int p = nodes[e[i].cur].parent;

		if (p > 0 && nodes[p].func >= 0)
			up[m++] = (struct entry){ p, nodes[p].func, e[i].leaf };
	}
	rc = make_runs(b, up, m, &runs, &nruns, &vals);
	for (i = 0; !rc && i < nruns; i++) {
		if (!report_passes(b->r, runs[i].v)) {
			b->pruned += report_any_shown(b->r, runs[i].v);
			continue;
		}
		rc = emit(b, up + runs[i].start, runs[i].len, &runs[i], depth + 1);
	}
	runs_free(runs, nruns, vals);
	free(up);
	return rc;
}

/* The hotspots of the entries (all under one group, or every one) at depth. */
static int hotspots(struct bottomup *b, struct entry *e, size_t n, int depth, size_t *shown)
{
	const struct report *r = b->r;
	struct run *runs = NULL;
	int64_t *vals = NULL;
	size_t i, nruns = 0;
	int rc = make_runs(b, e, n, &runs, &nruns, &vals);

	for (i = 0; !rc && i < nruns; i++) {
		if (!report_passes(r, runs[i].v) ||
		    (r->o->limit > 0 && *shown >= (size_t)r->o->limit)) {
			b->pruned += report_any_shown(r, runs[i].v);
			continue;
		}
		(*shown)++;
		rc = emit(b, e + runs[i].start, runs[i].len, &runs[i], depth);
	}
	runs_free(runs, nruns, vals);
	return rc;
}

/*
 * With -group-by: a row per group node (its values are the group's total), then under the
 * groups of the last level their hotspots. top[node] is the node's group of that level.
 */
static int groups(struct bottomup *b, int g, int depth, struct entry *e, size_t n, const int *top,
		  size_t *shown)
{
	const struct cct *tree = b->tree;
	int *kids, rc = 0;
	size_t nkids, i, j, k;
	char label[512];

	if (depth == (int)b->r->nlevels) {
		struct entry *mine = malloc((n + 1) * sizeof(*mine));

		if (!mine)
			return -ENOMEM;
		for (i = 0, k = 0; i < n; i++)
			if (top[e[i].leaf] == g)
				mine[k++] = e[i];
		rc = hotspots(b, mine, k, depth, shown);
		free(mine);
		return rc;
	}
	if ((rc = report_sorted_children(b->r, tree, g, &kids, &nkids)))
		return rc;
	for (j = 0; !rc && j < nkids; j++) {
		const int64_t *total = cct_total(tree, kids[j]);
		size_t row;

		if (cct_group_of(&tree->nodes[kids[j]]) < 0)
			continue;
		if (!report_passes(b->r, total)) {
			b->pruned += report_any_shown(b->r, total);
			continue;
		}
		row = table_add_row(b->t, depth);
		table_set_text(b->t, row, b->name,
			       report_group_label(b->r, tree, kids[j], label, sizeof(label)));
		table_set_text_ref(b->t, row, b->group, report_group_kind(tree, kids[j]));
		report_set_metric_cols(b->r, b->t, row, &b->mc, total, NULL);
		table_set_int(b->t, row, b->depth, depth);
		rc = groups(b, kids[j], depth + 1, e, n, top, shown);
	}
	free(kids);
	return rc;
}

int view_bottomup(struct report *r, struct table *t)
{
	const struct cct *tree = &r->tree;
	const struct cct_node *nodes = tree->nodes;
	struct bottomup b = { .r = r, .t = t, .tree = tree, .group = -1 };
	struct entry *e;
	int *top = NULL;
	size_t i, n = 0, shown = 0;
	int rc;

	b.name = table_add_col(t, "Function Stack", TABLE_TEXT, TABLE_TREE | TABLE_NAME);
	report_add_metric_cols(r, t, &b.mc, MC_SELF);
	report_add_function_cols(t, &b.fc);
	if (r->nlevels)
		b.group = table_add_col(t, "Group", TABLE_TEXT, TABLE_MACHINE);
	b.depth = table_add_col(t, "Depth", TABLE_INT, TABLE_MACHINE);
	e = malloc(tree->n * sizeof(*e));
	if (!e)
		return -ENOMEM;
	for (i = 1; i < tree->n; i++)
		if (nodes[i].func >= 0 && cct_has_self(tree, (int)i))
			e[n++] = (struct entry){ (int)i, nodes[i].func, (int)i };
	if (r->nlevels) {
		/* Each node's group of the last level: group nodes sit at depths 1 to nlevels. */
		top = malloc(tree->n * sizeof(*top));
		if (!top) {
			free(e);
			return -ENOMEM;
		}
		top[0] = 0;
		for (i = 1; i < tree->n; i++)
			top[i] = nodes[i].depth == (int)r->nlevels ? (int)i : top[nodes[i].parent];
		rc = groups(&b, 0, 0, e, n, top, &shown);
	} else {
		rc = hotspots(&b, e, n, 0, &shown);
	}
	free(top);
	free(e);
	if (!r->nrecs)
		table_add_note(t, "no samples match the filters");
	else
		report_note_pruned(r, t, b.pruned, "functions or call paths");
	if (b.cut)
		table_add_note(t, "call paths deeper than %d callers are cut", MAX_DEPTH);
	return rc;
}
