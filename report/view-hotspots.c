/* SPDX-License-Identifier: MIT */
/* The hotspots view: a flat list of self and total time, grouped by -group-by. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/options.h"
#include "report/bigmem.h"
#include "report/radix.h"
#include "report/report-private.h"

enum dim { DIM_FUNCTION, DIM_MODULE, DIM_LINE, DIM_THREAD, DIM_PROCESS, NDIMS };
static const char *const dim_names[NDIMS] = {
	"function", "module", "source-line", "thread", "process",
};

struct grouping {
	int dims[NDIMS];
	int ndims;
	bool has[NDIMS];
};

static int grouping_parse(const char *s, struct grouping *g)
{
	const char *p = s ? s : "function";

	memset(g, 0, sizeof(*g));
	while (*p) {
		size_t len = strcspn(p, ",");
		char word[64];
		int d;

		snprintf(word, sizeof(word), "%.*s", (int)len, p);
		for (d = 0; d < NDIMS; d++)
			if (!strcmp(word, dim_names[d]))
				break;
		if (d == NDIMS) {
			const char *near = options_nearest(word, dim_names, NDIMS);

			if (near)
				return report_usage_error("unknown grouping '%s' for -group-by (did "
							  "you mean '%s'?)", word, near);
			return report_usage_error("unknown grouping '%s' for -group-by; use "
						  "function, module, source-line, thread or process",
						  word);
		}
		if (!g->has[d]) {
			g->has[d] = true;
			g->dims[g->ndims++] = d;
		}
		p += len;
		if (*p == ',')
			p++;
	}
	if (!g->ndims)
		return report_usage_error("option '-group-by' needs at least one grouping");
	return 0;
}

/*
 * A group is (constant part, path part): the constant part (thread or process) is the same
 * for every frame of a sample, the path part (function, module, line) differs per frame.
 * Path keys are interned per node so the walks below touch only arrays.
 */
struct path_key {
	int first;  /* function, or module, or -1 */
	int second; /* source position (cct loc), or -1 */
	int node;   /* a node with this key, for labels */
};

struct group {
	int ck;	 /* thread or process index, -1 */
	int pk;	 /* index into path keys */
	int64_t self_ns, total_ns;
};

/* A tree node's parent and path key. */
struct link {
	int parent, key;
};

/* A node on the path of the depth-first walk, and its next child to visit. */
struct visit {
	int node, next;
};

struct hotspots {
	struct report *r;
	struct grouping g;
	struct path_key *keys;
	size_t nkeys;
	struct link *link; /* per tree node: its parent and key, side by side for the walks */
	struct group *groups;
	size_t ngroups, cap;
	/* per path key, reset for each constant part */
	int64_t *acc_self, *acc_total;
	uint32_t *stamp;
	int *touched;
	bool *is_touched;
	size_t ntouched;
	uint32_t walk;
	/* tree passes (see tree_scratch, pass_tree): per node, and per path key */
	int64_t *sub, *self;
	int *minrank, *dep, *kid_off, *kids;
	struct visit *path;
	uint64_t *first;
	int *active;
};

static int intern_keys(struct hotspots *h)
{
	struct cct *t = &h->r->tree;
	bool by_first = h->g.has[DIM_FUNCTION] || h->g.has[DIM_MODULE];
	size_t i, ndirect = 0;
	int *direct = NULL; /* key per first (or second) + 1, when only one of them counts */
	struct keymap map;
	int rc = 0;

	keymap_init(&map);
	h->link = big_malloc(t->n * sizeof(*h->link));
	h->keys = big_malloc(t->n * sizeof(*h->keys));
	if (!h->link || !h->keys)
		return -ENOMEM;
	if (!h->g.has[DIM_LINE] || !by_first) {
		ndirect = (h->g.has[DIM_LINE] ? t->nlocs
			   : h->g.has[DIM_FUNCTION] ? h->r->m.nfunctions : h->r->m.nmodules) + 1;
		direct = big_malloc(ndirect * sizeof(*direct));
		if (!direct)
			return -ENOMEM;
		memset(direct, 0xff, ndirect * sizeof(*direct));
	}
	h->link[0] = (struct link){ -1, -1 };
	for (i = 1; i < t->n && !rc; i++) {
		const struct cct_node *n = &t->nodes[i];
		int first = -1, second = -1, k, *slot = NULL;
		uint64_t key = 0;

		if (h->g.has[DIM_FUNCTION])
			first = n->func;
		else if (h->g.has[DIM_MODULE])
			first = h->r->m.functions[n->func].module;
		if (h->g.has[DIM_LINE])
			second = n->loc;
		if (direct) {
			slot = &direct[(by_first ? first : second) + 1];
			k = *slot;
		} else {
			key = (uint64_t)(uint32_t)first << 32 | (uint32_t)second;
			k = keymap_get(&map, key);
		}
		if (k < 0) {
			k = (int)h->nkeys++;
			h->keys[k].first = first;
			h->keys[k].second = second;
			h->keys[k].node = (int)i;
			if (slot)
				*slot = k;
			else
				rc = keymap_put(&map, key, k);
		}
		h->link[i] = (struct link){ n->parent, k };
	}
	free(direct);
	keymap_release(&map);
	return rc;
}

static int group_add(struct hotspots *h, int ck, int pk, int64_t self, int64_t total)
{
	if (h->ngroups == h->cap) {
		size_t cap = h->cap ? 2 * h->cap : 1024;
		struct group *g = realloc(h->groups, cap * sizeof(*g));

		if (!g)
			return -ENOMEM;
		h->groups = g;
		h->cap = cap;
	}
	h->groups[h->ngroups++] = (struct group){ ck, pk, self, total };
	return 0;
}

static void touch(struct hotspots *h, int k)
{
	if (!h->is_touched[k]) {
		h->is_touched[k] = true;
		h->touched[h->ntouched++] = k;
	}
}

/* Add one leaf's time: self to its own key, total once to each distinct key on its path. */
static void walk(struct hotspots *h, int node, int64_t ns)
{
	int u;

	h->walk++;
	if (h->walk == 0) { /* wrapped: forget old stamps */
		memset(h->stamp, 0, h->nkeys * sizeof(*h->stamp));
		h->walk = 1;
	}
	touch(h, h->link[node].key);
	h->acc_self[h->link[node].key] += ns;
	for (u = node; u > 0; u = h->link[u].parent) {
		int k = h->link[u].key;

		if (h->stamp[k] == h->walk)
			continue;
		h->stamp[k] = h->walk;
		touch(h, k);
		h->acc_total[k] += ns;
	}
}

static int flush(struct hotspots *h, int ck)
{
	size_t i;
	int rc = 0;

	for (i = 0; i < h->ntouched; i++) {
		int k = h->touched[i];

		if ((h->acc_self[k] || h->acc_total[k]) && !rc)
			rc = group_add(h, ck, k, h->acc_self[k], h->acc_total[k]);
		h->acc_self[k] = h->acc_total[k] = 0;
		h->is_touched[k] = false;
	}
	h->ntouched = 0;
	return rc;
}

static int const_key(const struct hotspots *h, int thread)
{
	if (h->g.has[DIM_THREAD])
		return thread;
	if (h->g.has[DIM_PROCESS])
		return thread >= 0 ? h->r->m.threads[thread].process : -1;
	return -1;
}

/* minrank of a node without a listed leaf below it (any value past every rank). */
#define NO_RANK 0x7f7f7f7f

/*
 * The tree as compact arrays for pass_tree(): depths and children (kids[kid_off[u]]
 * to kids[kid_off[u + 1]]) in a few MB instead of the nodes' tens, so that a pass stays in
 * the cache. Built at the first pass.
 */
static int tree_scratch(struct hotspots *h)
{
	const struct cct_node *nodes = h->r->tree.nodes;
	size_t n = h->r->tree.n, i;
	int maxdepth = 0;

	if (h->sub)
		return 0;
	h->sub = big_malloc(n * sizeof(*h->sub));
	h->self = big_malloc(n * sizeof(*h->self));
	h->minrank = big_malloc(n * sizeof(*h->minrank));
	h->dep = big_malloc(n * sizeof(*h->dep));
	h->kid_off = big_calloc(n + 2, sizeof(*h->kid_off));
	h->kids = big_malloc(n * sizeof(*h->kids));
	h->first = big_malloc((h->nkeys + 1) * sizeof(*h->first));
	h->active = big_calloc(h->nkeys + 1, sizeof(*h->active));
	if (!h->sub || !h->self || !h->minrank || !h->dep || !h->kid_off || !h->kids ||
	    !h->first || !h->active)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		h->dep[i] = nodes[i].depth;
		h->self[i] = nodes[i].self_ns;
		if (h->dep[i] > maxdepth)
			maxdepth = h->dep[i];
		if (i)
			h->kid_off[h->link[i].parent + 2]++;
	}
	for (i = 2; i <= n + 1; i++)
		h->kid_off[i] += h->kid_off[i - 1];
	for (i = 1; i < n; i++)
		h->kids[h->kid_off[h->link[i].parent + 1]++] = (int)i;
	for (i = 0; i <= h->nkeys; i++)
		h->first[i] = UINT64_MAX;
	h->path = malloc(((size_t)maxdepth + 2) * sizeof(*h->path));
	return h->path ? 0 : -ENOMEM;
}

/* Enter node x on the walk: its key's self, total (when outermost) and first touch. */
static void pass_enter(struct hotspots *h, const int *leaves, const int64_t *acc, int x)
{
	int k = h->link[x].key;
	uint64_t first = (uint64_t)h->minrank[x] << 32 |
			 (uint32_t)(h->dep[leaves[h->minrank[x]]] - h->dep[x]);

	h->acc_self[k] += acc[x];
	if (!h->active[k]++)
		h->acc_total[k] += h->sub[x];
	if (first < h->first[k]) {
		if (h->first[k] == UINT64_MAX)
			h->touched[h->ntouched++] = k;
		h->first[k] = first;
	}
}

/*
 * What walk() computes for every leaf, in one pass over the tree: a key's total is the sum
 * of the subtree totals of its outermost nodes (no ancestor with the same key), so each
 * sample counts once per key however deep the recursion. The walks touch keys in an order
 * that sets the order of equal rows after sorting; the pass reproduces it: a key is first
 * touched by the first leaf below any of its nodes, at that leaf's nearest such node.
 */
static int pass_tree(struct hotspots *h, const int *leaves, size_t nleaves, const int64_t *acc,
		     int ck)
{
	size_t n = h->r->tree.n, sp, i, j;
	struct radix_item *order;
	int rc;

	if ((rc = tree_scratch(h)))
		return rc;
	if (!acc)
		acc = h->self;
	memcpy(h->sub, acc, n * sizeof(*h->sub));
	memset(h->minrank, 0x7f, n * sizeof(*h->minrank));
	for (j = nleaves; j-- > 0;)
		h->minrank[leaves[j]] = (int)j; /* a leaf listed twice keeps its first rank */
	/* Children come after their parents: one backward sweep sums the subtrees. */
	for (i = n; i-- > 1;) {
		int p = h->link[i].parent;

		h->sub[p] += h->sub[i];
		if (h->minrank[i] < h->minrank[p])
			h->minrank[p] = h->minrank[i];
	}
	/* Depth first through the subtrees that hold a listed leaf. */
	h->path[0] = (struct visit){ 0, h->kid_off[0] };
	for (sp = 1; sp;) {
		struct visit *v = &h->path[sp - 1];
		int c;

		if (v->next < h->kid_off[v->node + 1]) {
			c = h->kids[v->next++];
			if (h->minrank[c] == NO_RANK)
				continue;
			pass_enter(h, leaves, acc, c);
			h->path[sp++] = (struct visit){ c, h->kid_off[c] };
		} else {
			if (v->node)
				h->active[h->link[v->node].key]--;
			sp--;
		}
	}
	order = big_malloc((h->ntouched + 1) * sizeof(*order));
	if (!order)
		return -ENOMEM;
	for (i = 0; i < h->ntouched; i++) {
		order[i] = (struct radix_item){ h->first[h->touched[i]], (size_t)h->touched[i] };
		h->first[h->touched[i]] = UINT64_MAX;
		h->is_touched[h->touched[i]] = true;
	}
	rc = radix_sort(order, h->ntouched);
	for (i = 0; i < h->ntouched; i++)
		h->touched[i] = (int)order[i].val;
	free(order);
	return rc ? rc : flush(h, ck);
}

/*
 * Add the time acc[leaf] (NULL acc: the leaf's self time) of each leaf, in this order, to
 * its key's self and once to each key on its path, then flush the groups of constant part
 * ck. Walking each leaf's path costs the sum of their depths; a pass over the whole tree
 * costs a few steps per node: the cheaper one runs. Both give the same groups in the same
 * order.
 */
static int pass(struct hotspots *h, const int *leaves, size_t nleaves, const int64_t *acc,
		int ck)
{
	const struct cct_node *nodes = h->r->tree.nodes;
	size_t steps = 0, j;

	for (j = 0; j < nleaves && steps <= 4 * h->r->tree.n; j++)
		steps += (size_t)nodes[leaves[j]].depth;
	if (steps > 4 * h->r->tree.n)
		return pass_tree(h, leaves, nleaves, acc, ck);
	for (j = 0; j < nleaves; j++)
		walk(h, leaves[j], acc ? acc[leaves[j]] : nodes[leaves[j]].self_ns);
	return flush(h, ck);
}

static int compute_by_const(struct hotspots *h);

static int compute(struct hotspots *h)
{
	struct report *r = h->r;
	struct cct *t = &r->tree;
	int *leaves;
	size_t i, n = 0;
	int rc;

	if ((rc = intern_keys(h)))
		return rc;
	h->acc_self = calloc(h->nkeys + 1, sizeof(int64_t));
	h->acc_total = calloc(h->nkeys + 1, sizeof(int64_t));
	h->stamp = calloc(h->nkeys + 1, sizeof(uint32_t));
	h->touched = malloc((h->nkeys + 1) * sizeof(int));
	h->is_touched = calloc(h->nkeys + 1, sizeof(bool));
	if (!h->acc_self || !h->acc_total || !h->stamp || !h->touched || !h->is_touched)
		return -ENOMEM;
	if (h->g.has[DIM_THREAD] || h->g.has[DIM_PROCESS])
		return compute_by_const(h);
	/* The tree already summed the samples per leaf. */
	leaves = big_malloc(t->n * sizeof(*leaves));
	if (!leaves)
		return -ENOMEM;
	for (i = 1; i < t->n; i++)
		if (t->nodes[i].self_ns)
			leaves[n++] = (int)i;
	rc = pass(h, leaves, n, NULL, -1);
	free(leaves);
	return rc;
}

/*
 * With a thread or process in the grouping: samples bucketed by that (a counting sort),
 * then, per bucket, summed per tree node and passed once per node.
 */
static int compute_by_const(struct hotspots *h)
{
	struct report *r = h->r;
	size_t nck = (h->g.has[DIM_THREAD] ? r->m.nthreads : r->m.nprocesses) + 1, i, k;
	size_t *off = calloc(nck + 1, sizeof(size_t));
	int *order = big_malloc((r->nrecs + 1) * sizeof(int));
	int64_t *acc = big_calloc(r->tree.n, sizeof(int64_t));
	int *nodes = big_malloc((r->nrecs + 1) * sizeof(int));
	int rc = 0;

	if (!off || !order || !acc || !nodes) {
		rc = -ENOMEM;
		goto out;
	}
	/* Bucket 0 holds the unknown thread or process (-1). */
	for (i = 0; i < r->nrecs; i++)
		off[const_key(h, r->recs[i].thread) + 2]++;
	for (k = 2; k <= nck; k++)
		off[k] += off[k - 1];
	for (i = 0; i < r->nrecs; i++)
		order[off[const_key(h, r->recs[i].thread) + 1]++] = (int)i;
	/* off[b] is now the end of bucket b, and the start of bucket b + 1. */
	for (k = 0; k < nck && !rc; k++) {
		size_t start = k ? off[k - 1] : 0, n = 0, j;

		for (j = start; j < off[k]; j++) {
			const struct record *rec = &r->recs[order[j]];

			if (!acc[rec->node])
				nodes[n++] = rec->node;
			acc[rec->node] += rec->ns;
		}
		if (n)
			rc = pass(h, nodes, n, acc, (int)k - 1);
		for (j = 0; j < n; j++)
			acc[nodes[j]] = 0;
	}
out:
	free(off);
	free(order);
	free(acc);
	free(nodes);
	return rc;
}

static void set_thread(struct report *r, struct table *t, size_t row, int cname, int cid,
		       int thread)
{
	const struct model_thread *th = thread >= 0 ? &r->m.threads[thread] : NULL;

	table_set_text_ref(t, row, cname, th ? th->name : "[unknown]");
	if (th)
		table_set_int(t, row, cid, th->tid);
}

static void set_process(struct report *r, struct table *t, size_t row, int cname, int cid,
			int proc)
{
	const struct model_process *p = proc >= 0 ? &r->m.processes[proc] : NULL;

	table_set_text_ref(t, row, cname, p ? report_basename(p->exe) : "[unknown]");
	if (p)
		table_set_int(t, row, cid, p->pid);
}

static void fill(struct hotspots *h, struct table *t)
{
	struct report *r = h->r;
	int col[NDIMS][2] = { { -1, -1 } }, self, selfp, total, totalp, mod = -1, file = -1, line = -1;
	size_t i;
	int d;

	for (d = 0; d < h->g.ndims; d++) {
		int dim = h->g.dims[d];

		switch (dim) {
		case DIM_FUNCTION:
			col[dim][0] = table_add_col(t, "Function", TABLE_TEXT, TABLE_SHRINK);
			break;
		case DIM_MODULE:
			col[dim][0] = table_add_col(t, "Module", TABLE_TEXT, TABLE_SHRINK);
			break;
		case DIM_LINE:
			col[dim][0] = table_add_col(t, "Source File", TABLE_TEXT, TABLE_KEEP_END);
			col[dim][1] = table_add_col(t, "Source Line", TABLE_INT, 0);
			break;
		case DIM_THREAD:
			col[dim][0] = table_add_col(t, "Thread", TABLE_TEXT, TABLE_SHRINK);
			col[dim][1] = table_add_col(t, "TID", TABLE_INT, 0);
			break;
		case DIM_PROCESS:
			col[dim][0] = table_add_col(t, "Process", TABLE_TEXT, TABLE_SHRINK);
			col[dim][1] = table_add_col(t, "PID", TABLE_INT, 0);
			break;
		}
	}
	self = table_add_col(t, "CPU Time:Self", TABLE_TIME, 0);
	selfp = table_add_col(t, "CPU Time:Self %", TABLE_PCT, 0);
	total = table_add_col(t, "CPU Time:Total", TABLE_TIME, 0);
	totalp = table_add_col(t, "CPU Time:Total %", TABLE_PCT, 0);
	if (h->g.has[DIM_FUNCTION]) {
		if (!h->g.has[DIM_MODULE])
			mod = table_add_col(t, "Module", TABLE_TEXT, TABLE_SHRINK);
		if (!h->g.has[DIM_LINE]) {
			file = table_add_col(t, "Source File", TABLE_TEXT, TABLE_KEEP_END);
			line = table_add_col(t, "Source Line", TABLE_INT, 0);
		}
	}
	table_reserve(t, h->ngroups);
	for (i = 0; i < h->ngroups; i++) {
		const struct group *g = &h->groups[i];
		const struct path_key *k = &h->keys[g->pk];
		const struct cct_node *n = &r->tree.nodes[k->node];
		const struct model_function *f = &r->m.functions[n->func];
		size_t row = table_add_row(t, 0);

		for (d = 0; d < h->g.ndims; d++) {
			int dim = h->g.dims[d];

			switch (dim) {
			case DIM_FUNCTION:
				table_set_text_ref(t, row, col[dim][0], f->name);
				break;
			case DIM_MODULE:
				table_set_text_ref(t, row, col[dim][0],
						   report_module_name(r, n->func));
				break;
			case DIM_LINE: {
				const struct cct_loc *l = n->loc >= 0 ? &r->tree.locs[n->loc] : NULL;
				const char *path = l ? report_file_path(r, l->file) : NULL;

				table_set_text_ref(t, row, col[dim][0], path ? path : "[unknown]");
				if (path && l->line > 0)
					table_set_int(t, row, col[dim][1], l->line);
				break;
			}
			case DIM_THREAD:
				set_thread(r, t, row, col[dim][0], col[dim][1], g->ck);
				break;
			case DIM_PROCESS:
				set_process(r, t, row, col[dim][0], col[dim][1],
					    h->g.has[DIM_THREAD]
						    ? (g->ck >= 0 ? r->m.threads[g->ck].process : -1)
						    : g->ck);
				break;
			}
		}
		table_set_time(t, row, self, g->self_ns);
		table_set_pct(t, row, selfp, report_pct(r, g->self_ns));
		table_set_time(t, row, total, g->total_ns);
		table_set_pct(t, row, totalp, report_pct(r, g->total_ns));
		if (mod >= 0)
			table_set_text_ref(t, row, mod, report_module_name(r, n->func));
		if (file >= 0 && f->file >= 0) {
			table_set_text_ref(t, row, file, report_file_path(r, f->file));
			if (f->line > 0)
				table_set_int(t, row, line, f->line);
		}
	}
}

static void hotspots_release(struct hotspots *h)
{
	free(h->keys);
	free(h->link);
	free(h->groups);
	free(h->acc_self);
	free(h->acc_total);
	free(h->stamp);
	free(h->touched);
	free(h->is_touched);
	free(h->sub);
	free(h->self);
	free(h->dep);
	free(h->kid_off);
	free(h->kids);
	free(h->minrank);
	free(h->path);
	free(h->first);
	free(h->active);
}

int view_hotspots(struct report *r, struct table *t)
{
	struct hotspots h;
	int rc;

	memset(&h, 0, sizeof(h));
	h.r = r;
	rc = grouping_parse(r->o->group_by, &h.g);
	if (!rc)
		rc = compute(&h);
	if (!rc) {
		fill(&h, t);
		rc = report_sort_limit(r, t, "CPU Time:Self");
	}
	if (!rc && !r->nrecs)
		table_add_note(t, "no samples match the filters");
	hotspots_release(&h);
	return rc;
}
