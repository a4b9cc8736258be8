/* SPDX-License-Identifier: MIT */
/* The caller-callee view: for each function, who calls it and whom it calls, with values. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "report/callers.h"
#include "report/report-private.h"

/*
 * Values follow gprof: on a caller's row, Total is the value of the samples in which that
 * caller called the function (each sample once, however deep the recursion) and Self the
 * function's self value under that caller; on a callee's row, the same for the callee when
 * called by the function. A function's own row has its hotspots Self and Total. Both are
 * cct_walk() sums: per function, and per (caller, callee) edge.
 */
int callers_compute(struct callers *c, struct report *r)
{
	const struct cct *t = &r->tree;
	struct hash_index map;
	int *fkey = NULL, *ekey = NULL, *leaves = NULL;
	size_t i, nleaves = 0;
	int rc = 0;

	memset(c, 0, sizeof(*c));
	c->r = r;
	hash_index_init(&map);
	fkey = malloc(t->n * sizeof(int));
	ekey = malloc(t->n * sizeof(int));
	c->edges = malloc(t->n * sizeof(*c->edges));
	leaves = malloc(t->n * sizeof(int));
	if (!fkey || !ekey || !c->edges || !leaves) {
		rc = -ENOMEM;
		goto out;
	}
	fkey[0] = ekey[0] = -1;
	for (i = 1; i < t->n && !rc; i++) {
		const struct cct_node *n = &t->nodes[i];
		int caller = n->parent > 0 ? t->nodes[n->parent].func : -1, e;
		uint64_t key = (uint64_t)(uint32_t)caller << 32 | (uint32_t)n->func;

		fkey[i] = n->func;
		ekey[i] = -1;
		if (cct_has_self(t, (int)i))
			leaves[nleaves++] = (int)i;
		if (caller < 0 || n->func < 0)
			continue;
		e = key_index_get(&map, key);
		if (e < 0) {
			e = (int)c->nedges++;
			c->edges[e] = (struct edge){ caller, n->func };
			rc = key_index_add(&map, key, e);
		}
		ekey[i] = e;
	}
	if (!rc)
		rc = cct_walk_init(&c->funcs, t, fkey, r->m.nfunctions);
	if (!rc)
		rc = cct_walk_add(&c->funcs, leaves, nleaves, NULL);
	if (!rc)
		rc = cct_walk_init(&c->ewalk, t, ekey, c->nedges);
	if (!rc)
		rc = cct_walk_add(&c->ewalk, leaves, nleaves, NULL);
out:
	free(fkey);
	free(ekey);
	free(leaves);
	hash_index_release(&map);
	return rc;
}

void callers_release(struct callers *c)
{
	cct_walk_release(&c->funcs);
	cct_walk_release(&c->ewalk);
	free(c->edges);
	memset(c, 0, sizeof(*c));
}

int callers_index(struct callers *c, bool by_caller, int **idx, size_t **off)
{
	struct report_heavier o = {
		.v = c->r->sort_side == REPORT_SELF ? c->ewalk.self : c->ewalk.total,
		.stride = c->ewalk.nm,
		.col = (size_t)c->r->sort_metric,
	};
	size_t nf = c->r->m.nfunctions, i;
	size_t *pos;

	*idx = malloc((c->nedges + 1) * sizeof(int));
	*off = calloc(nf + 2, sizeof(size_t));
	pos = malloc((nf + 1) * sizeof(size_t));
	if (!*idx || !*off || !pos) {
		free(pos);
		return -ENOMEM;
	}
	for (i = 0; i < c->nedges; i++)
		(*off)[(by_caller ? c->edges[i].caller : c->edges[i].callee) + 1]++;
	for (i = 1; i <= nf + 1; i++)
		(*off)[i] += (*off)[i - 1];
	memcpy(pos, *off, (nf + 1) * sizeof(size_t));
	for (i = 0; i < c->nedges; i++)
		(*idx)[pos[by_caller ? c->edges[i].caller : c->edges[i].callee]++] = (int)i;
	for (i = 0; i < nf; i++)
		qsort_r(*idx + (*off)[i], (*off)[i + 1] - (*off)[i], sizeof(int),
			report_heavier_cmp, &o);
	free(pos);
	return 0;
}

struct cols {
	int name, relation, index;
	struct metric_cols mc;
	struct function_cols fc;
};

static void row_set(struct callers *c, struct table *t, const struct cols *k, int depth,
		    const char *relation, int func, const int64_t *total, const int64_t *self,
		    int index)
{
	size_t row = table_add_row(t, depth);

	table_set_text_ref(t, row, k->name, report_function_name(c->r, func));
	table_set_text_ref(t, row, k->relation, relation);
	report_set_metric_cols(c->r, t, row, &k->mc, self, total);
	report_set_function_cols(c->r, t, row, &k->fc, func);
	table_set_int(t, row, k->index, index);
}

struct index {
	int *by_callee, *by_caller;
	size_t *callee_off, *caller_off;
};

/* The edges into func (callers) or out of it (callees), indented rows, those with a value. */
static void edge_rows(struct callers *c, struct table *t, const struct cols *k, int func, int index,
		      const int *by, const size_t *off, bool callees)
{
	size_t i, nm = c->ewalk.nm;

	for (i = off[func]; i < off[func + 1]; i++) {
		int e = by[i];

		if (report_any_shown(c->r, &c->ewalk.total[(size_t)e * nm]))
			row_set(c, t, k, 1, callees ? "callee" : "caller",
				callees ? c->edges[e].callee : c->edges[e].caller,
				&c->ewalk.total[(size_t)e * nm], &c->ewalk.self[(size_t)e * nm],
				index);
	}
}

/* One block: callers (indented), the function, callees (indented). */
static void block(struct callers *c, struct table *t, const struct cols *k, int func, int index,
		  const struct index *ix)
{
	size_t nm = c->ewalk.nm;

	edge_rows(c, t, k, func, index, ix->by_callee, ix->callee_off, false);
	row_set(c, t, k, 0, "function", func, &c->funcs.total[(size_t)func * nm],
		&c->funcs.self[(size_t)func * nm], index);
	edge_rows(c, t, k, func, index, ix->by_caller, ix->caller_off, true);
}

/* The functions of the view, heaviest first: -function's, or every one with a value. */
int callers_functions(struct callers *c, int **funcs, size_t *n)
{
	struct report *r = c->r;
	struct report_heavier o = {
		.v = r->sort_side == REPORT_SELF ? c->funcs.self : c->funcs.total,
		.stride = c->funcs.nm,
		.col = (size_t)r->sort_metric,
	};
	size_t i;
	int rc;

	*n = 0;
	if (r->o->function) {
		rc = report_find_functions(r, r->o->function, true, "-function", funcs, n);
		if (rc)
			return rc;
	} else {
		*funcs = malloc((r->m.nfunctions + 1) * sizeof(int));
		if (!*funcs)
			return -ENOMEM;
		for (i = 0; i < r->m.nfunctions; i++)
			if (report_any_shown(r, &c->funcs.total[i * c->funcs.nm]))
				(*funcs)[(*n)++] = (int)i;
	}
	qsort_r(*funcs, *n, sizeof(int), report_heavier_cmp, &o);
	return 0;
}

int view_callers(struct report *r, struct table *t)
{
	struct callers c;
	struct cols k;
	struct index ix = { 0 };
	int *funcs = NULL;
	size_t nfuncs = 0, i, shown = 0, pruned = 0, nm;
	int rc;

	k.name = table_add_col(t, "Function", TABLE_TEXT, TABLE_TREE | TABLE_NAME);
	k.relation = table_add_col(t, "Relation", TABLE_TEXT, 0);
	report_add_metric_cols(r, t, &k.mc, MC_TOTAL | MC_SELF | MC_TOTAL_FIRST);
	report_add_function_cols(t, &k.fc);
	k.index = table_add_col(t, "Index", TABLE_INT, TABLE_MACHINE);
	rc = callers_compute(&c, r);
	nm = c.funcs.nm;
	if (!rc)
		rc = callers_functions(&c, &funcs, &nfuncs);
	if (!rc)
		rc = callers_index(&c, false, &ix.by_callee, &ix.callee_off);
	if (!rc)
		rc = callers_index(&c, true, &ix.by_caller, &ix.caller_off);
	for (i = 0; !rc && i < nfuncs; i++) {
		const int64_t *total = &c.funcs.total[(size_t)funcs[i] * nm];

		if ((!r->o->function && !report_passes(r, total)) ||
		    (r->o->limit > 0 && shown >= (size_t)r->o->limit)) {
			pruned++;
			continue;
		}
		if (!report_any_shown(r, total))
			continue;
		if (shown++)
			table_add_separator(t);
		block(&c, t, &k, funcs[i], (int)shown, &ix);
	}
	if (!rc && r->o->function && !shown)
		table_add_note(t, "function '%s' has no samples in this report", r->o->function);
	else if (!rc && !r->nrecs)
		table_add_note(t, "no samples match the filters");
	else if (!rc)
		report_note_pruned(r, t, pruned, "functions");
	free(ix.by_callee);
	free(ix.by_caller);
	free(ix.callee_off);
	free(ix.caller_off);
	free(funcs);
	callers_release(&c);
	return rc;
}
