/* SPDX-License-Identifier: MIT */
/* The mpi view: calls, time and bytes per MPI function, rank and node; the summary's MPI part. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/cmp.h"
#include "common/options.h"
#include "common/raw-mpi.h"
#include "common/sat.h"
#include "report/key-index.h"
#include "report/report-private.h"

/*
 * The MPI metrics of -trace-mpi (MPI Time, MPI Calls, Bytes Sent, Bytes Received) carry a
 * context whose mpi_function names the call. Their samples are summed into cells per
 * (function, rank, node); the rows are the cells summed per -group-by key (function by
 * default, rank, node, or several: "rank,function"). A row whose key leaves out the rank also
 * shows how its MPI Time spreads over the ranks that made such calls: their number, the
 * least, most, mean and standard deviation of one rank's time, and which ranks.
 */

enum { V_TIME, V_CALLS, V_SENT, V_RECV, NV };
static const enum metric_id metric_ids[NV] = { METRIC_MPI_TIME, METRIC_MPI_CALLS, METRIC_MPI_SENT,
					       METRIC_MPI_RECV };

enum { D_FUNCTION, D_RANK, D_NODE, ND };
static const char *const dim_names[ND] = { "function", "rank", "node" };

struct cell {
	int fn, rank, node;
	int64_t v[NV];
};

struct mpi {
	struct report *r;
	int metric[NV];      /* index of each metric, -1 when absent */
	const char **fnames; /* the distinct MPI functions */
	size_t nfn;
	int *fn_of; /* per context: index into fnames, -1 */
	struct cell *cells;
	size_t ncells, cells_cap;
	int dims[ND], ndims;
	bool has[ND];
};

/* 64-bit key of (a, b, c) with a, c under 2^16 and b any int: -1 allowed in each. */
static uint64_t key3(int a, int b, int c)
{
	return (uint64_t)(uint16_t)(a + 1) << 48 | (uint64_t)(uint16_t)(c + 1) << 32 |
	       (uint32_t)(b + 1);
}

static int mpi_init(struct mpi *x, struct report *r)
{
	size_t i, k;

	memset(x, 0, sizeof(*x));
	x->r = r;
	for (k = 0; k < NV; k++)
		x->metric[k] = model_metric(&r->m, metric_ids[k]);
	x->fnames = calloc(r->m.ncontexts + 1, sizeof(*x->fnames));
	x->fn_of = malloc((r->m.ncontexts + 1) * sizeof(int));
	if (!x->fnames || !x->fn_of)
		return -ENOMEM;
	for (i = 0; i < r->m.ncontexts; i++) {
		const char *f = r->m.contexts[i].mpi_function;

		x->fn_of[i] = -1;
		if (!f)
			continue;
		for (k = 0; k < x->nfn && strcmp(x->fnames[k], f); k++)
			;
		if (k == x->nfn)
			x->fnames[x->nfn++] = f;
		x->fn_of[i] = (int)k;
	}
	return 0;
}

static void mpi_release(struct mpi *x)
{
	free(x->fnames);
	free(x->fn_of);
	free(x->cells);
}

/* Which metric index k of ours metric m is, -1 for none. */
static int ours(const struct mpi *x, int m)
{
	int k;

	for (k = 0; k < NV; k++)
		if (x->metric[k] == m)
			return k;
	return -1;
}

/* The kept samples of the MPI metrics, summed per (function, rank, node). */
static int fill_cells(struct mpi *x)
{
	struct report *r = x->r;
	struct hash_index map;
	size_t i;
	int rc = 0;
	bool added;

	hash_index_init(&map);
	for (i = 0; i < r->nrecs && !rc; i++) {
		const struct model_sample *s = report_sample(r, &r->recs[i]);
		int k = ours(x, s->metric), fn, rank, node, c;
		uint64_t key;

		if (k < 0 || s->context < 0 || (fn = x->fn_of[s->context]) < 0)
			continue;
		rank = report_sample_rank(r, s);
		node = report_sample_node(r, s);
		key = key3(fn, rank, node);
		c = KEY_INDEX_SLOT(&map, key, x->cells, x->ncells, x->cells_cap, &added);
		if (c < 0) {
			rc = c;
			break;
		}
		if (added)
			x->cells[c] = (struct cell){ fn, rank, node, { 0 } };
		x->cells[c].v[k] = sat_add_i64(x->cells[c].v[k], s->value);
	}
	hash_index_release(&map);
	return rc;
}

static int parse_dims(struct mpi *x)
{
	const char *p = x->r->o->group_by ? x->r->o->group_by : "function";

	while (*p) {
		size_t len = strcspn(p, ","), d;
		char word[64];

		snprintf(word, sizeof(word), "%.*s", (int)len, p);
		for (d = 0; d < ND && strcmp(word, dim_names[d]); d++)
			;
		if (d == ND) {
			const char *near = options_nearest(word, dim_names, ND);

			return report_usage_error("unknown grouping '%s' for -group-by in the mpi "
						  "view%s%s%s; use function, rank or node",
						  word, near ? " (did you mean '" : "",
						  near ? near : "", near ? "'?)" : "");
		}
		if (!x->has[d]) {
			x->has[d] = true;
			x->dims[x->ndims++] = (int)d;
		}
		p += len + (p[len] == ',');
	}
	return 0;
}

/* One row: its key, sums, and its ranks' MPI Time (a rank's sum over the row's cells). */
struct row {
	int fn, rank, node;
	int64_t v[NV];
	size_t first, n; /* its ranks: times[first .. first + n) */
};

/* One rank's MPI Time within a row. */
struct rank_time {
	int row, rank;
	int64_t ns;
};

static int rank_time_cmp(const void *pa, const void *pb)
{
	const struct rank_time *a = pa, *b = pb;

	return CMP_THEN(CMP(a->row, b->row), CMP(a->rank, b->rank));
}

struct rows {
	struct row *v;
	size_t n, cap;
	struct rank_time *times; /* by row, then rank */
	size_t ntimes, times_cap;
};

static int build_rows(struct mpi *x, struct rows *out)
{
	struct hash_index rows, ranks;
	size_t i, j;
	int rc = 0;
	bool added;

	hash_index_init(&rows);
	hash_index_init(&ranks);
	memset(out, 0, sizeof(*out));
	for (i = 0; i < x->ncells && !rc; i++) {
		const struct cell *c = &x->cells[i];
		int fn = x->has[D_FUNCTION] ? c->fn : -1, rank = x->has[D_RANK] ? c->rank : -1;
		int node = x->has[D_NODE] ? c->node : -1, k, t;
		uint64_t key = key3(fn, rank, node);

		k = KEY_INDEX_SLOT(&rows, key, out->v, out->n, out->cap, &added);
		if (k < 0) {
			rc = k;
			break;
		}
		if (added)
			out->v[k] = (struct row){ fn, rank, node, { 0 }, 0, 0 };
		for (j = 0; j < NV; j++)
			out->v[k].v[j] = sat_add_i64(out->v[k].v[j], c->v[j]);
		/* This cell's rank within the row: one entry per (row, rank). */
		key = (uint64_t)(uint32_t)k << 32 | (uint32_t)(c->rank + 1);
		t = KEY_INDEX_SLOT(&ranks, key, out->times, out->ntimes, out->times_cap, &added);
		if (t < 0) {
			rc = t;
			break;
		}
		if (added) {
			out->times[t] = (struct rank_time){ k, c->rank, 0 };
			out->v[k].n++;
		}
		out->times[t].ns = sat_add_i64(out->times[t].ns, c->v[V_TIME]);
	}
	hash_index_release(&rows);
	hash_index_release(&ranks);
	if (rc)
		return rc;
	qsort(out->times, out->ntimes, sizeof(*out->times), rank_time_cmp);
	for (i = 0, j = 0; i < out->n; i++) {
		out->v[i].first = j;
		j += out->v[i].n;
	}
	return 0;
}

static void rows_release(struct rows *rs)
{
	free(rs->v);
	free(rs->times);
}

/* The result's MPI metrics, or a usage error saying how to get them. */
static int need_mpi(const struct mpi *x)
{
	if (x->metric[V_TIME] < 0 && x->metric[V_CALLS] < 0)
		return report_usage_error("result '%s' holds no MPI calls: collect with "
					  "'pcollect -trace-mpi' (docs/pcollect.md)",
					  x->r->dir);
	return 0;
}

int view_mpi(struct report *r, struct table *t)
{
	struct mpi x;
	struct rows rs = { 0 };
	int col[ND] = { -1, -1, -1 }, kind = -1, c[NV], pct, per_call, nranks = -1;
	char name[128];
	int vmin = -1, vmax = -1, vmean = -1, vsd = -1, rmin = -1, rmax = -1, d;
	size_t i, j;
	int rc;

	if ((rc = mpi_init(&x, r)) || (rc = need_mpi(&x)) || (rc = parse_dims(&x)) ||
	    (rc = fill_cells(&x)) || (rc = build_rows(&x, &rs)))
		goto out;
	for (d = 0; d < x.ndims; d++) {
		switch (x.dims[d]) {
		case D_FUNCTION:
			col[D_FUNCTION] = table_add_col(t, "Function", TABLE_TEXT, 0);
			kind = table_add_col(t, "Kind", TABLE_TEXT, TABLE_DETAIL);
			break;
		case D_RANK:
			col[D_RANK] = table_add_col(t, "Rank", TABLE_INT, 0);
			break;
		case D_NODE:
			col[D_NODE] = table_add_col(t, "Node", TABLE_TEXT, TABLE_SHRINK);
			break;
		}
	}
	c[V_CALLS] = table_add_col(t, "Calls", TABLE_INT, 0);
	c[V_TIME] = table_add_col(t, metric_name(METRIC_MPI_TIME), TABLE_TIME, 0);
	snprintf(name, sizeof(name), "%s %%", metric_name(METRIC_MPI_TIME));
	pct = table_add_col(t, name, TABLE_PCT, TABLE_OPTIONAL);
	per_call = table_add_col(t, "Time per Call (ns)", TABLE_INT, TABLE_DETAIL);
	c[V_SENT] = table_add_col(t, metric_name(METRIC_MPI_SENT), TABLE_BYTES, 0);
	c[V_RECV] = table_add_col(t, metric_name(METRIC_MPI_RECV), TABLE_BYTES, 0);
	if (!x.has[D_RANK]) {
		nranks = table_add_col(t, "Ranks", TABLE_INT, 0);
		vmin = table_add_col(t, "Min Rank Time", TABLE_TIME, 0);
		vmax = table_add_col(t, "Max Rank Time", TABLE_TIME, 0);
		vmean = table_add_col(t, "Mean Rank Time", TABLE_TIME, 0);
		vsd = table_add_col(t, "Stddev Rank Time", TABLE_TIME, TABLE_OPTIONAL);
		rmin = table_add_col(t, "Rank of Min", TABLE_INT, TABLE_DETAIL);
		rmax = table_add_col(t, "Rank of Max", TABLE_INT, TABLE_DETAIL);
	}
	table_reserve(t, rs.n);
	for (i = 0; i < rs.n; i++) {
		const struct row *w = &rs.v[i];
		size_t row = table_add_row(t, 0);

		if (col[D_FUNCTION] >= 0) {
			table_set_text_ref(t, row, col[D_FUNCTION], x.fnames[w->fn]);
			table_set_text_ref(t, row, kind,
					   raw_mpi_kind_name(raw_mpi_function_kind(
						   raw_mpi_function_id(x.fnames[w->fn]))));
		}
		if (col[D_RANK] >= 0 && w->rank >= 0)
			table_set_int(t, row, col[D_RANK], w->rank);
		if (col[D_NODE] >= 0)
			table_set_text_ref(t, row, col[D_NODE], model_node_label(&r->m, w->node));
		for (j = 0; j < NV; j++)
			if (x.metric[j] >= 0)
				table_set_int(t, row, c[j], w->v[j]);
		if (x.metric[V_TIME] >= 0)
			table_set_pct(t, row, pct, report_pct(r, x.metric[V_TIME], w->v[V_TIME]));
		if (w->v[V_CALLS] > 0)
			table_set_int(t, row, per_call, w->v[V_TIME] / w->v[V_CALLS]);
		if (nranks >= 0 && w->n) {
			const struct rank_time *rt = rs.times + w->first;
			size_t lo = 0, hi = 0;
			double mean = 0, var = 0;

			for (j = 0; j < w->n; j++) {
				mean += (double)rt[j].ns;
				if (rt[j].ns < rt[lo].ns)
					lo = j;
				if (rt[j].ns > rt[hi].ns)
					hi = j;
			}
			mean /= (double)w->n;
			for (j = 0; j < w->n; j++)
				var += ((double)rt[j].ns - mean) * ((double)rt[j].ns - mean);
			table_set_int(t, row, nranks, (int64_t)w->n);
			table_set_int(t, row, vmin, rt[lo].ns);
			table_set_int(t, row, vmax, rt[hi].ns);
			table_set_int(t, row, vmean, llround(mean));
			table_set_int(t, row, vsd, llround(sqrt(var / (double)w->n)));
			if (rt[lo].rank >= 0)
				table_set_int(t, row, rmin, rt[lo].rank);
			if (rt[hi].rank >= 0)
				table_set_int(t, row, rmax, rt[hi].rank);
		}
	}
	if (!rs.n)
		table_add_note(t, "no MPI calls match the filters");
	rc = report_sort_limit(r, t, metric_name(METRIC_MPI_TIME));
out:
	rows_release(&rs);
	mpi_release(&x);
	return rc;
}

/* ---- the summary's MPI section --------------------------------------------------------- */

/*
 * A frame of the MPI library or of its interface: the C functions (MPI_*, PMPI_*), their
 * Fortran bindings (mpi_*, pmpi_*, Open MPI's ompi_*_f) and the shims' wrappers (named as
 * the MPI functions). A CPU sample with one on its stack was taken inside an MPI call.
 */
static bool is_mpi_function(const char *name)
{
	size_t n = strlen(name);

	return !strncmp(name, "MPI_", 4) || !strncmp(name, "PMPI_", 5) ||
	       !strncmp(name, "mpi_", 4) || !strncmp(name, "pmpi_", 5) ||
	       (!strncmp(name, "ompi_", 5) && n > 7 && !strcmp(name + n - 2, "_f"));
}

/* Per model stack: 1 when an MPI function is on it. */
static unsigned char *stacks_in_mpi(const struct model *m)
{
	unsigned char *in = calloc(m->nstacks + 1, 1), *fn = calloc(m->nfunctions + 1, 1);
	size_t i;

	if (!in || !fn) {
		free(in);
		free(fn);
		return NULL;
	}
	for (i = 0; i < m->nfunctions; i++)
		fn[i] = is_mpi_function(m->functions[i].name);
	for (i = 0; i < m->nstacks; i++) {
		int s = m->stack_order[i], p = m->stacks[s].parent;

		in[s] = (p >= 0 && in[p]) || fn[m->frames[m->stacks[s].frame].function];
	}
	free(fn);
	return in;
}

struct rank_cpu {
	int rank;
	int64_t cpu, in_mpi, mpi;
};

struct site {
	int fn, caller;
	int64_t ns;
};

static int site_cmp(const void *pa, const void *pb)
{
	const struct site *a = pa, *b = pb;

	return CMP_THEN(CMP(b->ns, a->ns), CMP_THEN(CMP(a->fn, b->fn), CMP(a->caller, b->caller)));
}

/* The rank's entry, added when new; NULL when memory is short. */
static struct rank_cpu *rank_get(struct rank_cpu **v, size_t *n, size_t *cap,
				 struct hash_index *map, int rank)
{
	bool added;
	int k = key_index_slot(map, (uint32_t)(rank + 1), v, n, cap, sizeof(**v), &added);

	if (k < 0)
		return NULL;
	if (added)
		(*v)[k] = (struct rank_cpu){ rank, 0, 0, 0 };
	return &(*v)[k];
}

int report_mpi_summary(struct report *r, struct report_mpi_summary *out)
{
	int cpu = model_metric(&r->m, METRIC_CPU_TIME);
	struct rank_cpu *ranks = NULL;
	struct site *sites = NULL;
	size_t nranks = 0, ranks_cap = 0, nsites = 0, sites_cap = 0, i;
	struct hash_index rmap, smap;
	unsigned char *in = NULL;
	struct mpi x;
	bool added;
	int rc;

	memset(out, 0, sizeof(*out));
	out->slowest = out->fastest = -1;
	hash_index_init(&rmap);
	hash_index_init(&smap);
	if ((rc = mpi_init(&x, r)))
		goto out;
	if (x.metric[V_TIME] < 0) {
		rc = 1;
		goto out;
	}
	if (!(in = stacks_in_mpi(&r->m))) {
		rc = -ENOMEM;
		goto out;
	}
	for (i = 0; i < r->nrecs; i++) {
		const struct model_sample *s = report_sample(r, &r->recs[i]);
		struct rank_cpu *rk;
		int fn, node, caller, k;
		uint64_t key;

		if (s->metric != cpu && s->metric != x.metric[V_TIME])
			continue;
		if (!(rk = rank_get(&ranks, &nranks, &ranks_cap, &rmap,
				    report_sample_rank(r, s)))) {
			rc = -ENOMEM;
			goto out;
		}
		if (s->metric == cpu) {
			rk->cpu = sat_add_i64(rk->cpu, s->value);
			if (in[s->stack])
				rk->in_mpi = sat_add_i64(rk->in_mpi, s->value);
			continue;
		}
		rk->mpi = sat_add_i64(rk->mpi, s->value);
		out->mpi_ns = sat_add_i64(out->mpi_ns, s->value);
		if (s->context < 0 || (fn = x.fn_of[s->context]) < 0)
			continue;
		/* The call site: the function the MPI call was made from (the leaf's caller). */
		node = r->tree.nodes[r->recs[i].node].parent;
		caller = node > 0 ? r->tree.nodes[node].func : -1;
		key = (uint64_t)(uint32_t)fn << 32 | (uint32_t)(caller + 1);
		k = KEY_INDEX_SLOT(&smap, key, sites, nsites, sites_cap, &added);
		if (k < 0) {
			rc = k;
			goto out;
		}
		if (added)
			sites[k] = (struct site){ fn, caller, 0 };
		sites[k].ns = sat_add_i64(sites[k].ns, s->value);
	}
	out->nranks = (int)nranks;
	out->elapsed_ns = model_meta_int(&r->m, "elapsed_ns", 0);
	if (nranks && out->elapsed_ns > 0)
		out->share = (double)out->mpi_ns / ((double)nranks * (double)out->elapsed_ns);
	/* Compute: CPU time outside MPI calls. The slowest rank computes the most. */
	for (i = 0; i < nranks; i++) {
		int64_t c = ranks[i].cpu - ranks[i].in_mpi;

		out->mean_ns = sat_add_i64(out->mean_ns, c);
		if (out->slowest < 0 || c > out->slowest_ns ||
		    (c == out->slowest_ns && ranks[i].rank < out->slowest)) {
			out->slowest = ranks[i].rank;
			out->slowest_ns = c;
		}
		if (out->fastest < 0 || c < out->fastest_ns ||
		    (c == out->fastest_ns && ranks[i].rank < out->fastest)) {
			out->fastest = ranks[i].rank;
			out->fastest_ns = c;
		}
	}
	if (nranks) {
		out->mean_ns /= (int64_t)nranks;
		out->has_compute = cpu >= 0;
		if (out->slowest_ns > 0)
			out->imbalance =
				(double)(out->slowest_ns - out->mean_ns) / (double)out->slowest_ns;
	}
	qsort(sites, nsites, sizeof(*sites), site_cmp);
	for (i = 0; i < nsites && i < REPORT_MPI_SITES; i++)
		out->sites[out->nsites++] =
			(struct report_mpi_site){ x.fnames[sites[i].fn], sites[i].caller,
						  sites[i].ns };
	rc = 0;
out:
	hash_index_release(&rmap);
	hash_index_release(&smap);
	free(in);
	free(ranks);
	free(sites);
	mpi_release(&x);
	return rc;
}
