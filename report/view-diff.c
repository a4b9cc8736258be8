/* SPDX-License-Identifier: MIT */
/* Difference reports of two results, matched by function and module, metric by metric name. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/cmp.h"
#include "common/grow.h"
#include "common/hash-index.h"
#include "report/key-index.h"
#include "common/sat.h"
#include "report/callers.h"
#include "report/report-private.h"

#define MAX_DEPTH 2048

/* Functions of both results get a common id from their name and module name. */
struct name_pair {
	const char *name, *module;
};

struct names {
	struct hash_index index;
	struct name_pair *v;
	size_t n, cap;
};

struct name_key {
	const struct names *ns;
	struct name_pair p;
};

static bool name_eq(const void *ctx, uint32_t i)
{
	const struct name_key *k = ctx;

	return !strcmp(k->ns->v[i].name, k->p.name) && !strcmp(k->ns->v[i].module, k->p.module);
}

static int name_make(const void *ctx, void *elem)
{
	*(struct name_pair *)elem = ((const struct name_key *)ctx)->p;
	return 0;
}

static int names_id(struct names *ns, const char *name, const char *module)
{
	struct name_key k = { ns, { name, module } };
	uint64_t h =
		hash_combine(hash_bytes(name, strlen(name)), hash_bytes(module, strlen(module)));
	int64_t id = HASH_INDEX_GET(&ns->index, h, name_eq, name_make, &k, ns->v, ns->n, ns->cap);

	return id < 0 ? -1 : (int)id;
}

static void names_release(struct names *ns)
{
	hash_index_release(&ns->index);
	free(ns->v);
}

/* Per function of r: its common id. */
static int map_functions(struct names *ns, struct report *r, int **gid)
{
	size_t i;

	*gid = malloc((r->m.nfunctions + 1) * sizeof(int));
	if (!*gid)
		return -ENOMEM;
	for (i = 0; i < r->m.nfunctions; i++)
		if (((*gid)[i] = names_id(ns, report_function_name(r, (int)i),
					  report_module_name(r, (int)i))) < 0)
			return -ENOMEM;
	return 0;
}

/*
 * The columns of a difference: per shown metric (of the first result), per side (Self,
 * Total), "Result 1", "Result 2", "Difference"; and where each shown metric is in the second
 * result (-1: it has no such metric, its values are 0).
 */
struct diff_cols {
	int v[REPORT_MAX_METRICS][2][3];
	int mb[REPORT_MAX_METRICS];
};

static void add_diff_cols(const struct report *a, const struct report *b, struct table *t,
			  struct diff_cols *c, unsigned flags)
{
	static const char *const which[] = { "Self", "Total" };
	static const char *const part[] = { "Result 1", "Result 2", "Difference" };
	size_t i;
	int k, p;

	for (i = 0; i < a->nshown; i++) {
		const struct model_metric *mt = &a->m.metrics[a->shown[i]];

		c->mb[i] = model_find_metric(&b->m, mt->name);
		for (k = 0; k < 2; k++) {
			int side = flags & MC_TOTAL_FIRST ? 1 - k : k;

			c->v[i][side][0] = c->v[i][side][1] = c->v[i][side][2] = -1;
			if (!(flags & (side ? MC_TOTAL : MC_SELF)))
				continue;
			for (p = 0; p < 3; p++) {
				char name[512];

				snprintf(name, sizeof(name), "%s:%s:%s", mt->name, which[side],
					 part[p]);
				c->v[i][side][p] =
					table_add_col(t, name, report_metric_type(mt), 0);
			}
		}
	}
}

/* Values va (per metric of a) and vb (of b; NULL: none) on side (0 self, 1 total). */
static void set_diff(const struct report *a, struct table *t, size_t row, const struct diff_cols *c,
		     int side, const int64_t *va, const int64_t *vb)
{
	size_t i;

	for (i = 0; i < a->nshown; i++) {
		int64_t x = va ? va[a->shown[i]] : 0, y = vb && c->mb[i] >= 0 ? vb[c->mb[i]] : 0;

		if (c->v[i][side][0] < 0)
			continue;
		table_set_int(t, row, c->v[i][side][0], x);
		table_set_int(t, row, c->v[i][side][1], y);
		table_set_int(t, row, c->v[i][side][2], sat_sub_i64(y, x));
	}
}

/* "Result 1: DIR (CPU Time 1.000s); Result 2: ..." */
static void note_results(struct table *t, const struct report *a, const struct report *b)
{
	table_add_note(t, "Result 1: %s; Result 2: %s; Difference = Result 2 - Result 1", a->dir,
		       b->dir);
}

/* Difference reports take no grouping but their own. */
static int no_groups(const struct report *a)
{
	if (a->nlevels)
		return report_usage_error("a difference report of the %s view takes no -group-by",
					  a->view->name);
	return 0;
}

/* Self and total per common id of r's functions: a cct_walk keyed by common id. */
static int function_values(struct report *r, const int *gid, size_t nids, struct cct_walk *w)
{
	const struct cct *t = &r->tree;
	int *key = malloc((t->n + 1) * sizeof(int)), *leaves = malloc((t->n + 1) * sizeof(int));
	size_t i, n = 0;
	int rc = -ENOMEM;

	if (!key || !leaves)
		goto out;
	key[0] = -1;
	for (i = 1; i < t->n; i++) {
		key[i] = t->nodes[i].func >= 0 ? gid[t->nodes[i].func] : -1;
		if (cct_has_self(t, (int)i))
			leaves[n++] = (int)i;
	}
	rc = cct_walk_init(w, t, key, nids);
	if (!rc)
		rc = cct_walk_add(w, leaves, n, NULL);
out:
	free(key);
	free(leaves);
	return rc;
}

int view_hotspots_diff(struct report *a, struct report *b, struct table *t)
{
	struct names ns = { 0 };
	struct cct_walk w[2];
	int *ga = NULL, *gb = NULL, cname, cmod, rc;
	struct diff_cols dc;
	char sort[512];
	size_t i, nma = a->m.nmetrics, nmb = b->m.nmetrics;

	memset(w, 0, sizeof(w));
	if (a->o->group_by && strcmp(a->o->group_by, "function"))
		return report_usage_error("a difference report groups by function only");
	if (a->o->function)
		return report_usage_error("a difference report of the hotspots view takes no "
					  "-function");
	cname = table_add_col(t, "Function", TABLE_TEXT, TABLE_NAME);
	add_diff_cols(a, b, t, &dc, MC_SELF | MC_TOTAL);
	cmod = table_add_col(t, "Module", TABLE_TEXT, TABLE_SHRINK);
	rc = map_functions(&ns, a, &ga);
	if (!rc)
		rc = map_functions(&ns, b, &gb);
	if (!rc)
		rc = function_values(a, ga, ns.n, &w[0]);
	if (!rc)
		rc = function_values(b, gb, ns.n, &w[1]);
	for (i = 0; !rc && i < ns.n; i++) {
		const int64_t *sa = &w[0].self[i * nma], *ta = &w[0].total[i * nma];
		const int64_t *sb = &w[1].self[i * nmb], *tb = &w[1].total[i * nmb];
		size_t row;

		if (!w[0].is_touched[i] && !w[1].is_touched[i])
			continue;
		row = table_add_row(t, 0);
		table_set_text(t, row, cname, ns.v[i].name);
		set_diff(a, t, row, &dc, 0, sa, sb);
		set_diff(a, t, row, &dc, 1, ta, tb);
		table_set_text(t, row, cmod, ns.v[i].module);
	}
	snprintf(sort, sizeof(sort), "%s:Self:Difference", a->m.metrics[a->sort_metric].name);
	if (!rc)
		rc = report_sort_limit(a, t, sort);
	if (!rc)
		note_results(t, a, b);
	cct_walk_release(&w[0]);
	cct_walk_release(&w[1]);
	free(ga);
	free(gb);
	names_release(&ns);
	return rc;
}

/* Two trees merged along equal function paths (top-down, and bottom-up's callers' trees). */
struct merge {
	struct report *r[2];
	const struct cct *tree[2];
	int *gid[2];
	struct table *t;
	struct diff_cols dc;
	int cname, cmod, cdepth;
	unsigned sides; /* MC_SELF, MC_TOTAL: which values rows show */
	size_t pruned, rows;
	bool cut;
};

struct pair {
	int g;
	int node[2];
	int64_t weight;
};

static int pair_by_gid(const void *pa, const void *pb)
{
	const struct pair *a = pa, *b = pb;

	return CMP(a->g, b->g);
}

static int pair_heavier(const void *pa, const void *pb)
{
	const struct pair *a = pa, *b = pb;

	return CMP_THEN(CMP(b->weight, a->weight), CMP(a->g, b->g));
}

static const int64_t *node_vals(const struct merge *mg, int side, int node, bool total)
{
	if (node < 0)
		return NULL;
	return total ? cct_total(mg->tree[side], node) : cct_self(mg->tree[side], node);
}

/* The sort metric's total on a side (for ordering siblings). */
static int64_t sort_value(const struct merge *mg, int side, int node)
{
	const struct report *a = mg->r[0];
	int k = side ? model_find_metric(&mg->r[1]->m, a->m.metrics[a->sort_metric].name)
		     : a->sort_metric;

	return node >= 0 && k >= 0 ? cct_total(mg->tree[side], node)[k] : 0;
}

static bool merged_passes(const struct merge *mg, const struct pair *p, size_t *pruned)
{
	bool any = false, pass = false;
	int side;

	for (side = 0; side < 2; side++) {
		const int64_t *v = node_vals(mg, side, p->node[side], true);

		if (!v)
			continue;
		any |= report_any_shown(mg->r[side], v);
		pass |= report_passes(mg->r[side], v);
	}
	if (!pass && any)
		(*pruned)++;
	return pass;
}

static int merge_node(struct merge *mg, int na, int nb, int depth)
{
	struct pair *kids;
	size_t n = 0, i, j, m;
	int side, rc = 0;

	if (depth >= MAX_DEPTH) {
		mg->cut = true;
		return 0;
	}
	for (side = 0; side < 2; side++) {
		int node = side ? nb : na, c;

		if (node < 0)
			continue;
		for (c = mg->tree[side]->nodes[node].first_child; c >= 0;
		     c = mg->tree[side]->nodes[c].next_sibling)
			n++;
	}
	kids = malloc((n + 1) * sizeof(*kids));
	if (!kids)
		return -ENOMEM;
	n = 0;
	for (side = 0; side < 2; side++) {
		int node = side ? nb : na, c;

		if (node < 0)
			continue;
		for (c = mg->tree[side]->nodes[node].first_child; c >= 0;
		     c = mg->tree[side]->nodes[c].next_sibling) {
			struct pair *p = &kids[n++];

			p->g = mg->gid[side][mg->tree[side]->nodes[c].func];
			p->node[side] = c;
			p->node[1 - side] = -1;
		}
	}
	qsort(kids, n, sizeof(*kids), pair_by_gid);
	/* Join equal functions of the two sides into one pair. */
	for (i = 0, m = 0; i < n; i = j) {
		kids[m] = kids[i];
		for (j = i + 1; j < n && kids[j].g == kids[i].g; j++)
			for (side = 0; side < 2; side++)
				if (kids[j].node[side] >= 0)
					kids[m].node[side] = kids[j].node[side];
		kids[m].weight =
			sort_value(mg, 0, kids[m].node[0]) + sort_value(mg, 1, kids[m].node[1]);
		m++;
	}
	qsort(kids, m, sizeof(*kids), pair_heavier);
	for (i = 0; !rc && i < m; i++) {
		const struct pair *p = &kids[i];
		const struct cct *tree;
		size_t row;
		int func;

		if (!merged_passes(mg, p, &mg->pruned))
			continue;
		if (mg->r[0]->o->limit > 0 && mg->rows >= (size_t)mg->r[0]->o->limit)
			break;
		row = table_add_row(mg->t, depth);
		mg->rows++;
		side = p->node[0] >= 0 ? 0 : 1;
		tree = mg->tree[side];
		func = tree->nodes[p->node[side]].func;
		table_set_text_ref(mg->t, row, mg->cname, report_function_name(mg->r[side], func));
		if (mg->sides & MC_TOTAL)
			set_diff(mg->r[0], mg->t, row, &mg->dc, 1,
				 node_vals(mg, 0, p->node[0], true),
				 node_vals(mg, 1, p->node[1], true));
		if (mg->sides & MC_SELF)
			set_diff(mg->r[0], mg->t, row, &mg->dc, 0,
				 node_vals(mg, 0, p->node[0], !(mg->sides & MC_TOTAL)),
				 node_vals(mg, 1, p->node[1], !(mg->sides & MC_TOTAL)));
		table_set_text_ref(mg->t, row, mg->cmod, report_module_name(mg->r[side], func));
		table_set_int(mg->t, row, mg->cdepth, depth);
		rc = merge_node(mg, p->node[0], p->node[1], depth + 1);
	}
	free(kids);
	return rc;
}

/*
 * Merge the trees ta and tb of a and b into t. sides: MC_TOTAL and MC_SELF for top-down
 * (Total first); MC_SELF alone for the callers' trees of bottom-up, whose rows show each
 * path's share (the node's total there).
 */
static int merge_trees(struct report *a, struct report *b, const struct cct *ta,
		       const struct cct *tb, struct table *t, unsigned sides, const char *what)
{
	struct names ns = { 0 };
	struct merge mg = { .r = { a, b }, .tree = { ta, tb }, .t = t, .sides = sides };
	int rc;

	if ((rc = no_groups(a)))
		return rc;
	if (a->sort_given)
		return report_usage_error("a difference report of the %s view is sorted by the "
					  "values of both results; -sort-desc is not supported",
					  a->view->name);
	mg.cname = table_add_col(t, "Function Stack", TABLE_TEXT, TABLE_TREE | TABLE_NAME);
	add_diff_cols(a, b, t, &mg.dc, sides | (sides & MC_TOTAL ? MC_TOTAL_FIRST : 0));
	mg.cmod = table_add_col(t, "Module", TABLE_TEXT, TABLE_SHRINK);
	mg.cdepth = table_add_col(t, "Depth", TABLE_INT, TABLE_MACHINE);
	rc = map_functions(&ns, a, &mg.gid[0]);
	if (!rc)
		rc = map_functions(&ns, b, &mg.gid[1]);
	if (!rc && (sides & MC_TOTAL)) {
		size_t row = table_add_row(t, 0);

		table_set_text(t, row, mg.cname, "Total");
		set_diff(a, t, row, &mg.dc, 1, a->total, b->total);
		set_diff(a, t, row, &mg.dc, 0, cct_self(ta, 0), cct_self(tb, 0));
		table_set_int(t, row, mg.cdepth, 0);
	}
	if (!rc)
		rc = merge_node(&mg, 0, 0, sides & MC_TOTAL ? 1 : 0);
	if (!rc) {
		if (mg.pruned)
			table_add_note(t,
				       "%zu %s below %.3g%% of both totals not shown "
				       "(-threshold 0 shows all)",
				       mg.pruned, what, a->o->threshold);
		if (mg.cut)
			table_add_note(t, "call paths deeper than %d frames are cut", MAX_DEPTH);
		note_results(t, a, b);
	}
	free(mg.gid[0]);
	free(mg.gid[1]);
	names_release(&ns);
	return rc;
}

int view_topdown_diff(struct report *a, struct report *b, struct table *t)
{
	return merge_trees(a, b, &a->tree, &b->tree, t, MC_TOTAL | MC_SELF, "call paths");
}

/* Bottom-up: the callers' trees of both results merged; each row is a path's share of self. */
int view_bottomup_diff(struct report *a, struct report *b, struct table *t)
{
	struct cct inv[2];
	int rc;

	if ((rc = no_groups(a)))
		return rc;
	if ((rc = cct_invert(&inv[0], &a->tree)))
		return rc;
	if ((rc = cct_invert(&inv[1], &b->tree))) {
		cct_release(&inv[0]);
		return rc;
	}
	rc = merge_trees(a, b, &inv[0], &inv[1], t, MC_SELF, "functions or call paths");
	cct_release(&inv[0]);
	cct_release(&inv[1]);
	return rc;
}

/*
 * Caller-callee: per function of either result (matched by name and module), its row, its
 * callers and its callees, each with both results' values and the difference.
 */
struct callers_diff {
	struct report *r[2];
	struct callers c[2];
	struct names ns;
	int *gid[2];
	struct hash_index edge[2]; /* (caller gid, callee gid) -> edge index of that side */
	struct table *t;
	struct diff_cols dc;
	int cname, crel, cmod, cindex;
};

static uint64_t edge_key(int caller, int callee)
{
	return (uint64_t)(uint32_t)caller << 32 | (uint32_t)callee;
}

static int index_edges(struct callers_diff *d, int side)
{
	const struct callers *c = &d->c[side];
	size_t e;

	hash_index_init(&d->edge[side]);
	/* Two edges of one side can join the same names: the last one counts. */
	for (e = c->nedges; e-- > 0;) {
		uint64_t key = edge_key(d->gid[side][c->edges[e].caller],
					d->gid[side][c->edges[e].callee]);

		if (key_index_get(&d->edge[side], key) < 0 &&
		    key_index_add(&d->edge[side], key, (int)e))
			return -ENOMEM;
	}
	return 0;
}

/* A row of values of both sides: function id g's (e < 0) or edge (g1, g2)'s. */
static void diff_row(struct callers_diff *d, int depth, const char *rel, int name_gid, int caller,
		     int callee, int index)
{
	const int64_t *v[2][2] = { { NULL, NULL }, { NULL, NULL } };
	size_t row;
	int side;

	for (side = 0; side < 2; side++) {
		const struct callers *c = &d->c[side];
		size_t nm = c->funcs.nm;
		int e;

		if (caller < 0) {
			int f;

			/* The function of this side with that common id, if any. */
			for (f = 0;
			     f < (int)d->r[side]->m.nfunctions && d->gid[side][f] != name_gid; f++)
				;
			if (f == (int)d->r[side]->m.nfunctions || !c->funcs.is_touched[f])
				continue;
			v[side][0] = &c->funcs.self[(size_t)f * nm];
			v[side][1] = &c->funcs.total[(size_t)f * nm];
		} else if ((e = key_index_get(&d->edge[side], edge_key(caller, callee))) >= 0) {
			v[side][0] = &c->ewalk.self[(size_t)e * nm];
			v[side][1] = &c->ewalk.total[(size_t)e * nm];
		}
	}
	row = table_add_row(d->t, depth);
	table_set_text(d->t, row, d->cname, d->ns.v[name_gid].name);
	table_set_text_ref(d->t, row, d->crel, rel);
	set_diff(d->r[0], d->t, row, &d->dc, 1, v[0][1], v[1][1]);
	set_diff(d->r[0], d->t, row, &d->dc, 0, v[0][0], v[1][0]);
	table_set_text(d->t, row, d->cmod, d->ns.v[name_gid].module);
	table_set_int(d->t, row, d->cindex, index);
}

/* The common ids of g's callers (callees) in either result, each once. */
static int neighbours(struct callers_diff *d, int g, bool callees, int **out, size_t *n)
{
	size_t cap = 0, e, k;
	int side;

	*out = NULL;
	*n = 0;
	for (side = 0; side < 2; side++) {
		const struct callers *c = &d->c[side];

		for (e = 0; e < c->nedges; e++) {
			int from = d->gid[side][callees ? c->edges[e].caller : c->edges[e].callee];
			int to = d->gid[side][callees ? c->edges[e].callee : c->edges[e].caller];

			if (from != g ||
			    !report_any_shown(d->r[side], &c->ewalk.total[e * c->ewalk.nm]))
				continue;
			for (k = 0; k < *n && (*out)[k] != to; k++)
				;
			if (k < *n)
				continue;
			if (GROW(*out, *n + 1, cap))
				return -ENOMEM;
			(*out)[(*n)++] = to;
		}
	}
	return 0;
}

int view_callers_diff(struct report *a, struct report *b, struct table *t)
{
	struct callers_diff d = { .r = { a, b }, .t = t };
	int *funcs = NULL, *nb = NULL;
	size_t nfuncs = 0, funcs_cap = 0, i, j, nnb, shown = 0;
	int side, rc = 0;

	d.cname = table_add_col(t, "Function", TABLE_TEXT, TABLE_TREE | TABLE_NAME);
	d.crel = table_add_col(t, "Relation", TABLE_TEXT, 0);
	add_diff_cols(a, b, t, &d.dc, MC_TOTAL | MC_SELF | MC_TOTAL_FIRST);
	d.cmod = table_add_col(t, "Module", TABLE_TEXT, TABLE_SHRINK);
	d.cindex = table_add_col(t, "Index", TABLE_INT, TABLE_MACHINE);
	for (side = 0; side < 2 && !rc; side++) {
		rc = callers_compute(&d.c[side], d.r[side]);
		if (!rc)
			rc = map_functions(&d.ns, d.r[side], &d.gid[side]);
		if (!rc)
			rc = index_edges(&d, side);
	}
	/* The functions: -function's (in the first result, else the second), or those of
	   either result that pass the threshold in it, by the first result's order. */
	if (!rc && a->o->function && !report_has_function(a, a->o->function) &&
	    !report_has_function(b, a->o->function))
		rc = report_usage_error("no function '%s' in results '%s' and '%s'", a->o->function,
					a->dir, b->dir);
	for (side = 0; !rc && side < 2; side++) {
		int *f = NULL;
		size_t n = 0;

		if (a->o->function && (nfuncs || !report_has_function(d.r[side], a->o->function)))
			continue;
		rc = callers_functions(&d.c[side], &f, &n);
		for (i = 0; !rc && i < n; i++) {
			int g = d.gid[side][f[i]];
			const int64_t *tot =
				&d.c[side].funcs.total[(size_t)f[i] * d.c[side].funcs.nm];

			if (!a->o->function && !report_passes(d.r[side], tot))
				continue;
			for (j = 0; j < nfuncs && funcs[j] != g; j++)
				;
			if (j < nfuncs)
				continue;
			if (GROW(funcs, nfuncs + 1, funcs_cap))
				rc = -ENOMEM;
			else
				funcs[nfuncs++] = g;
		}
		free(f);
	}
	for (i = 0; !rc && i < nfuncs; i++) {
		int g = funcs[i];

		if (a->o->limit > 0 && shown >= (size_t)a->o->limit)
			break;
		if (shown++)
			table_add_separator(t);
		if (!(rc = neighbours(&d, g, false, &nb, &nnb)))
			for (j = 0; j < nnb; j++)
				diff_row(&d, 1, "caller", nb[j], nb[j], g, (int)shown);
		free(nb);
		nb = NULL;
		diff_row(&d, 0, "function", g, -1, -1, (int)shown);
		if (!rc && !(rc = neighbours(&d, g, true, &nb, &nnb)))
			for (j = 0; j < nnb; j++)
				diff_row(&d, 1, "callee", nb[j], g, nb[j], (int)shown);
		free(nb);
		nb = NULL;
	}
	if (!rc)
		note_results(t, a, b);
	free(funcs);
	for (side = 0; side < 2; side++) {
		callers_release(&d.c[side]);
		hash_index_release(&d.edge[side]);
		free(d.gid[side]);
	}
	names_release(&d.ns);
	return rc;
}
