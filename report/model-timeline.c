/* SPDX-License-Identifier: MIT */
/* The timeline of a result: its rows in a time range, summed as samples or one by one. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "common/grow.h"
#include "common/log.h"
#include "common/sat.h"
#include "report/bigmem.h"
#include "report/model-private.h"
#include "report/scan.h"

/*
 * A time filter reads the timeline rows of its range, cut in two by time so that the helper
 * thread reads one half while this one reads the other.
 */
#define PIECES 2

/* Schema 1 stores weights: one weight is one sampling interval. */
static int64_t value_scale(const struct model *m)
{
	return m->schema_version < 2 ? m->interval_ns : 1;
}

/* The first and last time of the timeline (through its index); false when unreadable. */
static bool time_range(struct loader *l, int64_t *lo, int64_t *hi)
{
	sqlite3_stmt *st;
	bool ok = false;

	if (model_prepare(l,
			  "SELECT (SELECT min(time_ns) FROM timeline), "
			  "(SELECT max(time_ns) FROM timeline)",
			  &st))
		return false;
	if (sqlite3_step(st) == SQLITE_ROW) {
		*lo = sqlite3_column_int64(st, 0);
		*hi = sqlite3_column_int64(st, 1);
		if (sqlite3_column_type(st, 0) == SQLITE_NULL) {
			*lo = 1; /* empty */
			*hi = 0;
		}
		ok = true;
	}
	sqlite3_finalize(st);
	return ok;
}

/* The samples of one (metric, thread, context) in a time range, chained per stack. */
struct slot {
	int thread, metric, context, next;
	int64_t count, value;
};

/* The columns of the scans: TL_THREAD to TL_VALUE. */
#define SCAN_COLS (TL_NCOLS - TL_THREAD)
#define SCAN(c)   ((c)-TL_THREAD)

/*
 * Aggregate the timeline rows of sc per metric, thread, context and stack into m->samples,
 * in the samples table's order (metric, thread, stack). Peak metrics are left out.
 */
static int aggregate_timeline(struct model *m, const struct scan *sc)
{
	size_t n = 0, nslots = 0, i, k, j, nt = m->nthreads + 1;
	size_t nbuckets = m->nmetrics * nt; /* per (metric, thread + 1) */
	int *head = big_malloc((m->nstacks + 1) * sizeof(int));
	size_t *pos = calloc(nbuckets + 2, sizeof(size_t));
	struct slot *slots;
	struct model_sample *rows = NULL;
	int rc = -ENOMEM;
	int64_t scale = value_scale(m);

	for (k = 0; k < PIECES; k++)
		n += sc[k].n;
	slots = big_malloc((n + 1) * sizeof(*slots));
	if (!head || !pos || !slots)
		goto out;
	memset(head, 0xff, (m->nstacks + 1) * sizeof(int));
	for (k = 0; k < PIECES; k++) {
		for (j = 0; j < sc[k].n; j++) {
			const int64_t *row = sc[k].rows + SCAN_COLS * j;
			int64_t sid = row[SCAN(TL_STACK)], tid = row[SCAN(TL_THREAD)];
			int stack = sid == SCAN_NULL ? -1 : model_index(m, MAP_STACKS, sid);
			int metric = model_index(m, MAP_METRICS, row[SCAN(TL_METRIC)]);
			int context = model_context_index(m, row[SCAN(TL_CONTEXT)]);
			int thread, q;

			if (stack < 0 || metric < 0)
				continue;
			if (m->metrics[metric].aggregation == MODEL_AGG_PEAK)
				continue;
			thread = tid == SCAN_NULL ? -1 : model_index(m, MAP_THREADS, tid);
			q = head[stack];
			while (q >= 0 && (slots[q].thread != thread || slots[q].metric != metric ||
					  slots[q].context != context))
				q = slots[q].next;
			if (q < 0) {
				q = (int)nslots++;
				slots[q] =
					(struct slot){ thread, metric, context, head[stack], 0, 0 };
				head[stack] = q;
				pos[(size_t)metric * nt + (size_t)(thread + 1) + 1]++;
			}
			slots[q].count++;
			slots[q].value = sat_add_i64(slots[q].value,
						     sat_mul_i64(row[SCAN(TL_VALUE)], scale));
		}
	}
	rows = big_calloc(nslots ? nslots : 1, sizeof(*rows));
	if (!rows)
		goto out;
	/* A counting sort by (metric, thread); stacks in order within each. */
	for (i = 1; i <= nbuckets; i++)
		pos[i] += pos[i - 1];
	for (i = 0; i < m->nstacks; i++) {
		int q;

		for (q = head[i]; q >= 0; q = slots[q].next)
			rows[pos[(size_t)slots[q].metric * nt + (size_t)(slots[q].thread + 1)]++] =
				(struct model_sample){
					.thread = slots[q].thread,
					.stack = (int)i,
					.metric = slots[q].metric,
					.context = slots[q].context,
					.count = slots[q].count,
					.value = slots[q].value,
				};
	}
	free(m->samples);
	m->samples = rows;
	m->nsamples = nslots;
	rc = 0;
out:
	free(head);
	free(pos);
	free(slots);
	return rc;
}

int model_load_time_range(struct model *m, int64_t from_ns, int64_t to_ns, bool *skipped, char *err,
			  size_t err_size)
{
	struct loader l = { .m = m, .db = m->db, .err = err, .err_size = err_size };
	struct scan sc[PIECES];
	struct scan_job *jobs[PIECES];
	struct scan_jobs set = {
		.jobs = jobs, .n = PIECES, .db_path = m->db_path, .views = m->db_views
	};
	int64_t lo, hi, total = model_meta_int(m, "samples_total", 0);
	char sql[512];
	uint64_t step;
	size_t expect = 0, k;
	int rc;

	if (m->nparts)
		return model_job_time_range(m, from_ns, to_ns, skipped, err, err_size);
	/* A window's peak is not a sum of its events: peak metrics are left out, all of them. */
	for (k = 0; skipped && k < m->nmetrics; k++)
		if (m->metrics[k].aggregation == MODEL_AGG_PEAK)
			skipped[k] = true;
	if (!time_range(&l, &lo, &hi))
		return model_error(&l, "cannot read the timeline of database '%s'", m->db_path);
	if ((rc = model_select(&l, &model_timeline_table, TL_THREAD, SCAN_COLS,
			       "FROM timeline WHERE time_ns BETWEEN ?1 AND ?2", sql, sizeof(sql),
			       NULL)))
		return rc;
	if (to_ns <= from_ns || to_ns - 1 < lo || from_ns > hi) {
		lo = 1; /* nothing in range */
		hi = 0;
	} else {
		/* Rows expected, were samples spread evenly over time. */
		if (hi > lo && total > 0)
			expect = (size_t)((double)total *
					  ((double)(to_ns - 1 < hi ? to_ns - 1 : hi) -
					   (double)(from_ns > lo ? from_ns : lo)) /
					  ((double)hi - (double)lo) / PIECES);
		if (from_ns > lo)
			lo = from_ns;
		if (to_ns - 1 < hi)
			hi = to_ns - 1;
	}
	/* Piece k starts at lo + k * step; the last one ends at hi. An empty range: [1, 0]. */
	step = lo <= hi ? ((uint64_t)hi - (uint64_t)lo) / PIECES : 0;
	for (k = 0; k < PIECES; k++) {
		int64_t start = (int64_t)((uint64_t)lo + k * step);
		int64_t end = k + 1 < PIECES ? (int64_t)((uint64_t)start + step) - 1 : hi;

		/* Thread and stack tell NULL from 0. */
		scan_init(&sc[k], sql, SCAN_COLS, 1u << SCAN(TL_THREAD) | 1u << SCAN(TL_STACK),
			  start, end, expect + 1024);
		jobs[k] = &sc[k].job;
	}
	scan_jobs_start(&set);
	rc = scan_jobs_finish(&set, m->db);
	for (k = 0; rc && k < PIECES; k++)
		if (sc[k].job.rc) {
			rc = sc[k].job.rc;
			if (rc != -ENOMEM)
				err_set(err, err_size, "cannot read database '%s': %s", m->db_path,
					sc[k].job.err);
			break;
		}
	if (!rc)
		rc = aggregate_timeline(m, sc);
	if (rc == -ENOMEM)
		err_set(err, err_size, "cannot load the timeline of database '%s': %s", m->db_path,
			strerror(ENOMEM));
	for (k = 0; k < PIECES; k++)
		scan_release(&sc[k]);
	return rc;
}

/*
 * Prepare the timeline's rows (every column, in TL_* order) that where selects, binding ?1
 * and ?2 to a and b.
 */
static int timeline_rows(struct loader *l, const char *where, int64_t a, int64_t b,
			 sqlite3_stmt **st)
{
	char sql[512];
	int rc = model_select(l, &model_timeline_table, 0, TL_NCOLS, where, sql, sizeof(sql), NULL);

	if (!rc)
		rc = model_prepare(l, sql, st);
	if (rc)
		return rc;
	sqlite3_bind_int64(*st, 1, a);
	sqlite3_bind_int64(*st, 2, b);
	return 0;
}

/* A timeline row's reference to threads or stacks: -1 for NULL or an unknown id. */
static int timeline_ref(const struct model *m, sqlite3_stmt *st, int col, enum model_map map)
{
	int64_t id = sqlite3_column_int64(st, col);

	/* NULL reads as 0; only then is the type worth asking. */
	return !id && sqlite3_column_type(st, col) == SQLITE_NULL ? -1 : model_index(m, map, id);
}

int model_load_events(struct model *m, int64_t from_ns, int64_t to_ns, struct model_event **out,
		      size_t *n, char *err, size_t err_size)
{
	struct loader l = { .m = m, .db = m->db, .err = err, .err_size = err_size };
	int64_t scale = value_scale(m);
	struct model_event *ev = NULL;
	size_t cap = 0, k = 0;
	sqlite3_stmt *st;
	int rc;

	if (m->nparts)
		return model_job_events(m, from_ns, to_ns, out, n, err, err_size);
	*out = NULL;
	*n = 0;
	rc = timeline_rows(&l, "FROM timeline WHERE time_ns >= ?1 AND time_ns < ?2", from_ns, to_ns,
			   &st);
	if (rc)
		return rc;
	while ((rc = model_step(&l, st)) > 0) {
		int stack = timeline_ref(m, st, TL_STACK, MAP_STACKS);
		int metric = model_index(m, MAP_METRICS, sqlite3_column_int64(st, TL_METRIC));

		if (stack < 0 || metric < 0)
			continue;
		if (GROW(ev, k + 1, cap)) {
			rc = -ENOMEM;
			break;
		}
		ev[k++] = (struct model_event){
			.time_ns = sqlite3_column_int64(st, TL_TIME),
			.value = sqlite3_column_int64(st, TL_VALUE) * scale,
			.thread = timeline_ref(m, st, TL_THREAD, MAP_THREADS),
			.stack = stack,
			.metric = metric,
		};
	}
	sqlite3_finalize(st);
	if (rc == -ENOMEM)
		err_set(err, err_size, "cannot load the timeline of database '%s': %s", m->db_path,
			strerror(ENOMEM));
	if (rc) {
		free(ev);
		return rc;
	}
	*out = ev;
	*n = k;
	return 0;
}

int model_scan_timeline(struct model *m, int64_t to_ns, model_timeline_fn fn, void *ctx, char *err,
			size_t err_size)
{
	struct loader l = { .m = m, .db = m->db, .err = err, .err_size = err_size };
	int64_t scale = value_scale(m);
	sqlite3_stmt *st;
	int rc;

	/* A job's model has no database or ids of its own: its parts have. */
	if (m->nparts)
		return model_job_scan_timeline(m, to_ns, fn, ctx, err, err_size);
	/* No stack, no row to show. */
	if (!m->ids->map[MAP_STACKS].n)
		return 0;
	rc = timeline_rows(&l, "FROM timeline WHERE time_ns < ?1 ORDER BY time_ns", to_ns, 0, &st);
	if (rc)
		return rc;
	while ((rc = model_step(&l, st)) > 0) {
		struct model_sample s = { .count = 1 };

		s.stack = timeline_ref(m, st, TL_STACK, MAP_STACKS);
		s.metric = model_index(m, MAP_METRICS, sqlite3_column_int64(st, TL_METRIC));
		if (s.stack < 0 || s.metric < 0)
			continue;
		s.thread = timeline_ref(m, st, TL_THREAD, MAP_THREADS);
		s.context = model_context_index(m, sqlite3_column_int64(st, TL_CONTEXT));
		s.value = sqlite3_column_int64(st, TL_VALUE) * scale;
		if ((rc = fn(ctx, &s, sqlite3_column_int64(st, TL_TIME))))
			break;
	}
	sqlite3_finalize(st);
	return rc;
}
