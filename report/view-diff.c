/* SPDX-License-Identifier: MIT */
/* Difference reports of two results: hotspots and top-down, matched by function and module. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "report/report-private.h"

#define MAX_DEPTH 2048

/*
 * Functions of both results get a common id from their name and module name. The map keys
 * on a 64-bit hash of both; a collision is resolved by probing the next hash value.
 */
struct names {
	struct keymap map;
	const char **name, **module;
	size_t n, cap;
};

static uint64_t hash_str(uint64_t h, const char *s)
{
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	return h;
}

static int names_id(struct names *ns, const char *name, const char *module)
{
	uint64_t h = hash_str(hash_str(0xcbf29ce484222325ULL, name) ^ 0xff, module);
	int id;

	for (;; h++) {
		id = keymap_get(&ns->map, h);
		if (id < 0)
			break;
		if (!strcmp(ns->name[id], name) && !strcmp(ns->module[id], module))
			return id;
	}
	if (ns->n == ns->cap) {
		size_t cap = ns->cap ? 2 * ns->cap : 1024;
		const char **a = realloc(ns->name, cap * sizeof(*a));

		if (!a)
			return -1;
		ns->name = a;
		a = realloc(ns->module, cap * sizeof(*a));
		if (!a)
			return -1;
		ns->module = a;
		ns->cap = cap;
	}
	ns->name[ns->n] = name;
	ns->module[ns->n] = module;
	if (keymap_put(&ns->map, h, (int)ns->n))
		return -1;
	return (int)ns->n++;
}

static void names_release(struct names *ns)
{
	keymap_release(&ns->map);
	free(ns->name);
	free(ns->module);
}

/* Per function of r: its common id. */
static int map_functions(struct names *ns, struct report *r, int **gid)
{
	size_t i;

	*gid = malloc((r->m.nfunctions + 1) * sizeof(int));
	if (!*gid)
		return -ENOMEM;
	for (i = 0; i < r->m.nfunctions; i++)
		if (((*gid)[i] = names_id(ns, r->m.functions[i].name,
					  report_module_name(r, (int)i))) < 0)
			return -ENOMEM;
	return 0;
}

/* Self and total per common id (total counts a function once per sample). */
static int function_times(struct report *r, const int *gid, int64_t *self, int64_t *total,
			  size_t nids)
{
	const struct cct *t = &r->tree;
	uint32_t *stamp = calloc(nids + 1, sizeof(uint32_t)), walk = 0;
	size_t i;

	if (!stamp)
		return -ENOMEM;
	for (i = 1; i < t->n; i++) {
		int64_t ns = t->nodes[i].self_ns;
		int u;

		if (!ns)
			continue;
		walk++;
		self[gid[t->nodes[i].func]] += ns;
		for (u = (int)i; u > 0; u = t->nodes[u].parent) {
			int g = gid[t->nodes[u].func];

			if (stamp[g] != walk) {
				stamp[g] = walk;
				total[g] += ns;
			}
		}
	}
	free(stamp);
	return 0;
}

struct diff_cols {
	int v[2][3]; /* [self/total][result 1, result 2, difference] */
};

static void add_diff_cols(struct table *t, struct diff_cols *c, bool total_first)
{
	static const char *const which[] = { "Self", "Total" };
	static const char *const part[] = { "Result 1", "Result 2", "Difference" };
	int k, p;

	for (k = 0; k < 2; k++) {
		int metric = total_first ? 1 - k : k;

		for (p = 0; p < 3; p++) {
			char name[64];

			snprintf(name, sizeof(name), "CPU Time:%s:%s", which[metric], part[p]);
			c->v[metric][p] = table_add_col(t, name, TABLE_TIME, 0);
		}
	}
}

static void set_diff(struct table *t, size_t row, const struct diff_cols *c, int metric,
		     int64_t a, int64_t b)
{
	table_set_time(t, row, c->v[metric][0], a);
	table_set_time(t, row, c->v[metric][1], b);
	table_set_time(t, row, c->v[metric][2], b - a);
}

int view_hotspots_diff(struct report *a, struct report *b, struct table *t)
{
	struct names ns = { 0 };
	int *ga = NULL, *gb = NULL, cname, cmod, rc;
	int64_t *v[4] = { NULL };
	struct diff_cols dc;
	size_t i, k;

	if (a->o->group_by && strcmp(a->o->group_by, "function"))
		return report_usage_error("a difference report groups by function only");
	cname = table_add_col(t, "Function", TABLE_TEXT, TABLE_SHRINK);
	add_diff_cols(t, &dc, false);
	cmod = table_add_col(t, "Module", TABLE_TEXT, TABLE_SHRINK);
	rc = map_functions(&ns, a, &ga);
	if (!rc)
		rc = map_functions(&ns, b, &gb);
	for (k = 0; !rc && k < 4; k++)
		if (!(v[k] = calloc(ns.n + 1, sizeof(int64_t))))
			rc = -ENOMEM;
	if (!rc)
		rc = function_times(a, ga, v[0], v[1], ns.n);
	if (!rc)
		rc = function_times(b, gb, v[2], v[3], ns.n);
	for (i = 0; !rc && i < ns.n; i++) {
		size_t row;

		if (!v[0][i] && !v[1][i] && !v[2][i] && !v[3][i])
			continue;
		row = table_add_row(t, 0);
		table_set_text(t, row, cname, ns.name[i]);
		set_diff(t, row, &dc, 0, v[0][i], v[2][i]);
		set_diff(t, row, &dc, 1, v[1][i], v[3][i]);
		table_set_text(t, row, cmod, ns.module[i]);
	}
	if (!rc)
		rc = report_sort_limit(a, t, "CPU Time:Self:Difference");
	if (!rc)
		table_add_note(t, "Result 1: %s (CPU time %.3fs); Result 2: %s (CPU time %.3fs); "
			       "Difference = Result 2 - Result 1", a->dir, (double)a->total_ns / 1e9,
			       b->dir, (double)b->total_ns / 1e9);
	for (k = 0; k < 4; k++)
		free(v[k]);
	free(ga);
	free(gb);
	names_release(&ns);
	return rc;
}

/* Top-down: the two trees merged along equal function paths. */
struct merge {
	struct report *r[2];
	int *gid[2];
	struct table *t;
	struct diff_cols dc;
	int cname, cmod, cdepth;
	double threshold;
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

	return a->g < b->g ? -1 : a->g > b->g;
}

static int pair_heavier(const void *pa, const void *pb)
{
	const struct pair *a = pa, *b = pb;

	if (a->weight != b->weight)
		return a->weight > b->weight ? -1 : 1;
	return a->g < b->g ? -1 : a->g > b->g;
}

static double node_pct(const struct merge *mg, int side, int node, bool total)
{
	const struct cct_node *n;

	if (node < 0)
		return 0;
	n = &mg->r[side]->tree.nodes[node];
	return report_pct(mg->r[side], total ? n->total_ns : n->self_ns);
}

static int64_t node_ns(const struct merge *mg, int side, int node, bool total)
{
	const struct cct_node *n;

	if (node < 0)
		return 0;
	n = &mg->r[side]->tree.nodes[node];
	return total ? n->total_ns : n->self_ns;
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
		for (c = mg->r[side]->tree.nodes[node].first_child; c >= 0;
		     c = mg->r[side]->tree.nodes[c].next_sibling)
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
		for (c = mg->r[side]->tree.nodes[node].first_child; c >= 0;
		     c = mg->r[side]->tree.nodes[c].next_sibling) {
			struct pair *p = &kids[n++];

			p->g = mg->gid[side][mg->r[side]->tree.nodes[c].func];
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
		kids[m].weight = node_ns(mg, 0, kids[m].node[0], true) +
				 node_ns(mg, 1, kids[m].node[1], true);
		m++;
	}
	qsort(kids, m, sizeof(*kids), pair_heavier);
	for (i = 0; !rc && i < m; i++) {
		const struct pair *p = &kids[i];
		int64_t ta = node_ns(mg, 0, p->node[0], true), tb = node_ns(mg, 1, p->node[1], true);
		double pct = node_pct(mg, 0, p->node[0], true);
		size_t row;

		if (node_pct(mg, 1, p->node[1], true) > pct)
			pct = node_pct(mg, 1, p->node[1], true);
		if ((!ta && !tb) || pct < mg->threshold) {
			mg->pruned += ta || tb;
			continue;
		}
		if (mg->r[0]->o->limit > 0 && mg->rows >= (size_t)mg->r[0]->o->limit)
			break;
		row = table_add_row(mg->t, depth);
		mg->rows++;
		side = p->node[0] >= 0 ? 0 : 1;
		table_set_text(mg->t, row, mg->cname,
			       mg->r[side]->m.functions[mg->r[side]->tree.nodes[p->node[side]].func]
				       .name);
		set_diff(mg->t, row, &mg->dc, 1, ta, tb);
		set_diff(mg->t, row, &mg->dc, 0, node_ns(mg, 0, p->node[0], false),
			 node_ns(mg, 1, p->node[1], false));
		table_set_text(mg->t, row, mg->cmod,
			       report_module_name(mg->r[side],
						  mg->r[side]->tree.nodes[p->node[side]].func));
		table_set_int(mg->t, row, mg->cdepth, depth);
		rc = merge_node(mg, p->node[0], p->node[1], depth + 1);
	}
	free(kids);
	return rc;
}

int view_topdown_diff(struct report *a, struct report *b, struct table *t)
{
	struct names ns = { 0 };
	struct merge mg = { .r = { a, b }, .t = t, .threshold = a->o->threshold };
	size_t row;
	int rc;

	mg.cname = table_add_col(t, "Function Stack", TABLE_TEXT, TABLE_TREE | TABLE_SHRINK);
	add_diff_cols(t, &mg.dc, true);
	mg.cmod = table_add_col(t, "Module", TABLE_TEXT, TABLE_SHRINK);
	mg.cdepth = table_add_col(t, "Depth", TABLE_INT, TABLE_MACHINE);
	if (a->o->sort_desc)
		return report_usage_error("a top-down difference report is sorted by the time of "
					  "both results; -sort-desc is not supported");
	rc = map_functions(&ns, a, &mg.gid[0]);
	if (!rc)
		rc = map_functions(&ns, b, &mg.gid[1]);
	if (!rc) {
		row = table_add_row(t, 0);
		table_set_text(t, row, mg.cname, "Total");
		set_diff(t, row, &mg.dc, 1, a->total_ns, b->total_ns);
		set_diff(t, row, &mg.dc, 0, a->tree.nodes[0].self_ns, b->tree.nodes[0].self_ns);
		table_set_int(t, row, mg.cdepth, 0);
		rc = merge_node(&mg, 0, 0, 1);
	}
	if (!rc) {
		if (mg.pruned)
			table_add_note(t, "%zu call paths below %.3g%% of both totals not shown "
				       "(-threshold 0 shows all)", mg.pruned, a->o->threshold);
		if (mg.cut)
			table_add_note(t, "call paths deeper than %d frames are cut", MAX_DEPTH);
		table_add_note(t, "Result 1: %s; Result 2: %s; Difference = Result 2 - Result 1",
			       a->dir, b->dir);
	}
	free(mg.gid[0]);
	free(mg.gid[1]);
	names_release(&ns);
	return rc;
}
