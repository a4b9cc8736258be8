/* SPDX-License-Identifier: MIT */
/* The summary view: time, threads, top hotspots, collection settings and data quality. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "common/cmp.h"
#include "common/str.h"
#include "common/raw-stream.h"
#include "common/sat.h"
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

size_t summary_row_int(struct summary *s, const char *section, const char *metric, int64_t v,
		       const char *unit)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%" PRId64, v);
	return summary_row_add(s, section, metric, buf, unit);
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

static void row_meta(struct summary *s, const char *section, const char *metric, const char *key)
{
	const char *v = model_meta_get(&s->r->m, key);

	if (v && *v)
		summary_row_add(s, section, metric, v, NULL);
}

/*
 * Run a query of one row of integers (sums), added up over the result's databases (a job
 * has one per node); false when the table is absent (older results).
 */
static bool query_ints(struct report *r, const char *sql, int64_t *out, int n)
{
	sqlite3_stmt *st;
	bool ok = false;
	size_t d;
	int i;

	for (i = 0; i < n; i++)
		out[i] = 0;
	for (d = 0; d < model_ndbs(&r->m); d++) {
		if (sqlite3_prepare_v2(model_db(&r->m, d), sql, -1, &st, NULL) != SQLITE_OK)
			return false;
		if (sqlite3_step(st) == SQLITE_ROW) {
			for (i = 0; i < n; i++)
				out[i] += sqlite3_column_int64(st, i);
			ok = true;
		}
		sqlite3_finalize(st);
	}
	return ok;
}

/* Lost samples per reason (text column 0, count column 1), over the result's databases. */
static void lost_by_reason(struct summary *s)
{
	static const char *const sql = "SELECT reason, sum(count) FROM lost GROUP BY reason";
	struct {
		char reason[32];
		int64_t n;
	} seen[16];
	size_t nseen = 0, d, k;
	sqlite3_stmt *st;

	for (d = 0; d < model_ndbs(&s->r->m); d++) {
		if (sqlite3_prepare_v2(model_db(&s->r->m, d), sql, -1, &st, NULL) != SQLITE_OK)
			continue;
		while (sqlite3_step(st) == SQLITE_ROW) {
			const char *why = (const char *)sqlite3_column_text(st, 0);

			for (k = 0; k < nseen && strcmp(seen[k].reason, why ? why : ""); k++)
				;
			if (k == nseen && nseen < sizeof(seen) / sizeof(seen[0])) {
				snprintf(seen[k].reason, sizeof(seen[k].reason), "%s",
					 why ? why : "");
				seen[k].n = 0;
				nseen++;
			}
			if (k < nseen)
				seen[k].n += sqlite3_column_int64(st, 1);
		}
		sqlite3_finalize(st);
	}
	/* In the order of the reasons' names, as one database's GROUP BY gives them. */
	while (nseen) {
		char metric[128];
		size_t first = 0;

		for (k = 1; k < nseen; k++)
			if (strcmp(seen[k].reason, seen[first].reason) < 0)
				first = k;
		snprintf(metric, sizeof(metric), "Lost Samples (%.31s)", seen[first].reason);
		summary_row_int(s, "Collection", metric, seen[first].n, NULL);
		seen[first] = seen[--nseen];
	}
}

/*
 * The CPU time pfinalize put under the agent's own frame (RAW_STACK_AGENT_NAME): samples taken
 * while the collector's code ran in the program's threads, its overhead, shown as its own.
 */
static int64_t agent_overhead(const struct summary *s)
{
	const struct cct *t = &s->r->tree;
	int64_t v = 0;
	size_t i;

	for (i = 1; i < t->n; i++) {
		int f = t->nodes[i].func;

		if (f >= 0 && !strcmp(s->r->m.functions[f].name, RAW_STACK_AGENT_NAME))
			v = sat_add_i64(v, cct_self(t, (int)i)[s->cpu]);
	}
	return v;
}

static void section_time(struct summary *s)
{
	struct report *r = s->r;
	int64_t elapsed = model_meta_int(&r->m, "elapsed_ns", 0);
	int64_t cpus = model_meta_int(&r->m, "cpu_count", 0);
	char buf[64];

	if (elapsed > 0)
		summary_row_time(s, "Time", "Elapsed Time", elapsed);
	if (s->cpu >= 0) {
		summary_row_time(s, "Time", metric_name(METRIC_CPU_TIME), r->total[s->cpu]);
		summary_row_value(s, "Time", "Collector Overhead", s->cpu, agent_overhead(s), true);
	}
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
	if (r->m.nruns)
		summary_row_int(s, "Time", "Runs", (int64_t)r->m.nruns, NULL);
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

/* -trace-mpi results: MPI Time's share, imbalance, the slowest and fastest ranks, call sites. */
static int section_mpi(struct summary *s)
{
	struct report *r = s->r;
	struct report_mpi_summary m;
	char buf[512];
	size_t i, row;
	int rc = report_mpi_summary(r, &m);

	if (rc)
		return rc == 1 ? 0 : rc;
	/* Its percent: of the ranks' elapsed time, ranks x Elapsed Time. */
	snprintf(buf, sizeof(buf), "%.3f", (double)m.mpi_ns / 1e9);
	row = summary_row_add(s, "MPI", metric_name(METRIC_MPI_TIME), buf, "s");
	table_set_pct(s->t, row, s->pct, 100.0 * m.share);
	summary_row_int(s, "MPI", "Ranks", m.nranks, NULL);
	if (m.has_compute && m.nranks > 0) {
		snprintf(buf, sizeof(buf), "%.1f", 100.0 * m.imbalance);
		summary_row_add(s, "MPI", "MPI Imbalance", buf, "%");
		summary_row_time(s, "MPI", "Mean Compute Time", m.mean_ns);
		snprintf(buf, sizeof(buf), "%d (compute %.3fs)", m.slowest,
			 (double)m.slowest_ns / 1e9);
		summary_row_add(s, "MPI", "Slowest Rank", buf, NULL);
		snprintf(buf, sizeof(buf), "%d (compute %.3fs)", m.fastest,
			 (double)m.fastest_ns / 1e9);
		summary_row_add(s, "MPI", "Fastest Rank", buf, NULL);
	}
	for (i = 0; i < m.nsites; i++) {
		/* the caller whole, as long as C++ makes it: CSV and JSON cut no name */
		const char *caller = m.sites[i].caller >= 0
					     ? report_function_name(r, m.sites[i].caller)
					     : "[unknown]";
		char *name = str_join((const char *[]){ m.sites[i].function, caller }, 2, " from ");

		if (!name)
			return -ENOMEM;
		snprintf(buf, sizeof(buf), "%.3f", (double)m.sites[i].ns / 1e9);
		row = summary_row_add(s, "Top MPI Call Sites", name, buf, "s");
		free(name);
		table_set_pct(s->t, row, s->pct,
			      m.mpi_ns > 0 ? 100.0 * (double)m.sites[i].ns / (double)m.mpi_ns
					   : 0.0);
	}
	return 0;
}

static int heavier(const void *pa, const void *pb, void *arg)
{
	const int64_t *self = arg;
	int a = *(const int *)pa, b = *(const int *)pb;

	return CMP_THEN(CMP(self[b], self[a]), CMP(a, b));
}

/*
 * The functions with the most self value of the sort metric; resolved receives the value of
 * that metric in functions with names from symbols, ranged in the unnamed ones known by
 * their FDE range (func@0x...).
 */
static int section_hotspots(struct summary *s, int64_t *resolved, int64_t *ranged)
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
	*resolved = *ranged = 0;
	for (i = 1; i < t->n; i++) {
		int64_t v = cct_self(t, (int)i)[k];

		if (t->nodes[i].func < 0)
			continue; /* a group node (the HTML report's -group-by) */
		self[t->nodes[i].func] = sat_add_i64(self[t->nodes[i].func], v);
		if (r->m.functions[t->nodes[i].func].resolved)
			*resolved = sat_add_i64(*resolved, v);
		else if (r->m.functions[t->nodes[i].func].range)
			*ranged = sat_add_i64(*ranged, v);
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

/* Samples whose stacks the collector cut at stack-depth: they show under [truncated stack]. */
static void truncated_stacks(struct summary *s)
{
	const struct model *m = &s->r->m;
	int64_t n = model_meta_int(m, "samples_truncated", -1);
	int64_t total = model_meta_int(m, "samples_total", 0);
	int64_t depth = model_meta_int(m, "collect.stack_depth", 0);
	char at[64] = "at the depth limit";
	size_t row;

	if (n < 0)
		return; /* finalized before they were counted */
	row = summary_row_int(s, "Collection", "Samples With Truncated Stacks", n, NULL);
	if (total > 0)
		table_set_pct(s->t, row, s->pct, 100.0 * (double)n / (double)total);
	if (!n)
		return;
	if (depth > 0)
		snprintf(at, sizeof(at), "at %" PRId64 " frames (stack-depth)", depth);
	table_add_note(s->t,
		       "%" PRId64 " samples have stacks cut %s: their outermost frames are "
		       "missing, shown under [truncated stack]; %s",
		       n, at,
		       depth >= 2048 ? "the collector keeps no more than 2048 frames"
				     : "collect with -knob "
				       "stack-depth=N (up to 2048) for whole stacks");
}

static void section_collection(struct summary *s)
{
	struct report *r = s->r;
	char buf[64];
	int64_t v[4];

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
		truncated_stacks(s);
	}
	if (query_ints(r, "SELECT coalesce(sum(count), 0) FROM lost", v, 1)) {
		summary_row_int(s, "Collection", "Lost Samples", v[0], NULL);
		if (v[0])
			lost_by_reason(s);
	}
	if (model_meta_int(&r->m, "data_limit_hit", 0)) {
		summary_row_add(s, "Collection", "Data Limit Hit", "yes", NULL);
		table_add_note(s->t,
			       "sampling stopped when the raw data reached -data-limit: the "
			       "profile covers the start of the run (raise -data-limit; 0: no "
			       "limit)");
	}
	if (query_ints(r, "SELECT coalesce(sum(count), 0) FROM lost WHERE reason = 'disk-full'", v,
		       1) &&
	    v[0] > 0)
		table_add_note(s->t, "the file system of the result was full during the "
				     "collection: sampling stopped where a stream could not grow");
	if (query_ints(r, "SELECT coalesce(sum(count), 0) FROM lost WHERE reason = 'address-space'",
		       v, 1) &&
	    v[0] > 0)
		table_add_note(s->t,
			       "the program left no address space for a stream's next window "
			       "(RLIMIT_AS, ulimit -v): sampling of its thread stopped there");
	/*
	 * The CPU time the threads measured at their end against what their samples account
	 * for: short of it when samples were lost (above), data was damaged, threads were short
	 * or timer signals came late (pfinalize's summary says which). A process's own measure
	 * at its end (note 'process-cpu') counts when more: its threads made after sampling
	 * stopped have no row.
	 */
	if (query_ints(
		    r,
		    r->m.schema_version >= 2
			    ? "SELECT coalesce(sum(max(coalesce(t.cpu, 0), coalesce(n.cpu, 0))), "
			      "0), coalesce(sum(t.sampled), 0) FROM processes p "
			      "LEFT JOIN (SELECT process_id, sum(cpu_ns) AS cpu, sum(time_ns) AS "
			      "sampled FROM threads WHERE cpu_ns > 0 GROUP BY process_id) t ON "
			      "t.process_id = p.id LEFT JOIN (SELECT process_id, "
			      "max(CAST(detail AS INTEGER)) AS cpu FROM notes WHERE kind = "
			      "'process-cpu' GROUP BY process_id) n ON n.process_id = p.id"
			    /* schema 1 has no notes, and no note of a process's CPU time */
			    : "SELECT coalesce(sum(cpu_ns), 0), coalesce(sum(time_ns), 0) FROM "
			      "threads WHERE cpu_ns > 0",
		    v, 2) &&
	    v[0] > 0) {
		const char *cpu = metric_name(METRIC_CPU_TIME);
		char label[128];

		snprintf(label, sizeof(label), "%s Measured by Threads", cpu);
		summary_row_time(s, "Collection", label, v[0]);
		snprintf(buf, sizeof(buf), "%.1f", 100.0 * (double)v[1] / (double)v[0]);
		snprintf(label, sizeof(label), "%s Sampled", cpu);
		/* memory-consumption takes no CPU samples: no share of 0% to show */
		if (s->cpu >= 0)
			summary_row_add(s, "Collection", label, buf, "%");
		/* Threads with a figure and no end: their process died of a signal (THREAD_CPU). */
		if (query_ints(r,
			       "SELECT count(*), count(DISTINCT process_id) FROM threads WHERE "
			       "cpu_ns IS NOT NULL AND end_ns IS NULL",
			       v, 2) &&
		    v[0] > 0)
			table_add_note(
				s->t,
				"%s Measured by Threads: %" PRId64 " threads of %" PRId64
				" processes ended by a signal measured nothing at their end: "
				"their part is their CPU time at the collector's last look "
				"(every %.1f s while sampled) and their samples after it",
				cpu, v[0], v[1], (double)RAW_THREAD_CPU_EVERY_NS / 1e9);
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

static void section_finalization(struct summary *s, int64_t resolved, int64_t ranged)
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
	snprintf(buf, sizeof(buf), "%.1f", report_pct(r, r->sort_metric, ranged));
	snprintf(metric, sizeof(metric), "%s In Unnamed Function Ranges",
		 r->m.metrics[r->sort_metric].name);
	summary_row_add(s, "Finalization", metric, buf, "%");
	if (query_ints(r,
		       "SELECT count(*), coalesce(sum(bytes), 0), coalesce(sum(bytes_skipped), 0), "
		       "coalesce(sum(chunks_damaged), 0) FROM streams",
		       v, 4)) {
		summary_row_int(s, "Finalization", "Raw Streams", v[0], NULL);
		summary_row_int(s, "Finalization", "Raw Bytes", v[1], "bytes");
		summary_row_int(s, "Finalization", "Raw Bytes Skipped", v[2], "bytes");
		summary_row_int(s, "Finalization", "Damaged Chunks", v[3], NULL);
	}
}

int view_summary(struct report *r, struct table *t)
{
	struct summary s = { .r = r, .t = t, .cpu = model_metric(&r->m, METRIC_CPU_TIME) };
	int64_t resolved = 0, ranged = 0;
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
		rc = summary_memory(&s);
	if (!rc)
		rc = section_hotspots(&s, &resolved, &ranged);
	if (!rc)
		rc = section_mpi(&s);
	if (rc)
		return rc;
	section_collection(&s);
	section_python(&s);
	section_finalization(&s, resolved, ranged);
	return 0;
}

/*
 * The column values are aligned at: after the longest label, but no further than
 * SUMMARY_ALIGN_MAX, so that one long name (a C++ signature among the top hotspots, an MPI
 * call site's caller) does not push every value of the summary off to the right.
 */
#define SUMMARY_ALIGN_MAX 40

/*
 * "Section" then "  Metric: value unit (pct)", values aligned, within the width (0: any). A
 * label longer than the alignment is written whole with its value right after it, or, within
 * a width, shortened in the middle to leave the value room.
 */
int view_summary_text(struct report *r, const struct table *t, FILE *f, int width_arg)
{
	size_t row, w = 0;
	const char *last = NULL;
	char sec[256], met[8192], val[2048], unit[64], pct[32], out[8192], line[8192];
	size_t width = width_arg > 0 ? (size_t)width_arg : sizeof(out) - 1;

	(void)r;
	for (row = 0; row < t->nrows; row++) {
		table_format_cell(t, row, 1, true, met, sizeof(met));
		if (strlen(met) > w)
			w = strlen(met);
	}
	if (w > SUMMARY_ALIGN_MAX)
		w = SUMMARY_ALIGN_MAX;
	if (w > width / 2)
		w = width / 2;
	for (row = 0; row < t->nrows; row++) {
		size_t room, label;

		table_format_cell(t, row, 0, true, sec, sizeof(sec));
		table_format_cell(t, row, 1, true, met, sizeof(met));
		table_format_cell(t, row, 2, true, val, sizeof(val));
		table_format_cell(t, row, 3, true, unit, sizeof(unit));
		table_format_cell(t, row, 4, true, pct, sizeof(pct));
		if (!last || strcmp(last, sec)) {
			fprintf(f, "%s%s\n", last ? "\n" : "", sec);
			last = t->cells[row * t->ncols].v.s;
		}
		if (*unit && strcmp(unit, "s") && strcmp(unit, "%"))
			snprintf(line, sizeof(line), "%s %s", val, unit);
		else
			snprintf(line, sizeof(line), "%s%s", val, unit);
		if (*pct)
			snprintf(line + strlen(line), sizeof(line) - strlen(line), " (%s)", pct);
		/* a long label takes what the value leaves of the width, at least the alignment */
		label = strlen(met);
		if (label > w && width_arg > 0)
			label = width > strlen(line) + 4 + w ? width - strlen(line) - 4 : w;
		table_shorten_middle(met, label, out, sizeof(out));
		label = strlen(out) > w ? strlen(out) : w;
		fprintf(f, "  %s:%*s ", out, (int)(label - strlen(out)), "");
		room = width > label + 4 ? width - label - 4 : 1;
		table_shorten_middle(line, room, out, sizeof(out));
		fprintf(f, "%s\n", out);
	}
	/* What the figures above mean for the user, and what to do. */
	for (row = 0; row < t->nnotes; row++)
		fprintf(f, "%s%s\n", row ? "" : "\n", t->notes[row]);
	return ferror(f) ? -EIO : 0;
}
