/* SPDX-License-Identifier: MIT */
/* The summary of memory-consumption results: peak, leaks, the agent's cost, top call sites. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "common/cmp.h"
#include "common/sat.h"
#include "report/report-private.h"
#include "report/summary-private.h"

#define TOP_SITES 5

/*
 * A call site is where the program asked for the memory: the innermost Python frame of a
 * stack that has some (the line that made the object), else the innermost frame outside the
 * C and C++ runtimes (strdup, fopen's buffer, std::vector's growth are charged to their
 * caller). Sites are (function, file, line) over every sample of the result.
 */
static bool runtime_module(const struct model *m, int module)
{
	static const char *const prefixes[] = { "libc.so",     "libstdc++.so", "libgcc_s.so",
						"ld-linux",    "libm.so",      "libc++.so",
						"libc++abi.so" };
	const char *name;
	size_t i;

	if (module < 0 || (size_t)module >= m->nmodules || !(name = m->modules[module].name))
		return false;
	for (i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (!strncmp(name, prefixes[i], strlen(prefixes[i])))
			return true;
	return false;
}

struct site {
	int func, file, line;
	int64_t value;
};

/*
 * The Python interpreter's own leftovers: what CPython never frees at its end (interned
 * strings, static types' dictionaries, code objects of the modules it imported, its
 * allocator's arenas mapped at start-up, the standard library's extension modules' state).
 * A block still live at the end is one of them when the code that asked for it is the
 * interpreter's: from its leaf to its innermost Python frame (or its root, with none: the
 * start-up and the end), the interpreter's, the C and C++ runtimes' and the standard
 * library's extension modules' native code (and the libraries those modules call: libffi
 * under _ctypes), and that Python frame one of the standard library's files or frozen
 * modules (an import's code objects, a module's caches). A line of the program's that calls
 * malloc through ctypes, or a C extension of its own (which the interpreter calls: it does
 * not vouch for it), is the program's. needle: "/lib/python3.N/", the standard library's directory
 * in pyenv's, Debian's and CPython's default layouts.
 */
static bool stdlib_path(const char *path, const char *needle)
{
	const char *at = path ? strstr(path, needle) : NULL;

	if (path && path[0] == '<')
		return !strncmp(path, "<frozen ", 8); /* importlib, os, ...: frozen */
	return at && !strstr(at, "-packages/");       /* not site-packages, dist-packages */
}

static bool python_leftover(const struct model *m, int stack, const char *needle)
{
	bool foreign = false; /* a frame of other code, not called by the standard library's */
	int st;

	for (st = stack; st >= 0; st = m->stacks[st].parent) {
		const struct model_frame *fr = &m->frames[m->stacks[st].frame];
		const struct model_function *fn = &m->functions[fr->function];
		int file = fr->file >= 0 ? fr->file : fn->file;
		const struct model_module *mod = fr->module >= 0 && (size_t)fr->module < m->nmodules
							 ? &m->modules[fr->module]
							 : NULL;

		if (fn->python)
			return !foreign && file >= 0 && stdlib_path(m->files[file], needle);
		if (!mod)
			return false; /* [truncated stack], an unknown frame */
		if (stdlib_path(mod->path, needle))
			foreign = false; /* what a standard library's module called is its own */
		/* the interpreter, and a shared build's executable (python3.12: main alone) */
		else if (!mod->interpreter && !runtime_module(m, fr->module) &&
			 !(mod->name && !strncmp(mod->name, "python", 6)))
			foreign = true;
	}
	return !foreign;
}

static int site_of(const struct model *m, int stack, struct site *out)
{
	int st, native = -1;

	for (st = stack; st >= 0; st = m->stacks[st].parent) {
		const struct model_frame *fr = &m->frames[m->stacks[st].frame];

		if (m->functions[fr->function].python) {
			native = st;
			break;
		}
		if (native < 0 && !runtime_module(m, fr->module) && !fr->inline_depth)
			native = st;
	}
	if (native < 0)
		native = stack;
	{
		const struct model_frame *fr = &m->frames[m->stacks[native].frame];

		*out = (struct site){ fr->function, fr->file, fr->line, 0 };
	}
	return 0;
}

/* A Python program's standard library directory, for python_leftover(); NULL: no Python. */
static const char *leak_needle(const struct model *m, char needle[64])
{
	const char *version = model_meta_get(m, "python_version");

	if (!version)
		return NULL;
	snprintf(needle, 64, "/lib/python%s/", version);
	return needle;
}

/* The bytes live at the end that the Python interpreter left (python_leftover()). */
static void leftover_row(struct summary *s)
{
	const struct model *m = &s->r->m;
	int k = model_metric(m, METRIC_MEM_LEAKED);
	int64_t v = 0, all = 0;
	char needle[64];
	size_t i, row;

	if (k < 0 || !leak_needle(m, needle))
		return;
	for (i = 0; i < m->nsamples; i++) {
		if (m->samples[i].metric != k || m->samples[i].value <= 0)
			continue;
		all = sat_add_i64(all, m->samples[i].value);
		if (python_leftover(m, m->samples[i].stack, needle))
			v = sat_add_i64(v, m->samples[i].value);
	}
	row = summary_row_int(s, "Memory", "Left At Exit By the Python Interpreter", v, "bytes");
	if (all > 0) /* of all that was live at the end */
		table_set_pct(s->t, row, s->pct,
			      v >= all ? 100.0 : 100.0 * (double)v / (double)all);
	if (v > 0)
		table_add_note(
			s->t,
			"%" PRId64 " bytes live at the end were left by the Python interpreter "
			"itself (its start-up, its allocator's arenas, the standard "
			"library's imports: what CPython never frees at its exit, 'still "
			"reachable' to valgrind), not by the program: the leaking call sites "
			"leave them out (the views of -metric 'Leaked Bytes' show them)",
			v);
}

static int site_cmp(const void *a, const void *b)
{
	const struct site *x = a, *y = b;

	return CMP_THEN(CMP(x->func, y->func),
			CMP_THEN(CMP(x->file, y->file), CMP(x->line, y->line)));
}

static int by_value(const void *a, const void *b)
{
	const struct site *x = a, *y = b;

	return CMP(y->value, x->value);
}

/*
 * The sites of metric k's samples, largest first: *n of them, caller frees. With needle (a
 * Python program's leaks), the interpreter's own leftovers are left out, their sum in
 * *leftover.
 */
static struct site *sites_of(const struct model *m, int k, size_t *n, const char *needle,
			     int64_t *leftover)
{
	struct site *v = calloc(m->nsamples + 1, sizeof(*v));
	size_t i, used = 0, out = 0;

	*n = 0;
	if (!v)
		return NULL;
	for (i = 0; i < m->nsamples; i++) {
		if (m->samples[i].metric != k || m->samples[i].value <= 0)
			continue;
		if (needle && python_leftover(m, m->samples[i].stack, needle)) {
			*leftover = sat_add_i64(*leftover, m->samples[i].value);
			continue;
		}
		site_of(m, m->samples[i].stack, &v[used]);
		v[used++].value = m->samples[i].value;
	}
	qsort(v, used, sizeof(*v), site_cmp);
	for (i = 0; i < used; i++) {
		if (out && !site_cmp(&v[out - 1], &v[i]))
			v[out - 1].value = sat_add_i64(v[out - 1].value, v[i].value);
		else
			v[out++] = v[i];
	}
	qsort(v, out, sizeof(*v), by_value);
	*n = out;
	return v;
}

static int top_sites(struct summary *s, const char *section, enum metric_id metric)
{
	struct report *r = s->r;
	const struct model *m = &r->m;
	int k = model_metric(m, metric);
	struct site *v;
	size_t n, i, row;
	char name[1024], needle[64];
	int64_t total = 0, leftover = 0;

	if (k < 0)
		return 0;
	if (!(v = sites_of(m, k, &n, metric == METRIC_MEM_LEAKED ? leak_needle(m, needle) : NULL,
			   &leftover)))
		return -ENOMEM;
	for (i = 0; i < n; i++)
		total = sat_add_i64(total, v[i].value);
	for (i = 0; i < n && i < TOP_SITES; i++) {
		if (v[i].file >= 0 && v[i].line > 0)
			snprintf(name, sizeof(name), "%s (%s:%d)",
				 report_function_name(r, v[i].func),
				 report_basename(m->files[v[i].file]), v[i].line);
		else
			snprintf(name, sizeof(name), "%s", report_function_name(r, v[i].func));
		row = summary_row_int(s, section, name, v[i].value, "bytes");
		if (total > 0) /* sums saturate: a share of a damaged total stays within 100% */
			table_set_pct(s->t, row, s->pct,
				      v[i].value >= total
					      ? 100.0
					      : 100.0 * (double)v[i].value / (double)total);
	}
	free(v);
	return 0;
}

/* The Memory section from the processes' figures (table process_memory), every node's in a job. */
static void section_memory(struct summary *s)
{
	struct report *r = s->r;
	sqlite3_stmt *st;
	int64_t peak = 0, peak_ns = -1, top = -1, v[11] = { 0 };
	int64_t nproc = 0, killed = 0, hooks = 0, sample_bytes = 0;
	char buf[128];
	size_t row, d;

	for (d = 0; d < model_ndbs(&r->m); d++) {
		if (sqlite3_prepare_v2(
			    model_db(&r->m, d),
			    "SELECT peak_bytes, peak_ns, ended, untracked_allocs, untracked_bytes,"
			    " unknown_frees, agent_peak_bytes, sample_bytes, hooks, cache_misses,"
			    " cache_checks, cache_collisions, cache_escalations, sampled_allocs"
			    " FROM process_memory",
			    -1, &st, NULL) != SQLITE_OK)
			continue; /* a node's result of another analysis, or older */
		while (sqlite3_step(st) == SQLITE_ROW) {
			int64_t p = sqlite3_column_int64(st, 0);
			int i;

			nproc++;
			peak = sat_add_i64(peak, p);
			if (p > top) {
				top = p;
				peak_ns = sqlite3_column_type(st, 1) == SQLITE_NULL
						  ? -1
						  : sat_add_i64(sqlite3_column_int64(st, 1),
								model_db_offset_ns(&r->m, d));
			}
			killed += !sqlite3_column_int64(st, 2);
			for (i = 0; i < 4; i++)
				v[i] = sat_add_i64(v[i], sqlite3_column_int64(st, 3 + i));
			sample_bytes = sqlite3_column_int64(st, 7);
			hooks = sat_add_i64(hooks, sqlite3_column_int64(st, 8));
			for (i = 4; i < 9; i++)
				v[i] = sat_add_i64(v[i], sqlite3_column_int64(st, 5 + i));
		}
		sqlite3_finalize(st);
	}
	if (!nproc)
		return;
	summary_row_int(s, "Memory",
			nproc > 1 ? "Peak Live Bytes (sum of the processes' peaks)"
				  : "Peak Live Bytes",
			peak, "bytes");
	if (peak_ns >= 0) {
		summary_row_time(s, "Memory",
				 nproc > 1 ? "Peak Reached At (largest process)"
					   : "Peak Reached At",
				 peak_ns);
	}
	if (killed)
		summary_row_int(s, "Memory", "Processes Killed Before Their End", killed, NULL);
	if (v[0]) {
		summary_row_int(s, "Memory", "Allocations Without Their Stack", v[0], NULL);
		summary_row_int(s, "Memory", "Bytes Without Their Stack", v[1], "bytes");
	}
	summary_row_int(s, "Memory", "Frees Of Blocks Not Recorded", v[2], NULL);
	if (sample_bytes) {
		snprintf(buf, sizeof(buf),
			 "one per %" PRId64 " bytes (Poisson), %" PRId64 " allocations sampled",
			 sample_bytes, v[8]);
		summary_row_add(s, "Memory", "Sampling", buf, NULL);
	} else {
		summary_row_add(s, "Memory", "Sampling", "exact (every allocation)", NULL);
	}
	if (hooks)
		summary_row_add(s, "Memory", "Allocations Seen Through",
				"the sanitizer's allocator hooks", NULL);
	summary_row_int(s, "Memory", "Agent Memory", v[3], "bytes");
	summary_row_int(s, "Memory", "Stacks Unwound", v[4], NULL);
	summary_row_int(s, "Memory", "Call-Site Cache Checks", v[5], NULL);
	row = summary_row_int(s, "Memory", "Call-Site Cache Collisions", v[6], NULL);
	if (v[5] > 0 && v[6] >= 0 && v[6] <= v[5])
		table_set_pct(s->t, row, s->pct, 100.0 * (double)v[6] / (double)v[5]);
	if (v[7])
		summary_row_int(s, "Memory", "Call-Site Keys Lengthened", v[7], NULL);
	leftover_row(s);
}

int summary_memory(struct summary *s)
{
	int rc;

	if (model_metric(&s->r->m, METRIC_MEM_ALLOCATED) < 0)
		return 0;
	section_memory(s);
	rc = top_sites(s, "Top Allocating Call Sites", METRIC_MEM_ALLOCATED);
	return rc ? rc : top_sites(s, "Top Leaking Call Sites", METRIC_MEM_LEAKED);
}
