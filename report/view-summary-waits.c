/* SPDX-License-Identifier: MIT */
/* The summary's sections on waiting: where each thread's time went, the top waiting call sites
   and sync objects, and the balance of OpenMP parallel regions. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "common/cmp.h"
#include "common/sat.h"
#include "report/summary-private.h"

#define TOP_WAITING     5  /* call sites and objects */
#define MAX_THREAD_ROWS 16 /* threads listed one by one; the others together */
#define MAX_REGIONS     3  /* OpenMP regions shown, the heaviest */

/* The label of thread i as the tree views show it: "app (TID 1234)". */
static const char *thread_label(const struct model *m, int i, char *buf, size_t size)
{
	return report_thread_label(&m->threads[i], buf, size);
}

/* A time row with its share of whole (ns) in the Percent column. */
static void row_share(struct summary *s, const char *section, const char *metric, int64_t ns,
		      int64_t whole)
{
	char buf[32];
	size_t row;

	snprintf(buf, sizeof(buf), "%.3f", (double)ns / 1e9);
	row = summary_row_add(s, section, metric, buf, "s");
	/* A part of a thread's life: more than all of it only in damaged data. */
	if (whole > 0)
		table_set_pct(s->t, row, s->pct,
			      ns >= whole ? 100.0
			      : ns <= 0   ? 0.0
					  : 100.0 * (double)ns / (double)whole);
}

/*
 * Where a thread's life went: elapsed = CPU + Wait + Unattributed (never negative); with Spin
 * Time (an OpenMP wait that spins is in both CPU and Wait), elapsed = CPU + Sleeping Wait +
 * Unattributed, Sleeping Wait = Wait - Spin.
 */
struct thread_time {
	int64_t elapsed, cpu, wait, unattributed, spin;
};

/* Sums of values read from the database saturate: damaged data must not wrap. */
static void thread_time_add(struct thread_time *sum, const struct thread_time *tt)
{
	sum->elapsed = sat_add_i64(sum->elapsed, tt->elapsed);
	sum->cpu = sat_add_i64(sum->cpu, tt->cpu);
	sum->wait = sat_add_i64(sum->wait, tt->wait);
	sum->unattributed = sat_add_i64(sum->unattributed, tt->unattributed);
	sum->spin = sat_add_i64(sum->spin, tt->spin);
}

static void thread_rows(struct summary *s, const char *label, const struct thread_time *tt)
{
	const char *const what[] = {
		"Elapsed Time",      metric_name(METRIC_CPU_TIME),  metric_name(METRIC_WAIT_TIME),
		"Unattributed Time", metric_name(METRIC_SPIN_TIME), "Sleeping Wait Time"
	};
	const int64_t v[] = { tt->elapsed, tt->cpu,
			      tt->wait,    tt->unattributed,
			      tt->spin,    tt->wait > tt->spin ? tt->wait - tt->spin : 0 };
	char metric[512];
	size_t k;

	for (k = 0; k < (tt->spin > 0 ? 6 : 4); k++) {
		snprintf(metric, sizeof(metric), "%s %s", label, what[k]);
		row_share(s, "Thread Time", metric, v[k], k ? tt->elapsed : 0);
	}
}

/*
 * Per thread of the whole result (filters do not apply: this is the threads' lifetime):
 * the CPU time the thread measured at its end (its samples' CPU Time when it measured
 * none), its waits' Wait Time, and what neither explains. An OpenMP wait's spinning (Spin
 * Time) is in both CPU and Wait: counted once. A wait that spins before it sleeps elsewhere
 * (a mutex) counts its spinning in both CPU and Wait: Unattributed is then 0, not negative.
 */
static int section_thread_time(struct summary *s, int wait)
{
	const struct model *m = &s->r->m;
	int spin = model_metric(m, METRIC_SPIN_TIME);
	int64_t *sampled = calloc(m->nthreads + 1, sizeof(int64_t));
	int64_t *waited = calloc(m->nthreads + 1, sizeof(int64_t));
	int64_t *spun = calloc(m->nthreads + 1, sizeof(int64_t));
	struct thread_time all = { 0 }, other = { 0 };
	size_t i, shown = 0, others = 0;
	char label[512];

	if (!sampled || !waited || !spun) {
		free(sampled);
		free(waited);
		free(spun);
		return -ENOMEM;
	}
	for (i = 0; i < m->nsamples; i++) {
		const struct model_sample *smp = &m->samples[i];

		if (smp->thread < 0)
			continue;
		if (smp->metric == s->cpu)
			sampled[smp->thread] = sat_add_i64(sampled[smp->thread], smp->value);
		else if (smp->metric == wait)
			waited[smp->thread] = sat_add_i64(waited[smp->thread], smp->value);
		else if (spin >= 0 && smp->metric == spin)
			spun[smp->thread] = sat_add_i64(spun[smp->thread], smp->value);
	}
	for (i = 0; i < m->nthreads; i++) {
		const struct model_thread *t = &m->threads[i];
		struct thread_time tt;

		if (t->start_ns < 0 || t->end_ns < t->start_ns)
			continue; /* its life is not known: it did not end, or was not seen start */
		tt.elapsed = t->end_ns - t->start_ns;
		tt.cpu = t->cpu_ns > 0 ? t->cpu_ns : sampled[i];
		tt.wait = waited[i];
		tt.spin = spun[i];
		tt.unattributed = sat_add_i64(tt.cpu, tt.wait > tt.spin ? tt.wait - tt.spin : 0);
		tt.unattributed = tt.elapsed > tt.unattributed ? tt.elapsed - tt.unattributed : 0;
		thread_time_add(&all, &tt);
		if (shown++ < MAX_THREAD_ROWS) {
			thread_rows(s, thread_label(m, (int)i, label, sizeof(label)), &tt);
			continue;
		}
		others++;
		thread_time_add(&other, &tt);
	}
	if (others) {
		snprintf(label, sizeof(label), "Other %zu Threads", others);
		thread_rows(s, label, &other);
	}
	if (shown > 1)
		thread_rows(s, "All Threads", &all);
	free(sampled);
	free(waited);
	free(spun);
	return 0;
}

/* The C runtime, or a sanitizer's runtime: its interceptors stand in for the C runtime's
   blocking calls in a program built with -fsanitize. */
static bool runtime_module(const char *name)
{
	static const char *const sanitizers[] = { "libasan.so", "libubsan.so", "libtsan.so",
						  "liblsan.so", NULL };
	const char *const *p;

	if (cct_module_is_c_runtime(name))
		return true;
	for (p = sanitizers; *p; p++)
		if (!strncmp(name, *p, strlen(*p)))
			return true;
	return false;
}

/*
 * The call site of a wait: the innermost function of its stack outside the C runtime
 * (where the blocking call itself runs), the wait's own function when there is none. A
 * Python method (functions.kind 'method': time.sleep, lock.acquire) is the blocking call
 * too: the site is the Python function that called it.
 */
static int call_site(const struct report *r, int node)
{
	const struct cct *t = &r->tree;
	int n;

	for (n = node; n > 0; n = t->nodes[n].parent) {
		const struct model_function *f;

		if (t->nodes[n].func < 0)
			break;
		f = &r->m.functions[t->nodes[n].func];
		if (!f->method && (f->module < 0 || !runtime_module(r->m.modules[f->module].name)))
			return t->nodes[n].func;
	}
	return t->nodes[node].func;
}

struct waiting {
	int item;
	int64_t ns, count;
};

static int heavier_wait(const void *pa, const void *pb)
{
	const struct waiting *a = pa, *b = pb;

	return CMP_THEN(CMP(b->ns, a->ns), CMP(a->item, b->item));
}

/* Top waiting rows: per item (a function, an object), its Wait Time and Wait Count. */
static void waiting_rows(struct summary *s, const char *section, struct waiting *w, size_t n,
			 int wait, bool objects)
{
	const struct report *r = s->r;
	char label[512], metric[640];
	size_t i, row;

	qsort(w, n, sizeof(*w), heavier_wait);
	for (i = 0; i < n && i < TOP_WAITING && w[i].ns > 0; i++) {
		const char *name =
			objects ? model_sync_object_label(&r->m, w[i].item, label, sizeof(label))
				: report_function_name(r, w[i].item);
		char buf[32];

		snprintf(metric, sizeof(metric), "%s (%" PRId64 " wait%s)", name, w[i].count,
			 w[i].count == 1 ? "" : "s");
		snprintf(buf, sizeof(buf), "%.3f", (double)w[i].ns / 1e9);
		row = summary_row_add(s, section, metric, buf, "s");
		table_set_pct(s->t, row, s->pct, report_pct(r, wait, w[i].ns));
	}
}

/* The call sites and sync objects of the waits the filters keep, heaviest first. */
static int section_top_waiting(struct summary *s, int wait, int count)
{
	struct report *r = s->r;
	struct waiting *sites = calloc(r->m.nfunctions + 1, sizeof(*sites));
	struct waiting *objs = calloc(r->m.nsync_objects + 1, sizeof(*objs));
	size_t i;

	if (!sites || !objs) {
		free(sites);
		free(objs);
		return -ENOMEM;
	}
	for (i = 0; i < r->m.nfunctions; i++)
		sites[i].item = (int)i;
	for (i = 0; i < r->m.nsync_objects; i++)
		objs[i].item = (int)i;
	for (i = 0; i < r->nrecs; i++) {
		const struct model_sample *smp = report_sample(r, &r->recs[i]);
		int site, obj;

		if (smp->metric != wait && smp->metric != count)
			continue;
		site = call_site(r, r->recs[i].node);
		obj = report_sample_sync_object(r, smp);
		if (smp->metric == wait) {
			if (site >= 0)
				sites[site].ns = sat_add_i64(sites[site].ns, smp->value);
			if (obj >= 0)
				objs[obj].ns = sat_add_i64(objs[obj].ns, smp->value);
		} else {
			if (site >= 0)
				sites[site].count = sat_add_i64(sites[site].count, smp->value);
			if (obj >= 0)
				objs[obj].count = sat_add_i64(objs[obj].count, smp->value);
		}
	}
	waiting_rows(s, "Top Waiting Call Sites", sites, r->m.nfunctions, wait, false);
	waiting_rows(s, "Top Waiting Objects", objs, r->m.nsync_objects, wait, true);
	free(sites);
	free(objs);
	return 0;
}

int summary_waits(struct summary *s)
{
	const struct model *m = &s->r->m;
	int wait = model_metric(m, METRIC_WAIT_TIME), rc;
	const char *v;

	if (wait < 0)
		return 0;
	rc = section_thread_time(s, wait);
	if (!rc)
		rc = section_top_waiting(s, wait, model_metric(m, METRIC_WAIT_COUNT));
	if (!rc && (v = model_meta_get(m, "wait_threshold_ns"))) {
		char buf[32];

		snprintf(buf, sizeof(buf), "%.1f", (double)strtoll(v, NULL, 10) / 1e3);
		summary_row_add(s, "Waits", "Wait Threshold", buf, "us");
	}
	if (!rc && model_meta_get(m, "waits_total")) {
		summary_row_int(s, "Waits", "Waits", model_meta_int(m, "waits_total", 0), NULL);
		summary_row_int(s, "Waits", "Waits Shorter Than the Threshold",
				model_meta_int(m, "waits_short", 0), NULL);
	}
	return rc;
}

/* ---- OpenMP ------------------------------------------------------------------------------- */

/*
 * The function a compiler outlines a parallel region into, as pfinalize names it ("main [omp
 * parallel at prog.c:42]", docs/pfinalize.md), or as the symbols do where the stacks did not
 * tell its directive: GCC's "main._omp_fn.0", clang's ".omp_outlined." (and
 * ".omp_outlined._debug__", "__omp_outlined__N").
 */
static bool region_function(const char *name)
{
	return strstr(name, " [omp ") || strstr(name, "._omp_fn.") ||
	       strstr(name, ".omp_outlined") || strstr(name, "__omp_outlined");
}

/* Per region and thread: the CPU Time in the region, and its Spin Time. */
struct region {
	int func;
	int64_t cpu;   /* over its threads */
	int64_t *busy; /* per thread: CPU Time - Spin Time under the region function */
};

/* The innermost region function on the path of node, or -1. */
static int region_of(const struct report *r, const bool *is_region, int node)
{
	const struct cct *t = &r->tree;
	int n;

	for (n = node; n > 0 && t->nodes[n].func >= 0; n = t->nodes[n].parent)
		if (is_region[t->nodes[n].func])
			return t->nodes[n].func;
	return -1;
}

static int heavier_region(const void *pa, const void *pb)
{
	const struct region *a = pa, *b = pb;

	return CMP_THEN(CMP(b->cpu, a->cpu), CMP(a->func, b->func));
}

/*
 * The balance of a region: each thread's busy time in it (CPU Time under the region's
 * function, less its Spin Time there), the slowest thread's, and each thread's wait for the
 * slowest, VTune's imbalance: (max - mean) / max of the busy times.
 */
static void region_rows(struct summary *s, const struct region *g)
{
	const struct model *m = &s->r->m;
	int64_t max = 0, sum = 0, n = 0;
	char section[512], metric[640], label[512], buf[32];
	size_t i;

	for (i = 0; i < m->nthreads; i++)
		if (g->busy[i] > 0) {
			n++;
			sum = sat_add_i64(sum, g->busy[i]);
			if (g->busy[i] > max)
				max = g->busy[i];
		}
	if (!n || max <= 0)
		return;
	snprintf(section, sizeof(section), "OpenMP Region %s", report_function_name(s->r, g->func));
	summary_row_int(s, section, "Threads", n, NULL);
	summary_row_time(s, section, "Busy Time of the Slowest Thread", max);
	summary_row_time(s, section, "Mean Busy Time", sum / n);
	snprintf(buf, sizeof(buf), "%.1f", 100.0 * (double)(max - sum / n) / (double)max);
	summary_row_add(s, section, "Imbalance", buf, "%");
	for (i = 0; i < m->nthreads; i++) {
		if (g->busy[i] <= 0)
			continue;
		thread_label(m, (int)i, label, sizeof(label));
		snprintf(metric, sizeof(metric), "%s Busy Time", label);
		row_share(s, section, metric, g->busy[i], max);
		snprintf(metric, sizeof(metric), "%s Waiting for the Slowest", label);
		row_share(s, section, metric, max - g->busy[i], max);
	}
}

/*
 * The regions the agent recorded (table openmp_regions): per construct, its instances and
 * time, and per thread of its team the time it waited in the region's implicit barrier
 * (the Wait Time of the construct's openmp-barrier context): its wait for the slowest.
 * Busy is the region's time less that wait. Returns 1 when the result has regions.
 */
static int recorded_regions(struct summary *s)
{
	const struct model *m = &s->r->m;
	int wait = model_metric(m, METRIC_WAIT_TIME), count = model_metric(m, METRIC_WAIT_COUNT);
	int64_t *waited = calloc(m->nthreads + 1, sizeof(int64_t));
	bool *in = calloc(m->nthreads + 1, sizeof(bool));
	sqlite3_stmt *st = NULL;
	int shown = 0, rc = 0;
	size_t i;

	if (!waited || !in) {
		rc = -ENOMEM;
		goto out;
	}
	if (wait < 0 ||
	    sqlite3_prepare_v2(
		    m->db,
		    "SELECT context_id, count(*), sum(duration_ns), "
		    "max(threads) FROM openmp_regions GROUP BY context_id ORDER BY 3 DESC",
		    -1, &st, NULL) != SQLITE_OK)
		goto out; /* an older result: no such table */
	while (shown < MAX_REGIONS && sqlite3_step(st) == SQLITE_ROW) {
		int c = model_context_of_id(m, sqlite3_column_int64(st, 0));
		int64_t n = sqlite3_column_int64(st, 1), d = sqlite3_column_int64(st, 2);
		int64_t max = 0, sum = 0, nt = 0;
		char section[640], label[512], metric[640];

		if (c < 0 || d <= 0)
			continue;
		memset(waited, 0, (m->nthreads + 1) * sizeof(int64_t));
		memset(in, 0, (m->nthreads + 1) * sizeof(bool));
		for (i = 0; i < m->nsamples; i++) {
			const struct model_sample *smp = &m->samples[i];

			if (smp->context != c || smp->thread < 0)
				continue;
			if (smp->metric == wait)
				waited[smp->thread] = sat_add_i64(waited[smp->thread], smp->value);
			if (smp->metric == wait || smp->metric == count)
				in[smp->thread] = true;
		}
		for (i = 0; i < m->nthreads; i++)
			if (in[i]) {
				int64_t busy = d > waited[i] ? d - waited[i] : 0;

				nt++;
				sum = sat_add_i64(sum, busy);
				if (busy > max)
					max = busy;
			}
		snprintf(section, sizeof(section), "OpenMP Region %s",
			 model_sync_object_label(m, m->contexts[c].sync_object, label,
						 sizeof(label)));
		summary_row_int(s, section, "Instances", n, NULL);
		summary_row_int(s, section, "Threads", sqlite3_column_int64(st, 3), NULL);
		summary_row_time(s, section, "Region Time", d);
		if (nt && max > 0) {
			snprintf(metric, sizeof(metric), "%.1f",
				 100.0 * (double)(max - sum / nt) / (double)max);
			summary_row_add(s, section, "Imbalance", metric, "%");
		}
		for (i = 0; i < m->nthreads; i++) {
			if (!in[i])
				continue;
			thread_label(m, (int)i, label, sizeof(label));
			snprintf(metric, sizeof(metric), "%s Busy Time", label);
			row_share(s, section, metric, d > waited[i] ? d - waited[i] : 0, d);
			snprintf(metric, sizeof(metric), "%s Waiting at the Barrier", label);
			row_share(s, section, metric, waited[i], d);
		}
		shown++;
	}
	rc = shown > 0;
out:
	sqlite3_finalize(st);
	free(waited);
	free(in);
	return rc;
}

int summary_openmp(struct summary *s)
{
	struct report *r = s->r;
	int spin = model_metric(&r->m, METRIC_SPIN_TIME);
	bool *is_region = calloc(r->m.nfunctions + 1, sizeof(bool));
	int *slot = malloc((r->m.nfunctions + 1) * sizeof(int));
	struct region *g = NULL;
	size_t i, n = 0;
	int rc = 0;

	if (!is_region || !slot) {
		rc = -ENOMEM;
		goto out;
	}
	/* Regions the agent measured win over those estimated from the CPU samples. */
	if ((rc = recorded_regions(s)) != 0) {
		rc = rc < 0 ? rc : 0;
		goto out;
	}
	for (i = 0; i < r->m.nfunctions; i++) {
		slot[i] = -1;
		if (region_function(r->m.functions[i].name)) {
			is_region[i] = true;
			n++;
		}
	}
	if (!n || s->cpu < 0)
		goto out;
	g = calloc(n, sizeof(*g));
	if (!g) {
		rc = -ENOMEM;
		goto out;
	}
	n = 0;
	for (i = 0; i < r->nrecs; i++) {
		const struct model_sample *smp = report_sample(r, &r->recs[i]);
		int f;

		if ((smp->metric != s->cpu && smp->metric != spin) || smp->thread < 0 ||
		    (f = region_of(r, is_region, r->recs[i].node)) < 0)
			continue;
		if (slot[f] < 0) {
			g[n].func = f;
			if (!(g[n].busy = calloc(r->m.nthreads + 1, sizeof(int64_t)))) {
				rc = -ENOMEM;
				goto out;
			}
			slot[f] = (int)n++;
		}
		if (smp->metric == s->cpu) {
			g[slot[f]].cpu = sat_add_i64(g[slot[f]].cpu, smp->value);
			g[slot[f]].busy[smp->thread] =
				sat_add_i64(g[slot[f]].busy[smp->thread], smp->value);
		} else {
			g[slot[f]].busy[smp->thread] -= smp->value;
		}
	}
	qsort(g, n, sizeof(*g), heavier_region);
	for (i = 0; i < n && i < MAX_REGIONS; i++)
		region_rows(s, &g[i]);
out:
	for (i = 0; g && i < n; i++)
		free(g[i].busy);
	free(g);
	free(is_region);
	free(slot);
	return rc;
}
