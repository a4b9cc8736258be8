/* SPDX-License-Identifier: MIT */
/* The timeline view: each thread's utilization over time, per time bucket: the share of the
   bucket its CPU time, its waits (and any other metric in ns) fill, read from the timeline. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/sat.h"
#include "report/filter.h"
#include "report/report-private.h"

struct timeline {
	struct report *r;
	const struct report_filter *filter;
	int64_t from, to, len; /* ns: the range and one bucket's length */
	size_t nb;             /* buckets */
	int *col;              /* per metric: its index among the shown ns metrics, or -1 */
	size_t ncols;
	int64_t *ns;      /* per thread, bucket and shown ns metric */
	bool *active;     /* per thread: a row of it was kept */
	int64_t last_end; /* the latest end of a kept row (the range's end by default) */
};

/* Spread value over [a, b) across the buckets it overlaps, in proportion. */
static void spread(struct timeline *tl, int thread, int col, int64_t a, int64_t b, int64_t value)
{
	int64_t lo = a > tl->from ? a : tl->from, hi = b < tl->to ? b : tl->to;
	size_t i;

	if (hi <= lo)
		return;
	for (i = (size_t)((lo - tl->from) / tl->len); i < tl->nb; i++) {
		int64_t s = tl->from + (int64_t)i * tl->len;
		int64_t e = i + 1 == tl->nb ? tl->to : s + tl->len;
		int64_t x = lo > s ? lo : s, y = hi < e ? hi : e;

		if (x >= hi)
			break;
		if (y > x) {
			int64_t *cell =
				&tl->ns[((size_t)thread * tl->nb + i) * tl->ncols + (size_t)col];
			double part = (double)value * (double)(y - x) / (double)(b - a);

			/* Damaged values must not wrap: the parts and their sums saturate. */
			*cell = sat_add_i64(*cell, part >= 9.2e18    ? INT64_MAX
						   : part <= -9.2e18 ? INT64_MIN
								     : (int64_t)part);
		}
	}
}

/*
 * A row of the timeline: a CPU sample stands for the CPU time its thread used up to its
 * time, a wait for the time from its start, any other event is a moment.
 */
static int take_row(void *ctx, const struct model_sample *s, int64_t t)
{
	struct timeline *tl = ctx;
	const struct model_metric *mt = &tl->r->m.metrics[s->metric];
	int col = tl->col[s->metric];
	int64_t a = t, b = t + 1;

	if (col < 0 || s->thread < 0 || s->value <= 0 || !report_filter_keep(tl->r, tl->filter, s))
		return 0;
	if (!strcmp(mt->kind, "cpu"))
		a = sat_add_i64(t, -s->value), b = t;
	else if (!strcmp(mt->kind, "wait"))
		b = sat_add_i64(t, s->value);
	if (b > tl->last_end)
		tl->last_end = b;
	if (!tl->ns) {
		tl->active[s->thread] = true; /* the first pass: the range's end */
		return 0;
	}
	tl->active[s->thread] = true;
	spread(tl, s->thread, col, a, b, s->value);
	return 0;
}

/* The range: -time-filter's, else the run (meta.elapsed_ns, else to the last row's end). */
static int time_range(struct timeline *tl, char *err, size_t err_size)
{
	struct report *r = tl->r;
	int64_t from = 0, to = INT64_MAX;
	bool open_end;
	size_t i;
	int rc;

	if (r->o->time_filter && (rc = report_parse_time_filter(r->o->time_filter, &from, &to)))
		return rc;
	open_end = to == INT64_MAX;
	if (open_end && (to = model_meta_int(&r->m, "elapsed_ns", 0)) <= from) {
		tl->last_end = INT64_MIN;
		rc = model_scan_timeline(&r->m, INT64_MAX, take_row, tl, err, err_size);
		if (rc)
			return rc;
		to = tl->last_end;
	}
	/* A node result that several ranks share holds one launcher's elapsed time: a rank that
	   ran on after it ends the range. */
	for (i = 0; open_end && i < r->m.nthreads; i++)
		if (r->m.threads[i].end_ns > to)
			to = r->m.threads[i].end_ns;
	tl->from = from;
	tl->to = to > from ? to : from + 1;
	tl->nb = (size_t)(r->o->time_buckets > 0 ? r->o->time_buckets : REPORT_TIME_BUCKETS);
	tl->len = (tl->to - tl->from) / (int64_t)tl->nb;
	if (tl->len < 1) {
		tl->len = 1;
		tl->nb = (size_t)(tl->to - tl->from);
	}
	return 0;
}

static void fill(struct timeline *tl, struct table *t)
{
	struct report *r = tl->r;
	int start = table_add_col(t, "Start", TABLE_TIME, 0);
	int end = table_add_col(t, "End", TABLE_TIME, 0);
	int name = table_add_col(t, "Thread", TABLE_TEXT, TABLE_SHRINK);
	int tid = table_add_col(t, "TID", TABLE_INT, 0);
	int rank = -1, cols[REPORT_MAX_METRICS];
	size_t i, b, k;
	char buf[512];

	/* A job's threads: their rank tells them apart (TIDs repeat across nodes). */
	for (i = 0; i < r->m.nprocesses && rank < 0; i++)
		if (r->m.processes[i].rank >= 0)
			rank = table_add_col(t, "Rank", TABLE_INT, 0);
	for (i = 0; i < r->nshown; i++) {
		int m = r->shown[i];

		if (tl->col[m] < 0)
			continue;
		snprintf(buf, sizeof(buf), "%s Share", r->m.metrics[m].name);
		cols[tl->col[m]] = table_add_col(t, buf, TABLE_PCT, 0);
	}
	for (i = 0; i < r->m.nthreads; i++) {
		const struct model_thread *th = &r->m.threads[i];

		if (!tl->active[i])
			continue;
		for (b = 0; b < tl->nb; b++) {
			int64_t s = tl->from + (int64_t)b * tl->len;
			int64_t e = b + 1 == tl->nb ? tl->to : s + tl->len;
			size_t row = table_add_row(t, 0);

			table_set_int(t, row, start, s);
			table_set_int(t, row, end, e);
			table_set_text(t, row, name, report_thread_name(th, buf, sizeof(buf)));
			table_set_int(t, row, tid, th->tid);
			if (rank >= 0 && th->process >= 0 && r->m.processes[th->process].rank >= 0)
				table_set_int(t, row, rank, r->m.processes[th->process].rank);
			for (k = 0; k < tl->ncols; k++) {
				double pct = 100.0 *
					     (double)tl->ns[(i * tl->nb + b) * tl->ncols + k] /
					     (double)(e - s);

				/* A wait that spins before it sleeps is CPU and Wait at once. */
				table_set_pct(t, row, cols[k], pct > 100.0 ? 100.0 : pct);
			}
		}
	}
}

int view_timeline(struct report *r, struct table *t)
{
	struct timeline tl = { .r = r };
	struct report_filter *f = NULL;
	char err[1024];
	size_t i;
	int rc;

	/* The shown metrics measured in time: each a share of the bucket. */
	tl.col = malloc((r->m.nmetrics + 1) * sizeof(*tl.col));
	if (!tl.col)
		return -ENOMEM;
	for (i = 0; i < r->m.nmetrics; i++)
		tl.col[i] = -1;
	for (i = 0; i < r->nshown; i++)
		if (r->m.metrics[r->shown[i]].unit == MODEL_UNIT_NS &&
		    r->m.metrics[r->shown[i]].aggregation == MODEL_AGG_SUM)
			tl.col[r->shown[i]] = (int)tl.ncols++;
	if (!tl.ncols) {
		free(tl.col);
		/* memory-consumption: no time metric, the live heap and RSS over time instead */
		if (model_metric(&r->m, METRIC_MEM_ALLOCATED) >= 0)
			return view_timeline_memory(r, t);
		return report_usage_error("the timeline view shows metrics measured in time; none "
					  "of those asked for is");
	}
	rc = report_filter_open(r, &f);
	if (rc) {
		free(tl.col);
		return rc;
	}
	tl.filter = f;
	tl.active = calloc(r->m.nthreads + 1, sizeof(*tl.active));
	if (!tl.active) {
		rc = -ENOMEM;
		goto out;
	}
	err[0] = '\0';
	rc = time_range(&tl, err, sizeof(err));
	if (!rc) {
		memset(tl.active, 0, (r->m.nthreads + 1) * sizeof(*tl.active));
		tl.ns = calloc((r->m.nthreads + 1) * tl.nb * tl.ncols, sizeof(*tl.ns));
		rc = tl.ns ? model_scan_timeline(&r->m, tl.to, take_row, &tl, err, sizeof(err))
			   : -ENOMEM;
	}
	if (rc && err[0])
		log_error("%s", err);
	if (!rc) {
		fill(&tl, t);
		if (!t->nrows)
			table_add_note(t, "no samples match the filters in this time range");
	}
out:
	free(tl.col);
	free(tl.ns);
	free(tl.active);
	report_filter_close(f);
	return rc;
}
