/* SPDX-License-Identifier: MIT */
/* The HTML report's MPI part: the mpi view's table, functions' values per rank, lanes by rank. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/metric.h"
#include "common/sat.h"
#include "report/export-html.h"

/*
 * A parallel job's page (a result whose processes have MPI ranks) carries, besides what every
 * page has: the mpi view's rows as preport prints them (when -trace-mpi recorded MPI calls);
 * for the HTML_RANK_FUNCTIONS heaviest functions their self and total per rank and metric, so
 * the page can draw one function across ranks (Tau's ParaProf's bars); and the timeline's
 * thread lanes summed per rank (the first HTML_RANK_LANES ranks'). Ranks beyond HTML_RANKS are
 * left out (the page says how many).
 */

/* The mpi view's table (its default grouping, by function), cells as its text prints them. */
static int put_table(struct html *h)
{
	struct report *r = &h->r[0];
	struct report_opts o = *r->o;
	const struct report_opts *saved = r->o;
	struct table t;
	char num[TABLE_NUM_MAX];
	const char *s;
	size_t row, n = 0;
	int col, rc;

	if (model_metric(&r->m, METRIC_MPI_TIME) < 0 && model_metric(&r->m, METRIC_MPI_CALLS) < 0) {
		outbuf_puts(h->b, "\"table\": null");
		return 0;
	}
	/* The page's -group-by (such as rank, for the flame graph) is not the table's. */
	o.group_by = NULL;
	r->o = &o;
	table_init(&t);
	rc = view_mpi(r, &t);
	r->o = saved;
	if (!rc && t.failed)
		rc = -ENOMEM;
	outbuf_puts(h->b, "\"table\": {\"cols\": [");
	for (col = 0; !rc && col < (int)t.ncols; col++) {
		if (t.cols[col].flags & TABLE_MACHINE)
			continue;
		outbuf_puts(h->b, n++ ? "," : "");
		html_put_str(h->b, t.cols[col].name);
	}
	outbuf_puts(h->b, "], \"rows\": [");
	for (row = 0; !rc && row < t.nrows; row++) {
		if (t.rowflags[row] & (TABLE_ROW_SEPARATOR | TABLE_ROW_TEXT_ONLY))
			continue;
		outbuf_puts(h->b, row ? ",\n[" : "\n[");
		for (col = 0, n = 0; col < (int)t.ncols; col++) {
			size_t len;

			if (t.cols[col].flags & TABLE_MACHINE)
				continue;
			len = table_cell_text(&t, row, col, true, num, &s);
			outbuf_puts(h->b, n++ ? "," : "");
			outbuf_json(h->b, s, len, OUTBUF_JSON_HTML);
		}
		outbuf_putc(h->b, ']');
		outbuf_spill(h->b);
	}
	outbuf_puts(h->b, "]}");
	table_release(&t);
	return rc;
}

static int cmp_int(const void *pa, const void *pb)
{
	int a = *(const int *)pa, b = *(const int *)pb;

	return (a > b) - (a < b);
}

/* The job's ranks, sorted (at most HTML_RANKS), into *out; how many, or -ENOMEM. */
static int job_ranks(const struct model *m, int **out, size_t *more)
{
	int *v = malloc((m->nprocesses + 1) * sizeof(int));
	size_t i, n = 0, k = 0;

	*out = v;
	*more = 0;
	if (!v)
		return -ENOMEM;
	for (i = 0; i < m->nprocesses; i++)
		if (m->processes[i].rank >= 0 && m->processes[i].rank <= INT32_MAX)
			v[n++] = (int)m->processes[i].rank;
	qsort(v, n, sizeof(int), cmp_int);
	for (i = 0; i < n; i++)
		if (!k || v[i] != v[k - 1])
			v[k++] = v[i];
	if (k > HTML_RANKS) {
		*more = k - HTML_RANKS;
		k = HTML_RANKS;
	}
	return (int)k;
}

/* The index of rank in ranks[0..n), -1 when left out. */
static int rank_index(const int *ranks, int n, int64_t rank)
{
	int lo = 0, hi = n - 1;

	while (lo <= hi) {
		int mid = (lo + hi) / 2;

		if (ranks[mid] == rank)
			return mid;
		if (ranks[mid] < rank)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return -1;
}

static int cmp_fn_total(const void *pa, const void *pb, void *arg)
{
	const struct html *h = arg;
	int a = *(const int *)pa, b = *(const int *)pb;
	int64_t va = h->hot[(size_t)a * 2 * h->nmetrics + h->nmetrics];
	int64_t vb = h->hot[(size_t)b * 2 * h->nmetrics + h->nmetrics];

	if (va != vb)
		return va > vb ? -1 : 1;
	return a < b ? -1 : a > b;
}

/* The rank of thread t (-1: none). */
static int64_t thread_rank(const struct model *m, int t)
{
	int p = t >= 0 ? m->threads[t].process : -1;

	return p >= 0 ? m->processes[p].rank : -1;
}

/*
 * Self and total of the heaviest functions per rank and metric: each sample once per function
 * on its stack. val: per function slot, metric, rank: self then total (2 * nf * nm * nranks).
 */
static int per_rank(struct html *h, const int *ranks, int nranks, const int *slot, size_t nf,
		    int64_t *val)
{
	struct report *r = &h->r[0];
	const struct cct *t = &r->tree;
	size_t nm = h->nmetrics, i, k, half = nf * nm * (size_t)nranks;
	size_t *stamp = calloc(nf + 1, sizeof(size_t));

	if (!stamp)
		return -ENOMEM;
	for (i = 0; i < r->nrecs; i++) {
		const struct model_sample *s = report_sample(r, &r->recs[i]);
		int ri = rank_index(ranks, nranks, report_sample_rank(r, s)), n = r->recs[i].node;
		bool leaf = true;

		for (k = 0; k < nm && h->metrics[0][k] != s->metric; k++)
			;
		if (ri < 0 || k == nm || n <= 0)
			continue;
		for (; n > 0; n = t->nodes[n].parent, leaf = false) {
			int f = h->nodefn[0][n], sl = f >= 0 ? slot[f] : -1;
			size_t at;

			if (sl < 0)
				continue;
			at = ((size_t)sl * nm + k) * (size_t)nranks + (size_t)ri;
			if (leaf)
				val[at] = sat_add_i64(val[at], s->value);
			/* Once per sample: a recursive function's frames count once. */
			if (stamp[sl] != i + 1) {
				stamp[sl] = i + 1;
				val[half + at] = sat_add_i64(val[half + at], s->value);
			}
		}
	}
	free(stamp);
	return 0;
}

static void put_values(struct html *h, const char *key, const int64_t *v, size_t nf, int nranks,
		       const int64_t *scale)
{
	size_t f, k;
	int i;

	outbuf_printf(h->b, ", \"%s\": [", key);
	for (f = 0; f < nf; f++) {
		outbuf_puts(h->b, f ? ",\n[" : "\n[");
		for (k = 0; k < h->nmetrics; k++) {
			outbuf_puts(h->b, k ? ",[" : "[");
			for (i = 0; i < nranks; i++) {
				if (i)
					outbuf_putc(h->b, ',');
				outbuf_int(h->b,
					   v[(f * h->nmetrics + k) * (size_t)nranks + (size_t)i] /
						   scale[k]);
			}
			outbuf_putc(h->b, ']');
		}
		outbuf_putc(h->b, ']');
		outbuf_spill(h->b);
	}
	outbuf_putc(h->b, ']');
}

/* The timeline's thread lanes summed per rank: [per metric [per slice]] per rank. */
static int put_rank_lanes(struct html *h, const int *ranks, int nranks, const int64_t *scale)
{
	size_t w = h->nmetrics * HTML_TIMELINE_BINS, i, j, k;
	int64_t *bins;
	int ri;

	if (!h->lanes) {
		outbuf_puts(h->b, ", \"lanes\": null");
		return 0;
	}
	if (nranks > HTML_RANK_LANES)
		nranks = HTML_RANK_LANES;
	if (!(bins = calloc((size_t)nranks * w + 1, sizeof(int64_t))))
		return -ENOMEM;
	for (i = 0; i < h->nlanes; i++) {
		const struct html_lane *l = &h->lanes[i];

		ri = rank_index(ranks, nranks, thread_rank(&h->r[0].m, l->thread));
		for (j = 0; l->bins && ri >= 0 && j < w; j++)
			bins[(size_t)ri * w + j] =
				sat_add_i64(bins[(size_t)ri * w + j], l->bins[j]);
	}
	outbuf_printf(h->b, ", \"lanes\": [");
	for (ri = 0; ri < nranks; ri++) {
		outbuf_puts(h->b, ri ? ",\n[" : "\n[");
		for (k = 0; k < h->nmetrics; k++) {
			outbuf_puts(h->b, k ? ",[" : "[");
			for (i = 0; i < h->tl_bins; i++) {
				if (i)
					outbuf_putc(h->b, ',');
				outbuf_int(h->b, bins[(size_t)ri * w + k * HTML_TIMELINE_BINS + i] /
							 scale[k]);
			}
			outbuf_putc(h->b, ']');
		}
		outbuf_putc(h->b, ']');
		outbuf_spill(h->b);
	}
	outbuf_putc(h->b, ']');
	free(bins);
	return 0;
}

int html_put_mpi(struct html *h, const int64_t *scale)
{
	int *ranks = NULL, *by = NULL, *slot = NULL, nranks = 0, rc = 0;
	int64_t *val = NULL;
	size_t more, i, n = 0, nf;

	if (h->nr != 1 || (nranks = job_ranks(&h->r[0].m, &ranks, &more)) <= 0) {
		free(ranks);
		outbuf_puts(h->b, "\"mpi\": null,\n");
		return nranks < 0 ? nranks : 0;
	}
	by = malloc((h->nfn + 1) * sizeof(int));
	slot = malloc((h->nfn + 1) * sizeof(int));
	if (!by || !slot) {
		rc = -ENOMEM;
		goto out;
	}
	for (i = 0; i < h->nfn; i++) {
		slot[i] = -1;
		if (h->fn[i].kind != 2 && h->hot[i * 2 * h->nmetrics + h->nmetrics] > 0)
			by[n++] = (int)i;
	}
	qsort_r(by, n, sizeof(int), cmp_fn_total, h);
	nf = n < HTML_RANK_FUNCTIONS ? n : HTML_RANK_FUNCTIONS;
	for (i = 0; i < nf; i++)
		slot[by[i]] = (int)i;
	val = calloc(2 * (nf * h->nmetrics * (size_t)nranks) + 1, sizeof(int64_t));
	if (!val || (rc = per_rank(h, ranks, nranks, slot, nf, val))) {
		rc = rc ? rc : -ENOMEM;
		goto out;
	}
	outbuf_puts(h->b, "\"mpi\": {");
	if ((rc = put_table(h)))
		goto out;
	outbuf_printf(h->b, ", \"more_ranks\": %zu, \"more_lanes\": %d, \"ranks\": [", more,
		      nranks > HTML_RANK_LANES ? nranks - HTML_RANK_LANES : 0);
	for (i = 0; i < (size_t)nranks; i++)
		outbuf_printf(h->b, "%s%d", i ? "," : "", ranks[i]);
	outbuf_puts(h->b, "], \"functions\": [");
	for (i = 0; i < nf; i++)
		outbuf_printf(h->b, "%s%d", i ? "," : "", by[i]);
	outbuf_putc(h->b, ']');
	put_values(h, "self", val, nf, nranks, scale);
	put_values(h, "total", val + nf * h->nmetrics * (size_t)nranks, nf, nranks, scale);
	if (!(rc = put_rank_lanes(h, ranks, nranks, scale)))
		outbuf_puts(h->b, "},\n");
out:
	free(val);
	free(slot);
	free(by);
	free(ranks);
	return rc;
}
