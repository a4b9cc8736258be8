/* SPDX-License-Identifier: MIT */
/* The summary view: time, threads, top hotspots, collection settings and data quality. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "report/report-private.h"
#include "report/summary-private.h"

#define TOP_HOTSPOTS 5

size_t summary_row_add(struct summary *s, const char *section, const char *metric,
		       const char *value, const char *unit)
{
	size_t row = table_add_row(s->t, 0);

	table_set_text(s->t, row, s->section, section);
	table_set_text(s->t, row, s->metric, metric);
	table_set_text(s->t, row, s->value, value ? value : "");
	if (unit)
		table_set_text(s->t, row, s->unit, unit);
	return row;
}

void summary_row_int(struct summary *s, const char *section, const char *metric, int64_t v,
		     const char *unit)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%" PRId64, v);
	summary_row_add(s, section, metric, buf, unit);
}

void summary_row_time(struct summary *s, const char *section, const char *metric, int64_t ns)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%.3f", (double)ns / 1e9);
	summary_row_add(s, section, metric, buf, "s");
}

void summary_row_value(struct summary *s, const char *section, const char *name, int k, int64_t v,
		       bool pct)
{
	const struct model_metric *mt = &s->r->m.metrics[k];
	char buf[32];
	size_t row;

	if (mt->unit == MODEL_UNIT_NS) {
		snprintf(buf, sizeof(buf), "%.3f", (double)v / 1e9);
		row = summary_row_add(s, section, name, buf, "s");
	} else {
		snprintf(buf, sizeof(buf), "%" PRId64, v);
		row = summary_row_add(s, section, name, buf,
				      mt->unit == MODEL_UNIT_BYTES ? "bytes" : NULL);
	}
	if (pct)
		table_set_pct(s->t, row, s->pct, report_pct(s->r, k, v));
}

static void row_meta(struct summary *s, const char *section, const char *metric,
		     const char *key)
{
	const char *v = model_meta_get(&s->r->m, key);

	if (v && *v)
		summary_row_add(s, section, metric, v, NULL);
}

/* Run a query of one row of integers; false when the table is absent (older results). */
static bool query_ints(struct report *r, const char *sql, int64_t *out, int n)
{
	sqlite3_stmt *st;
	bool ok = false;
	int i;

	if (sqlite3_prepare_v2(r->m.db, sql, -1, &st, NULL) != SQLITE_OK)
		return false;
	if (sqlite3_step(st) == SQLITE_ROW) {
		for (i = 0; i < n; i++)
			out[i] = sqlite3_column_int64(st, i);
		ok = true;
	}
	sqlite3_finalize(st);
	return ok;
}

static void section_time(struct summary *s)
{
	struct report *r = s->r;
	int64_t elapsed = model_meta_int(&r->m, "elapsed_ns", 0);
	int64_t cpus = model_meta_int(&r->m, "cpu_count", 0);
	char buf[64];

	if (elapsed > 0)
		summary_row_time(s, "Time", "Elapsed Time", elapsed);
	if (s->cpu >= 0)
		summary_row_time(s, "Time", "CPU Time", r->total[s->cpu]);
	if (elapsed > 0 && s->cpu >= 0) {
		double used = (double)r->total[s->cpu] / (double)elapsed;

		snprintf(buf, sizeof(buf), "%.3f", used);
		summary_row_add(s, "Time", "Effective CPUs Used", buf, "CPUs");
		if (cpus > 0) {
			snprintf(buf, sizeof(buf), "%.1f", 100.0 * used / (double)cpus);
			summary_row_add(s, "Time", "CPU Utilization", buf, "%");
		}
	}
	if (cpus > 0)
		summary_row_int(s, "Time", "Logical CPUs", cpus, NULL);
	summary_row_int(s, "Time", "Processes", (int64_t)r->m.nprocesses, NULL);
	summary_row_int(s, "Time", "Threads", (int64_t)r->m.nthreads, NULL);
}

/* The totals of the metrics shown besides CPU Time (that one is in Time). */
static void section_metrics(struct summary *s)
{
	struct report *r = s->r;
	size_t i;

	for (i = 0; i < r->nshown; i++)
		if (r->shown[i] != s->cpu)
			summary_row_value(s, "Metrics", r->m.metrics[r->shown[i]].name, r->shown[i],
					  r->total[r->shown[i]], false);
}

static int heavier(const void *pa, const void *pb, void *arg)
{
	const int64_t *self = arg;
	int a = *(const int *)pa, b = *(const int *)pb;

	if (self[a] != self[b])
		return self[a] > self[b] ? -1 : 1;
	return a - b;
}

/*
 * The functions with the most self value of the sort metric; resolved receives the share
 * of that metric in functions with names from symbols.
 */
static int section_hotspots(struct summary *s, int64_t *resolved)
{
	struct report *r = s->r;
	const struct cct *t = &r->tree;
	int k = r->sort_metric;
	int64_t *self = calloc(r->m.nfunctions + 1, sizeof(int64_t));
	int *order = malloc((r->m.nfunctions + 1) * sizeof(int));
	size_t i, n = 0;

	if (!self || !order) {
		free(self);
		free(order);
		return -ENOMEM;
	}
	*resolved = 0;
	for (i = 1; i < t->n; i++) {
		int64_t v = cct_self(t, (int)i)[k];

		self[t->nodes[i].func] += v;
		if (r->m.functions[t->nodes[i].func].resolved)
			*resolved += v;
	}
	for (i = 0; i < r->m.nfunctions; i++)
		if (self[i])
			order[n++] = (int)i;
	qsort_r(order, n, sizeof(int), heavier, self);
	for (i = 0; i < n && i < TOP_HOTSPOTS; i++)
		summary_row_value(s, "Top Hotspots", report_function_name(r, order[i]), k,
				  self[order[i]], true);
	free(self);
	free(order);
	return 0;
}

static void section_collection(struct summary *s)
{
	struct report *r = s->r;
	char buf[64];
	int64_t v[4];
	sqlite3_stmt *st;

	summary_row_add(s, "Collection", "Result Directory", r->dir, NULL);
	row_meta(s, "Collection", "Analysis", "analysis");
	row_meta(s, "Collection", "Command Line", "command_line");
	row_meta(s, "Collection", "Working Directory", "cwd");
	row_meta(s, "Collection", "Host", "host");
	row_meta(s, "Collection", "Kernel", "kernel");
	row_meta(s, "Collection", "Collector Version", "collector_version");
	row_meta(s, "Collection", "Sampling Clock", "sampling_clock");
	if (r->m.interval_ns > 0) {
		snprintf(buf, sizeof(buf), "%.3f", (double)r->m.interval_ns / 1e6);
		summary_row_add(s, "Collection", "Sampling Interval", buf, "ms");
	}
	if (s->cpu >= 0) {
		summary_row_int(s, "Collection", "Samples",
				model_meta_int(&r->m, "samples_total", r->count[s->cpu]), NULL);
		summary_row_int(s, "Collection", "Samples Shown", r->count[s->cpu], NULL);
	}
	if (query_ints(r, "SELECT coalesce(sum(count), 0) FROM lost", v, 1)) {
		summary_row_int(s, "Collection", "Lost Samples", v[0], NULL);
		if (v[0] && sqlite3_prepare_v2(r->m.db, "SELECT reason, sum(count) FROM lost "
					       "GROUP BY reason ORDER BY reason", -1, &st,
					       NULL) == SQLITE_OK) {
			while (sqlite3_step(st) == SQLITE_ROW) {
				char metric[128];

				snprintf(metric, sizeof(metric), "Lost Samples (%s)",
					 (const char *)sqlite3_column_text(st, 0));
				summary_row_int(s, "Collection", metric,
						sqlite3_column_int64(st, 1), NULL);
			}
			sqlite3_finalize(st);
		}
	}
	if (model_meta_int(&r->m, "data_limit_hit", 0))
		summary_row_add(s, "Collection", "Data Limit Hit", "yes", NULL);
	/*
	 * The CPU time the threads measured at their end against what their samples account
	 * for: a shortfall means timer signals came late (docs/pcollect.md, LIMITS).
	 */
	if (query_ints(r, "SELECT coalesce(sum(cpu_ns), 0), coalesce(sum(time_ns), 0) "
			  "FROM threads WHERE cpu_ns > 0", v, 2) && v[0] > 0) {
		summary_row_time(s, "Collection", "CPU Time Measured by Threads", v[0]);
		snprintf(buf, sizeof(buf), "%.1f", 100.0 * (double)v[1] / (double)v[0]);
		summary_row_add(s, "Collection", "CPU Time Sampled", buf, "%");
	}
}

/* CPU samples whose stack has a Python frame (over every sample: filters do not apply). */
static int64_t python_samples(const struct model *m, int cpu)
{
	unsigned char *up = calloc(m->nstacks + 1, 1);
	int64_t n = 0;
	size_t i;

	if (!up)
		return -1;
	for (i = 0; i < m->nstacks; i++) {
		int st = m->stack_order[i], p = m->stacks[st].parent;

		up[st] = (p >= 0 && up[p]) ||
			 m->functions[m->frames[m->stacks[st].frame].function].python;
	}
	for (i = 0; i < m->nsamples; i++)
		if (m->samples[i].metric == cpu && up[m->samples[i].stack])
			n += m->samples[i].count;
	free(up);
	return n;
}

/* Only for results of Python programs: the version, and why samples lack Python frames. */
static void section_python(struct summary *s)
{
	const struct model *m = &s->r->m;
	const char *version = model_meta_get(m, "python_version");
	char metric[256];
	int64_t n;
	size_t i;

	if (!version && !m->npynotes)
		return;
	if (version)
		summary_row_add(s, "Python", "Python Version", version, NULL);
	n = s->cpu >= 0 ? python_samples(m, s->cpu) : -1;
	if (n >= 0)
		summary_row_int(s, "Python", "Samples With Python Frames", n, NULL);
	for (i = 0; i < m->npynotes; i++) {
		snprintf(metric, sizeof(metric), "Samples Without Python Frames (%s)",
			 m->pynotes[i].kind);
		summary_row_int(s, "Python", metric, m->pynotes[i].count, NULL);
	}
}

static void section_finalization(struct summary *s, int64_t resolved)
{
	struct report *r = s->r;
	size_t i, missing = 0, mismatch = 0;
	char buf[64], metric[512];
	int64_t v[4];

	row_meta(s, "Finalization", "Finalizer Version", "finalizer_version");
	row_meta(s, "Finalization", "Finalization Mode", "finalization_mode");
	for (i = 0; i < r->m.nmodules; i++) {
		const char *st = r->m.modules[i].status;

		missing += st && !strcmp(st, "missing");
		mismatch += st && !strcmp(st, "build-id-mismatch");
	}
	summary_row_int(s, "Finalization", "Modules", (int64_t)r->m.nmodules, NULL);
	summary_row_int(s, "Finalization", "Modules Missing", (int64_t)missing, NULL);
	summary_row_int(s, "Finalization", "Modules With Build-Id Mismatch", (int64_t)mismatch,
			NULL);
	snprintf(buf, sizeof(buf), "%.1f", report_pct(r, r->sort_metric, resolved));
	snprintf(metric, sizeof(metric), "%s In Resolved Functions",
		 r->m.metrics[r->sort_metric].name);
	summary_row_add(s, "Finalization", metric, buf, "%");
	if (query_ints(r, "SELECT count(*), coalesce(sum(bytes), 0), coalesce(sum(bytes_skipped), 0), "
			  "coalesce(sum(chunks_damaged), 0) FROM streams", v, 4)) {
		summary_row_int(s, "Finalization", "Raw Streams", v[0], NULL);
		summary_row_int(s, "Finalization", "Raw Bytes", v[1], "bytes");
		summary_row_int(s, "Finalization", "Raw Bytes Skipped", v[2], "bytes");
		summary_row_int(s, "Finalization", "Damaged Chunks", v[3], NULL);
	}
}

int view_summary(struct report *r, struct table *t)
{
	struct summary s = { .r = r, .t = t, .cpu = model_find_metric(&r->m, "CPU Time") };
	int64_t resolved = 0;
	int rc;

	s.section = table_add_col(t, "Section", TABLE_TEXT, 0);
	s.metric = table_add_col(t, "Metric", TABLE_TEXT, 0);
	s.value = table_add_col(t, "Value", TABLE_TEXT, 0);
	s.unit = table_add_col(t, "Unit", TABLE_TEXT, 0);
	s.pct = table_add_col(t, "Percent", TABLE_PCT, 0);
	section_time(&s);
	section_metrics(&s);
	rc = summary_waits(&s);
	if (!rc)
		rc = summary_openmp(&s);
	if (!rc)
		rc = summary_regions(&s);
	if (!rc)
		rc = section_hotspots(&s, &resolved);
	if (rc)
		return rc;
	section_collection(&s);
	section_python(&s);
	section_finalization(&s, resolved);
	return 0;
}

/* "Section" then "  Metric: value unit (pct)", metrics aligned, within the width (0: any). */
int view_summary_text(struct report *r, const struct table *t, FILE *f, int width_arg)
{
	size_t row, w = 0;
	const char *last = NULL;
	char sec[256], met[512], val[2048], unit[64], pct[32], out[4096], line[4096];
	size_t width = width_arg > 0 ? (size_t)width_arg : sizeof(out) - 1;

	(void)r;
	for (row = 0; row < t->nrows; row++) {
		table_format_cell(t, row, 1, true, met, sizeof(met));
		if (strlen(met) > w)
			w = strlen(met);
	}
	if (w > width / 2)
		w = width / 2;
	for (row = 0; row < t->nrows; row++) {
		size_t room;

		table_format_cell(t, row, 0, true, sec, sizeof(sec));
		table_format_cell(t, row, 1, true, met, sizeof(met));
		table_format_cell(t, row, 2, true, val, sizeof(val));
		table_format_cell(t, row, 3, true, unit, sizeof(unit));
		table_format_cell(t, row, 4, true, pct, sizeof(pct));
		if (!last || strcmp(last, sec)) {
			fprintf(f, "%s%s\n", last ? "\n" : "", sec);
			last = t->cells[row * t->ncols].v.s;
		}
		table_shorten_middle(met, w, out, sizeof(out));
		fprintf(f, "  %s:%*s ", out, (int)(w - strlen(out)), "");
		room = width - w - 4;
		if (*unit && strcmp(unit, "s") && strcmp(unit, "%"))
			snprintf(line, sizeof(line), "%s %s", val, unit);
		else
			snprintf(line, sizeof(line), "%s%s", val, unit);
		if (*pct)
			snprintf(line + strlen(line), sizeof(line) - strlen(line), " (%s)", pct);
		table_shorten_middle(line, room, out, sizeof(out));
		fprintf(f, "%s\n", out);
	}
	return ferror(f) ? -EIO : 0;
}
