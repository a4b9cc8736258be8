/* SPDX-License-Identifier: MIT */
/* The caller-callee view: for each function, who calls it and whom it calls, with time. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "report/report-private.h"

/*
 * Times follow gprof: on a caller's row, Total is the time of the samples in which that
 * caller called the function (each sample once, however deep the recursion) and Self the
 * function's self time under that caller; on a callee's row, the same for the callee when
 * called by the function. A function's own row has its hotspots Self and Total.
 */
struct edge {
	int caller, callee;
	int64_t self_ns, total_ns;
};

struct callers {
	struct report *r;
	int *node_edge;	 /* per node: the edge from its parent's function, -1 at depth 1 */
	struct edge *edges;
	size_t nedges;
	int64_t *fself, *ftotal; /* per function */
	uint32_t *fstamp, *estamp, walk;
};

static int edges_build(struct callers *c)
{
	const struct cct *t = &c->r->tree;
	struct keymap map;
	size_t i;
	int rc = 0;

	keymap_init(&map);
	c->node_edge = malloc(t->n * sizeof(int));
	c->edges = malloc(t->n * sizeof(*c->edges));
	if (!c->node_edge || !c->edges)
		return -ENOMEM;
	c->node_edge[0] = -1;
	for (i = 1; i < t->n && !rc; i++) {
		const struct cct_node *n = &t->nodes[i];
		int caller = n->parent > 0 ? t->nodes[n->parent].func : -1, e;
		uint64_t key = (uint64_t)(uint32_t)caller << 32 | (uint32_t)n->func;

		if (caller < 0) {
			c->node_edge[i] = -1;
			continue;
		}
		e = keymap_get(&map, key);
		if (e < 0) {
			e = (int)c->nedges++;
			c->edges[e] = (struct edge){ caller, n->func, 0, 0 };
			rc = keymap_put(&map, key, e);
		}
		c->node_edge[i] = e;
	}
	keymap_release(&map);
	return rc;
}

static int compute(struct callers *c)
{
	const struct cct *t = &c->r->tree;
	size_t nf = c->r->m.nfunctions + 1, i;
	int rc = edges_build(c);

	if (rc)
		return rc;
	c->fself = calloc(nf, sizeof(int64_t));
	c->ftotal = calloc(nf, sizeof(int64_t));
	c->fstamp = calloc(nf, sizeof(uint32_t));
	c->estamp = calloc(c->nedges + 1, sizeof(uint32_t));
	if (!c->fself || !c->ftotal || !c->fstamp || !c->estamp)
		return -ENOMEM;
	for (i = 1; i < t->n; i++) {
		int64_t ns = t->nodes[i].self_ns;
		int u;

		if (!ns)
			continue;
		c->walk++;
		c->fself[t->nodes[i].func] += ns;
		if (c->node_edge[i] >= 0)
			c->edges[c->node_edge[i]].self_ns += ns;
		for (u = (int)i; u > 0; u = t->nodes[u].parent) {
			int f = t->nodes[u].func, e = c->node_edge[u];

			if (c->fstamp[f] != c->walk) {
				c->fstamp[f] = c->walk;
				c->ftotal[f] += ns;
			}
			if (e >= 0 && c->estamp[e] != c->walk) {
				c->estamp[e] = c->walk;
				c->edges[e].total_ns += ns;
			}
		}
	}
	return 0;
}

struct cols {
	int name, relation, total, totalp, self, selfp, index;
	struct function_cols fc;
};

static void row_set(struct callers *c, struct table *t, const struct cols *k, int depth,
		    const char *relation, int func, int64_t total, int64_t self, int index)
{
	size_t row = table_add_row(t, depth);

	table_set_text_ref(t, row, k->name, c->r->m.functions[func].name);
	table_set_text_ref(t, row, k->relation, relation);
	table_set_time(t, row, k->total, total);
	table_set_pct(t, row, k->totalp, report_pct(c->r, total));
	table_set_time(t, row, k->self, self);
	table_set_pct(t, row, k->selfp, report_pct(c->r, self));
	report_set_function_cols(c->r, t, row, &k->fc, func);
	table_set_int(t, row, k->index, index);
}

static const struct edge *cmp_edges;

static int edge_heavier(const void *pa, const void *pb)
{
	const struct edge *a = &cmp_edges[*(const int *)pa], *b = &cmp_edges[*(const int *)pb];

	if (a->total_ns != b->total_ns)
		return a->total_ns > b->total_ns ? -1 : 1;
	return *(const int *)pa - *(const int *)pb;
}

static const int64_t *cmp_total;

static int func_heavier(const void *pa, const void *pb)
{
	int a = *(const int *)pa, b = *(const int *)pb;

	if (cmp_total[a] != cmp_total[b])
		return cmp_total[a] > cmp_total[b] ? -1 : 1;
	return a - b;
}

/* Edge indexes grouped by caller (or callee), each group heaviest first: off[f]..off[f+1]. */
static int edges_index(struct callers *c, bool by_caller, int **idx, size_t **off)
{
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
	cmp_edges = c->edges;
	for (i = 0; i < nf; i++)
		qsort(*idx + (*off)[i], (*off)[i + 1] - (*off)[i], sizeof(int), edge_heavier);
	free(pos);
	return 0;
}

struct index {
	int *by_callee, *by_caller;
	size_t *callee_off, *caller_off;
};

/* One block: callers (indented), the function, callees (indented). */
static void block(struct callers *c, struct table *t, const struct cols *k, int func, int index,
		  const struct index *ix)
{
	size_t i;

	for (i = ix->callee_off[func]; i < ix->callee_off[func + 1]; i++) {
		const struct edge *e = &c->edges[ix->by_callee[i]];

		if (e->total_ns)
			row_set(c, t, k, 1, "caller", e->caller, e->total_ns, e->self_ns, index);
	}
	row_set(c, t, k, 0, "function", func, c->ftotal[func], c->fself[func], index);
	for (i = ix->caller_off[func]; i < ix->caller_off[func + 1]; i++) {
		const struct edge *e = &c->edges[ix->by_caller[i]];

		if (e->total_ns)
			row_set(c, t, k, 1, "callee", e->callee, e->total_ns, e->self_ns, index);
	}
}

int view_callers(struct report *r, struct table *t)
{
	struct callers c = { .r = r };
	struct cols k;
	struct index ix = { 0 };
	int *funcs = NULL;
	size_t nfuncs = 0, i, shown = 0, pruned = 0;
	int64_t min_ns = (int64_t)((double)r->total_ns * r->o->threshold / 100.0);
	int rc;

	k.name = table_add_col(t, "Function", TABLE_TEXT, TABLE_TREE | TABLE_SHRINK);
	k.relation = table_add_col(t, "Relation", TABLE_TEXT, 0);
	k.total = table_add_col(t, "CPU Time:Total", TABLE_TIME, 0);
	k.totalp = table_add_col(t, "CPU Time:Total %", TABLE_PCT, 0);
	k.self = table_add_col(t, "CPU Time:Self", TABLE_TIME, 0);
	k.selfp = table_add_col(t, "CPU Time:Self %", TABLE_PCT, 0);
	report_add_function_cols(t, &k.fc);
	k.index = table_add_col(t, "Index", TABLE_INT, TABLE_MACHINE);
	if (r->o->sort_desc && strcmp(r->o->sort_desc, "CPU Time:Total"))
		return report_usage_error("the caller-callee view sorts by 'CPU Time:Total' only, "
					  "not '%s'", r->o->sort_desc);
	rc = compute(&c);
	if (!rc && r->o->function) {
		rc = report_find_functions(r, r->o->function, &funcs, &nfuncs);
		min_ns = 0;
	} else if (!rc) {
		funcs = malloc((r->m.nfunctions + 1) * sizeof(int));
		if (!funcs)
			rc = -ENOMEM;
		for (i = 0; funcs && i < r->m.nfunctions; i++)
			if (c.ftotal[i])
				funcs[nfuncs++] = (int)i;
	}
	if (!rc)
		rc = edges_index(&c, false, &ix.by_callee, &ix.callee_off);
	if (!rc)
		rc = edges_index(&c, true, &ix.by_caller, &ix.caller_off);
	if (!rc) {
		cmp_total = c.ftotal;
		qsort(funcs, nfuncs, sizeof(int), func_heavier);
	}
	for (i = 0; !rc && i < nfuncs; i++) {
		if ((!r->o->function && c.ftotal[funcs[i]] < min_ns) ||
		    (r->o->limit > 0 && shown >= (size_t)r->o->limit)) {
			pruned++;
			continue;
		}
		if (shown++)
			table_add_separator(t);
		block(&c, t, &k, funcs[i], (int)shown, &ix);
	}
	if (!rc && r->o->function && !shown)
		table_add_note(t, "function '%s' has no samples in this report", r->o->function);
	else if (!rc && !r->nrecs)
		table_add_note(t, "no samples match the filters");
	else if (!rc && pruned)
		table_add_note(t, "%zu functions below %.3g%% of the total not shown "
			       "(-threshold 0 shows all)", pruned, r->o->threshold);
	free(ix.by_callee);
	free(ix.by_caller);
	free(ix.callee_off);
	free(ix.caller_off);
	free(funcs);
	free(c.node_edge);
	free(c.edges);
	free(c.fself);
	free(c.ftotal);
	free(c.fstamp);
	free(c.estamp);
	return rc;
}
