/* SPDX-License-Identifier: MIT */
/* The hotspots view: a flat list of self and total values, grouped by -group-by. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
#include "common/options.h"
#include "common/sat.h"
#include "report/bigmem.h"
#include "report/report-private.h"

enum dim {
	DIM_FUNCTION,
	DIM_MODULE,
	DIM_LINE,
	DIM_THREAD,
	DIM_PROCESS,
	DIM_WAIT_KIND,
	DIM_SYNC_OBJECT,
	DIM_RANK,
	DIM_NODE,
	DIM_REGION,
	DIM_TASK,
	DIM_RUN,
	NDIMS
};
struct const_key {
	int who;         /* thread or process index */
	int wait_kind;   /* index into model.wait_kinds */
	int sync_object; /* index into model.sync_objects */
	int rank;        /* the process's rank */
	int node;        /* index into model.nodes */
	int region;      /* index into model.regions */
	int task;        /* the function of its task's frame (model.functions) */
	int run;         /* index into model.runs */
};

/* The keys of -group-by: the word, the columns each adds, how a label names its rows. */
static const struct dim_def {
	const char *name;
	const char *col[2]; /* NULL: none */
	enum table_type type[2];
	unsigned flags[2];
	/* Rows labeled by the model: label(m, the const_key int at item); NULL: below. */
	const char *(*label)(const struct model *m, int i);
	size_t item;
} dims[NDIMS] = {
	[DIM_FUNCTION] = { "function", { "Function" }, { TABLE_TEXT }, { TABLE_NAME } },
	[DIM_MODULE] = { "module", { "Module" }, { TABLE_TEXT }, { TABLE_SHRINK } },
	[DIM_LINE] = { "source-line",
		       { "Source File", "Source Line" },
		       { TABLE_TEXT, TABLE_INT },
		       { TABLE_KEEP_END, 0 } },
	[DIM_THREAD] = { "thread",
			 { "Thread", "TID" },
			 { TABLE_TEXT, TABLE_INT },
			 { TABLE_SHRINK } },
	[DIM_PROCESS] = { "process",
			  { "Process", "PID" },
			  { TABLE_TEXT, TABLE_INT },
			  { TABLE_SHRINK } },
	[DIM_WAIT_KIND] = { "wait-kind",
			    { "Wait Kind" },
			    { TABLE_TEXT },
			    { 0 },
			    model_wait_kind_label,
			    offsetof(struct const_key, wait_kind) },
	[DIM_SYNC_OBJECT] = { "sync-object",
			      { "Sync Object", "Object Type" },
			      { TABLE_TEXT, TABLE_TEXT },
			      { TABLE_SHRINK, TABLE_DETAIL } },
	[DIM_RANK] = { "rank", { "Rank" }, { TABLE_INT }, { 0 } },
	[DIM_NODE] = { "node",
		       { "Node" },
		       { TABLE_TEXT },
		       { TABLE_SHRINK },
		       model_node_label,
		       offsetof(struct const_key, node) },
	[DIM_REGION] = { "region",
			 { "Region" },
			 { TABLE_TEXT },
			 { TABLE_SHRINK },
			 model_region_label,
			 offsetof(struct const_key, region) },
	[DIM_TASK] = { "task",
		       { "Task" },
		       { TABLE_TEXT },
		       { TABLE_SHRINK },
		       model_task_label,
		       offsetof(struct const_key, task) },
	[DIM_RUN] = { "run",
		      { "Run" },
		      { TABLE_TEXT },
		      { TABLE_SHRINK },
		      model_run_label,
		      offsetof(struct const_key, run) },
};

struct grouping {
	int dims[NDIMS];
	int ndims;
	bool has[NDIMS];
};

static int grouping_parse(const char *s, struct grouping *g)
{
	const char *p = s ? s : "function";
	const char *dim_names[NDIMS];
	int d;

	for (d = 0; d < NDIMS; d++)
		dim_names[d] = dims[d].name;
	memset(g, 0, sizeof(*g));
	while (*p) {
		size_t len = strcspn(p, ",");
		char word[64];

		snprintf(word, sizeof(word), "%.*s", (int)len, p);
		for (d = 0; d < NDIMS; d++)
			if (!strcmp(word, dim_names[d]))
				break;
		if (d == NDIMS) {
			const char *near = options_nearest(word, dim_names, NDIMS);

			if (near)
				return report_usage_error(
					"unknown grouping '%s' for -group-by (did "
					"you mean '%s'?)",
					word, near);
			return report_usage_error(
				"unknown grouping '%s' for -group-by; use "
				"function, module, source-line, thread, process, "
				"rank, node, wait-kind, sync-object, region, task or run",
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
 * A group is (constant part, path part): the constant part (thread or process, wait kind,
 * sync object) is the same for every frame of a sample, the path part (function, module,
 * line) differs per frame. Path keys are interned per node, constant parts per sample;
 * cct_walk sums the path keys, self and total, per constant part.
 */
struct path_key {
	int first;  /* function, or module, or -1 */
	int second; /* source position (cct loc), or -1 */
	int node;   /* a node with this key, for labels */
};

/* A constant part: each -1 when not grouped by it (or unknown, or no wait). */

struct group {
	int ck;    /* index into constant parts */
	int pk;    /* index into path keys */
	size_t at; /* its values: vals[at .. at + nm) self, then nm total */
};

struct hotspots {
	struct report *r;
	struct grouping g;
	struct path_key *keys;
	size_t nkeys;
	int *key; /* per tree node */
	struct group *groups;
	size_t ngroups, cap;
	int64_t *vals;
	size_t nvals, valcap;
	bool *want;               /* -function: per function, NULL: every function */
	struct const_key *consts; /* the constant parts met */
	size_t nconsts, constcap;
	struct cct_walk w;
};

/*
 * The source line each node counts in, grouped by source-line alone: its own, but native
 * code under a Python frame counts in that frame's line (line_profiler's answer: a line's
 * time is that of everything it calls); -call-stack-mode all gives each frame its own line.
 * NULL: every node its own (or -ENOMEM in *rc).
 */
static int *python_lines(const struct hotspots *h, int *rc)
{
	const struct cct *t = &h->r->tree;
	const struct model *m = &h->r->m;
	int *line;
	size_t i;

	*rc = 0;
	if (h->r->o->all_frames)
		return NULL;
	if (!(line = big_malloc(t->n * sizeof(*line)))) {
		*rc = -ENOMEM;
		return NULL;
	}
	line[0] = -1;
	for (i = 1; i < t->n; i++) {
		const struct cct_node *n = &t->nodes[i];
		int above = n->parent > 0 ? line[n->parent] : -1;

		if (n->func < 0)
			line[i] = -1; /* a group: what is under it starts again */
		else if (m->functions[n->func].python)
			line[i] = n->loc;
		else
			line[i] = above >= 0 ? above : -1;
	}
	for (i = 1; i < t->n; i++)
		if (line[i] < 0)
			line[i] = t->nodes[i].loc;
	return line;
}

static int intern_keys(struct hotspots *h)
{
	struct cct *t = &h->r->tree;
	bool by_first = h->g.has[DIM_FUNCTION] || h->g.has[DIM_MODULE];
	size_t i, ndirect = 0;
	int *direct = NULL; /* key per first (or second) + 1, when only one of them counts */
	int *line = NULL;   /* grouped by source-line alone: the line each node counts in */
	struct hash_index map;
	int rc = 0;

	hash_index_init(&map);
	h->key = big_malloc(t->n * sizeof(*h->key));
	h->keys = big_malloc(t->n * sizeof(*h->keys));
	if (!h->key || !h->keys)
		return -ENOMEM;
	if (!h->g.has[DIM_LINE] || !by_first) {
		ndirect = (h->g.has[DIM_LINE]       ? t->nlocs
			   : h->g.has[DIM_FUNCTION] ? h->r->m.nfunctions
						    : h->r->m.nmodules) +
			  1;
		direct = big_malloc(ndirect * sizeof(*direct));
		if (!direct)
			return -ENOMEM;
		memset(direct, 0xff, ndirect * sizeof(*direct));
	}
	if (h->g.has[DIM_LINE] && !by_first && !(line = python_lines(h, &rc)) && rc) {
		free(direct);
		return rc;
	}
	h->key[0] = -1;
	for (i = 1; i < t->n && !rc; i++) {
		const struct cct_node *n = &t->nodes[i];
		int first = -1, second = -1, k, *slot = NULL;
		uint64_t key = 0;

		if (h->g.has[DIM_FUNCTION])
			first = n->func;
		else if (h->g.has[DIM_MODULE])
			first = h->r->m.functions[n->func].module;
		if (h->g.has[DIM_LINE])
			second = line ? line[i] : n->loc;
		if (direct) {
			slot = &direct[(by_first ? first : second) + 1];
			k = *slot;
		} else {
			key = (uint64_t)(uint32_t)first << 32 | (uint32_t)second;
			k = key_index_get(&map, key);
		}
		if (k < 0) {
			k = (int)h->nkeys++;
			h->keys[k].first = first;
			h->keys[k].second = second;
			h->keys[k].node = (int)i;
			if (slot)
				*slot = k;
			else
				rc = key_index_add(&map, key, k);
		}
		h->key[i] = k;
	}
	free(direct);
	free(line);
	hash_index_release(&map);
	return rc;
}

/* The walk's sums become groups of constant part ck (only -function's, when given). */
static int collect(struct hotspots *h, int ck)
{
	size_t i, nm = h->w.nm;

	for (i = 0; i < h->w.ntouched; i++) {
		int k = h->w.touched[i];
		const int64_t *self = &h->w.self[(size_t)k * nm],
			      *total = &h->w.total[(size_t)k * nm];

		if (h->want && !h->want[h->keys[k].first])
			continue;
		if (GROW(h->groups, h->ngroups + 1, h->cap) ||
		    GROW(h->vals, h->nvals + 2 * nm, h->valcap))
			return -ENOMEM;
		h->groups[h->ngroups++] = (struct group){ ck, k, h->nvals };
		memcpy(&h->vals[h->nvals], self, nm * sizeof(*self));
		memcpy(&h->vals[h->nvals + nm], total, nm * sizeof(*total));
		h->nvals += 2 * nm;
	}
	cct_walk_reset(&h->w);
	return 0;
}

static bool by_const(const struct hotspots *h)
{
	return h->g.has[DIM_THREAD] || h->g.has[DIM_PROCESS] || h->g.has[DIM_WAIT_KIND] ||
	       h->g.has[DIM_SYNC_OBJECT] || h->g.has[DIM_RANK] || h->g.has[DIM_NODE] ||
	       h->g.has[DIM_REGION] || h->g.has[DIM_TASK] || h->g.has[DIM_RUN];
}

/* The constant part of a sample, as grouped. */
static struct const_key const_of(const struct hotspots *h, const struct model_sample *s)
{
	const struct report *r = h->r;
	struct const_key k = { -1, -1, -1, -1, -1, -1, -1 };

	if (h->g.has[DIM_THREAD])
		k.who = s->thread;
	else if (h->g.has[DIM_PROCESS])
		k.who = s->thread >= 0 ? r->m.threads[s->thread].process : -1;
	if (h->g.has[DIM_WAIT_KIND])
		k.wait_kind = report_sample_wait_kind(r, s);
	if (h->g.has[DIM_SYNC_OBJECT])
		k.sync_object = report_sample_sync_object(r, s);
	if (h->g.has[DIM_RANK])
		k.rank = report_sample_rank(r, s);
	if (h->g.has[DIM_NODE])
		k.node = report_sample_node(r, s);
	if (h->g.has[DIM_REGION])
		k.region = report_sample_region(r, s);
	if (h->g.has[DIM_TASK])
		k.task = report_sample_task(r, s);
	if (h->g.has[DIM_RUN])
		k.run = report_sample_run(r, s);
	return k;
}

/* The number of the pair (a, b) of 32-bit numbers in map, numbered from *n when new; -1. */
static int pair_id(struct hash_index *map, int *n, int a, int b)
{
	uint64_t key = (uint64_t)(uint32_t)(a + 1) << 32 | (uint32_t)(b + 1);
	int id = key_index_get(map, key);

	if (id >= 0)
		return id;
	if (key_index_add(map, key, *n))
		return -1;
	return (*n)++;
}

/*
 * Number each record's constant part (into out): the (wait kind, object) and (rank, node)
 * pairs first, then the pair of those, then (that, region), (that, task), (that, run), then (who,
 * that), each pair of 32-bit numbers a key of a map. Returns 0 or -ENOMEM.
 */
static int intern_consts(struct hotspots *h, int *out)
{
	struct report *r = h->r;
	struct hash_index pairs, keys;
	size_t i;
	int rc = 0, npairs = 0;
	bool added;

	hash_index_init(&pairs);
	hash_index_init(&keys);
	for (i = 0; i < r->nrecs && !rc; i++) {
		struct const_key k = const_of(h, report_sample(r, &r->recs[i]));
		int wait = pair_id(&pairs, &npairs, k.wait_kind, k.sync_object);
		int where = pair_id(&pairs, &npairs, k.rank, k.node);
		int pair = wait < 0 || where < 0 ? -1 : pair_id(&pairs, &npairs, wait, where), c;

		if (pair >= 0)
			pair = pair_id(&pairs, &npairs, pair, k.region);
		if (pair >= 0)
			pair = pair_id(&pairs, &npairs, pair, k.task);
		if (pair >= 0)
			pair = pair_id(&pairs, &npairs, pair, k.run);
		uint64_t pk;

		if (pair < 0) {
			rc = -ENOMEM;
			break;
		}
		pk = (uint64_t)(uint32_t)(k.who + 1) << 32 | (uint32_t)pair;
		c = KEY_INDEX_SLOT(&keys, pk, h->consts, h->nconsts, h->constcap, &added);
		if (c < 0) {
			rc = c;
			break;
		}
		if (added)
			h->consts[c] = k;
		out[i] = c;
	}
	hash_index_release(&pairs);
	hash_index_release(&keys);
	return rc;
}

static int compute_by_const(struct hotspots *h);

static int compute(struct hotspots *h)
{
	struct report *r = h->r;
	struct cct *t = &r->tree;
	int *leaves;
	size_t i, n = 0;
	int rc;

	if ((rc = intern_keys(h)) || (rc = cct_walk_init(&h->w, t, h->key, h->nkeys)))
		return rc;
	if (by_const(h))
		return compute_by_const(h);
	/* The tree already summed the samples per leaf. */
	leaves = big_malloc(t->n * sizeof(*leaves));
	if (!leaves)
		return -ENOMEM;
	for (i = 1; i < t->n; i++)
		if (cct_has_self(t, (int)i))
			leaves[n++] = (int)i;
	rc = cct_walk_add(&h->w, leaves, n, NULL);
	free(leaves);
	return rc ? rc : collect(h, -1);
}

/*
 * With a constant part in the grouping (thread or process, wait kind, sync object): samples
 * bucketed by it (a counting sort), then, per bucket, summed per tree node and walked once.
 */
static int compute_by_const(struct hotspots *h)
{
	struct report *r = h->r;
	size_t nck, i, k;
	size_t nm = r->tree.nm;
	int *ck = big_malloc((r->nrecs + 1) * sizeof(int));
	size_t *off = NULL;
	int *order = big_malloc((r->nrecs + 1) * sizeof(int));
	int64_t *acc = big_calloc(r->tree.n * nm, sizeof(int64_t));
	bool *seen = big_calloc(r->tree.n, sizeof(bool));
	int *nodes = big_malloc((r->nrecs + 1) * sizeof(int));
	int rc = 0;

	if (!ck || !order || !acc || !seen || !nodes || (rc = intern_consts(h, ck)) ||
	    !(off = calloc(h->nconsts + 2, sizeof(size_t)))) {
		rc = rc ? rc : -ENOMEM;
		goto out;
	}
	nck = h->nconsts;
	for (i = 0; i < r->nrecs; i++)
		off[ck[i] + 1]++;
	for (k = 1; k <= nck; k++)
		off[k] += off[k - 1];
	for (i = 0; i < r->nrecs; i++)
		order[off[ck[i]]++] = (int)i;
	/* off[b] is now the end of bucket b, and the start of bucket b + 1. */
	for (k = 0; k < nck && !rc; k++) {
		size_t start = k ? off[k - 1] : 0, n = 0, j;

		for (j = start; j < off[k]; j++) {
			const struct record *rec = &r->recs[order[j]];
			const struct model_sample *smp = report_sample(r, rec);

			if (!seen[rec->node]) {
				seen[rec->node] = true;
				nodes[n++] = rec->node;
			}
			size_t at = (size_t)rec->node * nm + (size_t)smp->metric;

			acc[at] = sat_add_i64(acc[at], smp->value);
		}
		if (n)
			rc = cct_walk_add(&h->w, nodes, n, acc);
		if (n && !rc)
			rc = collect(h, (int)k);
		for (j = 0; j < n; j++) {
			seen[nodes[j]] = false;
			memset(&acc[(size_t)nodes[j] * nm], 0, nm * sizeof(*acc));
		}
	}
out:
	free(ck);
	free(off);
	free(order);
	free(acc);
	free(seen);
	free(nodes);
	return rc;
}

static void set_thread(struct report *r, struct table *t, size_t row, int cname, int cid,
		       int thread)
{
	const struct model_thread *th = thread >= 0 ? &r->m.threads[thread] : NULL;
	char buf[600];

	table_set_text(t, row, cname, th ? report_thread_name(th, buf, sizeof(buf)) : "[unknown]");
	if (th)
		table_set_int(t, row, cid, th->tid);
}

static void set_process(struct report *r, struct table *t, size_t row, int cname, int cid, int proc)
{
	const struct model_process *p = proc >= 0 ? &r->m.processes[proc] : NULL;

	table_set_text_ref(t, row, cname, p ? report_basename(p->exe) : "[unknown]");
	if (p)
		table_set_int(t, row, cid, p->pid);
}

/* The Object Type column: the type, or the wait kind of the waits without an object. */
static const char *sync_object_type(const struct report *r, int object)
{
	const struct model_context *c = &r->m.contexts[r->m.sync_objects[object].context];

	return c->object_type ? c->object_type : "none";
}

static void fill(struct hotspots *h, struct table *t)
{
	struct report *r = h->r;
	int col[NDIMS][2] = { { -1, -1 } }, mod = -1, file = -1, line = -1;
	struct metric_cols mc;
	size_t i, nm = r->tree.nm;
	int d;

	for (d = 0; d < h->g.ndims; d++) {
		int dim = h->g.dims[d];

		size_t j;

		for (j = 0; j < 2 && dims[dim].col[j]; j++)
			col[dim][j] = table_add_col(t, dims[dim].col[j], dims[dim].type[j],
						    dims[dim].flags[j]);
	}
	report_add_metric_cols(r, t, &mc, MC_SELF | MC_TOTAL);
	if (h->g.has[DIM_FUNCTION]) {
		if (!h->g.has[DIM_MODULE])
			mod = table_add_col(t, "Module", TABLE_TEXT, TABLE_SHRINK | TABLE_DETAIL);
		if (!h->g.has[DIM_LINE]) {
			file = table_add_col(t, "Source File", TABLE_TEXT,
					     TABLE_KEEP_END | TABLE_DETAIL);
			line = table_add_col(t, "Source Line", TABLE_INT, TABLE_DETAIL);
		}
	}
	table_reserve(t, h->ngroups);
	for (i = 0; i < h->ngroups; i++) {
		const struct group *g = &h->groups[i];
		const struct path_key *k = &h->keys[g->pk];
		const struct cct_node *n = &r->tree.nodes[k->node];
		const struct model_function *f = &r->m.functions[n->func];
		const int64_t *self = &h->vals[g->at], *total = &h->vals[g->at + nm];
		struct const_key c =
			g->ck >= 0 ? h->consts[g->ck] : (struct const_key){ -1, -1, -1, -1 };
		char label[512];
		size_t row;

		if (!report_any_shown(r, self) && !report_any_shown(r, total))
			continue; /* values of metrics not shown only */
		row = table_add_row(t, 0);
		for (d = 0; d < h->g.ndims; d++) {
			int dim = h->g.dims[d];

			if (dims[dim].label) {
				int item;

				memcpy(&item, (const char *)&c + dims[dim].item, sizeof(item));
				table_set_text_ref(t, row, col[dim][0],
						   dims[dim].label(&r->m, item));
				continue;
			}
			switch (dim) {
			case DIM_FUNCTION:
				table_set_text_ref(t, row, col[dim][0],
						   report_function_name(r, n->func));
				break;
			case DIM_MODULE:
				table_set_text_ref(t, row, col[dim][0],
						   report_module_name(r, n->func));
				break;
			case DIM_LINE: {
				const struct cct_loc *l =
					n->loc >= 0 ? &r->tree.locs[n->loc] : NULL;
				const char *path = l ? report_file_path(r, l->file) : NULL;

				table_set_text_ref(t, row, col[dim][0], path ? path : "[unknown]");
				if (path && l->line > 0)
					table_set_int(t, row, col[dim][1], l->line);
				break;
			}
			case DIM_THREAD:
				set_thread(r, t, row, col[dim][0], col[dim][1], c.who);
				break;
			case DIM_PROCESS:
				set_process(r, t, row, col[dim][0], col[dim][1],
					    h->g.has[DIM_THREAD]
						    ? (c.who >= 0 ? r->m.threads[c.who].process
								  : -1)
						    : c.who);
				break;
			case DIM_SYNC_OBJECT:
				table_set_text(t, row, col[dim][0],
					       model_sync_object_label(&r->m, c.sync_object, label,
								       sizeof(label)));
				if (c.sync_object >= 0)
					table_set_text_ref(t, row, col[dim][1],
							   sync_object_type(r, c.sync_object));
				break;
			case DIM_RANK:
				/* A process outside a parallel job has no rank: the cell stays
				 * empty. */
				if (c.rank >= 0)
					table_set_int(t, row, col[dim][0], c.rank);
				break;
			}
		}
		report_set_metric_cols(r, t, row, &mc, self, total);
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
	FREE_ALL(h->keys, h->key, h->groups, h->vals, h->want, h->consts);
	cct_walk_release(&h->w);
}

static bool metric_shown(const struct report *r, int k)
{
	size_t i;

	for (i = 0; i < r->nshown; i++)
		if (r->shown[i] == k)
			return true;
	return false;
}

/* -function: the rows of that function only (by function, per thread or process). */
static int want_function(struct hotspots *h)
{
	struct report *r = h->r;
	int *funcs;
	size_t n, i;
	int rc;

	if (!r->o->function)
		return 0;
	if (!h->g.has[DIM_FUNCTION])
		return report_usage_error(
			"option '-function' in the hotspots view needs function "
			"in -group-by (e.g. -group-by thread,function); the lines "
			"of a function are in -view source -source-object "
			"function=%s",
			r->o->function);
	rc = report_find_functions(r, r->o->function, true, "-function", &funcs, &n);
	if (rc)
		return rc;
	h->want = calloc(r->m.nfunctions + 1, sizeof(*h->want));
	for (i = 0; h->want && i < n; i++)
		h->want[funcs[i]] = true;
	free(funcs);
	return h->want ? 0 : -ENOMEM;
}

int view_hotspots(struct report *r, struct table *t)
{
	struct hotspots h;
	char sort[512];
	int rc;

	memset(&h, 0, sizeof(h));
	h.r = r;
	rc = grouping_parse(r->o->group_by, &h.g);
	if (!rc)
		rc = want_function(&h);
	if (!rc)
		rc = compute(&h);
	if (!rc) {
		int wait = model_metric(&r->m, METRIC_WAIT_TIME);

		fill(&h, t);
		/* Rows by wait kind or sync object: the heaviest waits first, unless told. */
		if ((h.g.has[DIM_WAIT_KIND] || h.g.has[DIM_SYNC_OBJECT]) && wait >= 0 &&
		    metric_shown(r, wait))
			snprintf(sort, sizeof(sort), "%s:Self", r->m.metrics[wait].name);
		else
			snprintf(sort, sizeof(sort), "%s:Self", r->m.metrics[r->sort_metric].name);
		rc = report_sort_limit(r, t, sort);
	}
	if (!rc && !r->nrecs)
		table_add_note(t, "no samples match the filters");
	else if (!rc && h.want && !t->nrows)
		table_add_note(t, "function '%s' has no samples in this report", r->o->function);
	hotspots_release(&h);
	return rc;
}
