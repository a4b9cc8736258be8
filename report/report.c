/* SPDX-License-Identifier: MIT */
/* Open a result for a report, pick the view, render it in the chosen format. */
#define LOG_DOMAIN "report"
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/log.h"
#include "common/options.h"
#include "common/result-dir.h"
#include "finalizer/finalize.h"
#include "report/filter.h"
#include "report/report-private.h"

const char *const report_views[] = {
	"summary", "hotspots", "top-down", "bottom-up", "caller-callee", "callstacks", "source",
	NULL,
};

int report_usage_error(const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	log_error("%s", buf);
	return -ERR_USAGE;
}

double report_pct(const struct report *r, int64_t ns)
{
	return r->total_ns > 0 ? 100.0 * (double)ns / (double)r->total_ns : 0.0;
}

const char *report_basename(const char *path)
{
	const char *slash;

	if (!path)
		return "";
	slash = strrchr(path, '/');
	return slash && slash[1] ? slash + 1 : path;
}

const char *report_module_name(const struct report *r, int func)
{
	int mod = func >= 0 ? r->m.functions[func].module : -1;

	if (mod >= 0)
		return r->m.modules[mod].name;
	if (func < 0)
		return "";
	return r->m.functions[func].python ? "[python]" : "[unknown]";
}

const char *report_file_path(const struct report *r, int file)
{
	return file >= 0 && (size_t)file < r->m.nfiles ? r->m.files[file] : NULL;
}

int report_find_functions(const struct report *r, const char *name, int **out, size_t *n)
{
	const struct model *m = &r->m;
	const char **names;
	const char *near;
	size_t i;

	*n = 0;
	*out = malloc((m->nfunctions + 1) * sizeof(int));
	if (!*out)
		return -ENOMEM;
	for (i = 0; i < m->nfunctions; i++)
		if (!strcmp(m->functions[i].name, name))
			(*out)[(*n)++] = (int)i;
	if (*n)
		return 0;
	free(*out);
	*out = NULL;
	names = malloc((m->nfunctions + 1) * sizeof(*names));
	for (i = 0; names && i < m->nfunctions; i++)
		names[i] = m->functions[i].name;
	near = names ? options_nearest(name, names, m->nfunctions) : NULL;
	if (near) {
		char buf[512];

		snprintf(buf, sizeof(buf), "%s", near);
		free(names);
		return report_usage_error("no function '%s' in result '%s' (did you mean '%s'?)",
					  name, r->dir, buf);
	}
	free(names);
	return report_usage_error("no function '%s' in result '%s'", name, r->dir);
}

void report_add_function_cols(struct table *t, struct function_cols *c)
{
	c->module = table_add_col(t, "Module", TABLE_TEXT, TABLE_SHRINK);
	c->file = table_add_col(t, "Source File", TABLE_TEXT, TABLE_KEEP_END);
	c->line = table_add_col(t, "Source Line", TABLE_INT, 0);
}

void report_set_function_cols(const struct report *r, struct table *t, size_t row,
			      const struct function_cols *c, int func)
{
	const struct model_function *f;

	if (func < 0)
		return;
	f = &r->m.functions[func];
	table_set_text_ref(t, row, c->module, report_module_name(r, func));
	if (f->file >= 0) {
		table_set_text_ref(t, row, c->file, report_file_path(r, f->file));
		if (f->line > 0)
			table_set_int(t, row, c->line, f->line);
	}
}

static const struct cct_node *sort_nodes;
static bool sort_by_self;

static int child_cmp(const void *pa, const void *pb)
{
	int a = *(const int *)pa, b = *(const int *)pb;
	int64_t va = sort_by_self ? sort_nodes[a].self_ns : sort_nodes[a].total_ns;
	int64_t vb = sort_by_self ? sort_nodes[b].self_ns : sort_nodes[b].total_ns;

	if (va != vb)
		return va > vb ? -1 : 1;
	return a < b ? -1 : a > b;
}

int report_sorted_children(const struct report *r, int node, bool by_self, int **out,
			   size_t *n)
{
	const struct cct_node *nodes = r->tree.nodes;
	size_t k = 0;
	int c;

	for (c = nodes[node].first_child; c >= 0; c = nodes[c].next_sibling)
		k++;
	*n = k;
	*out = malloc((k + 1) * sizeof(int));
	if (!*out)
		return -ENOMEM;
	k = 0;
	for (c = nodes[node].first_child; c >= 0; c = nodes[c].next_sibling)
		(*out)[k++] = c;
	sort_nodes = nodes;
	sort_by_self = by_self;
	qsort(*out, k, sizeof(int), child_cmp);
	return 0;
}

/* A usage error for an unknown column, naming the nearest of t's columns. */
static int unknown_column(const struct table *t, const char *name, const char *view)
{
	const char **names = malloc((t->ncols + 1) * sizeof(*names));
	const char *near = NULL;
	size_t i;
	int rc;

	for (i = 0; names && i < t->ncols; i++)
		names[i] = t->cols[i].name;
	if (names)
		near = options_nearest(name, names, t->ncols);
	if (near)
		rc = report_usage_error("unknown column '%s' for -sort-desc in the %s view "
					"(did you mean '%s'?)", name, view, near);
	else
		rc = report_usage_error("unknown column '%s' for -sort-desc in the %s view",
					name, view);
	free(names);
	return rc;
}

int report_tree_sort(const struct report *r, const struct table *t, bool self_default)
{
	const char *s = r->o->sort_desc;

	if (!s)
		return self_default;
	if (!strcmp(s, "CPU Time:Total") || !strcmp(s, "CPU Time:Total %"))
		return 0;
	if (!strcmp(s, "CPU Time:Self") || !strcmp(s, "CPU Time:Self %"))
		return 1;
	if (table_find_col(t, s) >= 0)
		return report_usage_error("the %s view sorts by 'CPU Time:Total' or "
					  "'CPU Time:Self' only, not '%s'", r->o->view, s);
	return unknown_column(t, s, r->o->view);
}

int report_sort_limit(const struct report *r, struct table *t, const char *default_col)
{
	const char *name = r->o->sort_desc ? r->o->sort_desc : default_col;
	int col = name ? table_find_col(t, name) : -1;

	if (name && col < 0)
		return unknown_column(t, name, r->o->view);
	if (col >= 0)
		table_sort(t, col);
	if (r->o->limit > 0)
		table_truncate(t, (size_t)r->o->limit);
	return 0;
}

/* "A:B" seconds from the start; either side may be empty. */
static int parse_time_filter(const char *s, int64_t *from, int64_t *to)
{
	char a[64], err[256];
	const char *colon = strchr(s, ':');
	double x;

	*from = 0;
	*to = INT64_MAX;
	if (!colon || (size_t)(colon - s) >= sizeof(a))
		return report_usage_error("invalid value '%s' for option '-time-filter': expected "
					  "START:END in seconds, e.g. 0.5:2", s);
	snprintf(a, sizeof(a), "%.*s", (int)(colon - s), s);
	if (*a) {
		if (options_parse_double("option '-time-filter'", a, 0, 1e9, &x, err, sizeof(err)))
			return report_usage_error("%s", err);
		*from = (int64_t)llround(x * 1e9);
	}
	if (colon[1]) {
		if (options_parse_double("option '-time-filter'", colon + 1, 0, 1e9, &x, err,
					 sizeof(err)))
			return report_usage_error("%s", err);
		*to = (int64_t)llround(x * 1e9);
	}
	if (*to <= *from)
		return report_usage_error("invalid value '%s' for option '-time-filter': the end "
					  "must come after the start", s);
	return 0;
}

/* Finalize a result that has raw streams but no database yet. */
static int finalize_first(const struct report_opts *o, const char *dir)
{
	struct finalize_opts fo = {
		.result_dir = dir,
		.source_dirs = o->source_dirs,
		.nsource_dirs = o->nsource_dirs,
		.quiet = o->quiet,
	};
	int rc;

	if (!o->quiet)
		log_info("result '%s' is not finalized yet: finalizing it now", dir);
	rc = finalize_run(&fo);
	if (rc < 0) {
		log_error("cannot finalize result '%s'; finalize it with 'pfinalize -r %s', "
			  "then run preport again", dir, dir);
		return rc;
	}
	return 0;
}

int report_open(struct report *r, const struct report_opts *o, const char *dir,
		unsigned cct_flags)
{
	char db[4096], err[1024];
	struct stat st;
	int rc;

	memset(r, 0, sizeof(*r));
	r->o = o;
	r->dir = dir;
	if (stat(dir, &st) < 0) {
		rc = errno;
		/* A name that leads nowhere is the user's to fix; a refusal of the system is not. */
		if (rc == ENOENT || rc == ENOTDIR)
			return report_usage_error("cannot open result '%s': %s", dir, strerror(rc));
		log_error("cannot open result '%s': %s", dir, strerror(rc));
		return -rc;
	}
	if (!S_ISDIR(st.st_mode) || !result_dir_is_result(dir))
		return report_usage_error("'%s' is not a result directory (it has neither result.db "
					  "nor raw/); give the directory pcollect -r wrote", dir);
	if (result_path(db, sizeof(db), dir, RESULT_PATH_DB, 0, 0, NULL, NULL) < 0)
		return report_usage_error("cannot open result '%s': %s", dir, strerror(ENAMETOOLONG));
	if (stat(db, &st) < 0) {
		log_debug("'%s': no database yet: finalizing first", db);
		rc = finalize_first(o, dir);
		if (rc)
			return rc;
	}
	log_debug("reading '%s'%s", db, o->time_filter ? " (the timeline, for -time-filter)" : "");
	/* With a time filter the samples come from the timeline: the samples table is not read. */
	rc = model_load(&r->m, db, (o->time_filter ? MODEL_NO_SAMPLES : 0) |
			(cct_flags & CCT_LINES ? MODEL_FRAME_LINES : 0), err, sizeof(err));
	if (rc) {
		log_error("%s", err);
		return rc;
	}
	if (o->time_filter ? !model_has_samples(&r->m) : !r->m.nsamples) {
		log_error("result '%s' holds no samples: the program ran for less than one sampling "
			  "interval, or sampling failed (see %s/log/)", dir, dir);
		model_free(&r->m);
		return -ENODATA;
	}
	if (o->time_filter) {
		int64_t from, to;

		rc = parse_time_filter(o->time_filter, &from, &to);
		if (!rc && (rc = model_load_time_range(&r->m, from, to, err, sizeof(err))))
			log_error("%s", err);
		if (rc)
			goto fail;
	}
	rc = cct_build(&r->tree, &r->m, cct_flags);
	if (rc) {
		log_error("cannot build the call tree of '%s': %s", dir, strerror(-rc));
		goto fail;
	}
	rc = report_filter_samples(r);
	if (rc == -ENOMEM)
		log_error("cannot filter the samples of '%s': %s", dir, strerror(ENOMEM));
	if (rc)
		goto fail;
	return 0;
fail:
	report_close(r);
	return rc;
}

void report_close(struct report *r)
{
	cct_release(&r->tree);
	model_free(&r->m);
	free(r->recs);
	r->recs = NULL;
}

/* The view's tree flags: source positions only where the view shows them. */
static unsigned view_flags(const struct report_opts *o)
{
	unsigned flags = 0;

	if (o->inline_on)
		flags |= CCT_INLINE;
	if (o->all_frames)
		flags |= CCT_ALL_FRAMES;
	if (o->python_only)
		flags |= CCT_PYTHON_ONLY;
	if (!strcmp(o->view, "source") ||
	    (!strcmp(o->view, "hotspots") && o->group_by && strstr(o->group_by, "source-line")))
		flags |= CCT_LINES;
	return flags;
}

static int render(const struct report_opts *o, struct report *r, const struct table *t,
		  FILE *f)
{
	if (o->format == REPORT_CSV)
		return table_render_csv(t, f, o->csv_delimiter);
	if (o->format == REPORT_JSON)
		return table_render_json(t, f, o->view);
	if (!strcmp(o->view, "summary"))
		return view_summary_text(r, t, f);
	return table_render_text(t, f, o->width);
}

static int run_view(const struct report_opts *o, struct report *r, struct report *r2,
		    struct table *t)
{
	const char *v = o->view;

	if (r2) {
		if (!strcmp(v, "hotspots"))
			return view_hotspots_diff(r, r2, t);
		if (!strcmp(v, "top-down"))
			return view_topdown_diff(r, r2, t);
		return report_usage_error("the difference of two results is shown by the hotspots "
					  "and top-down views, not by '%s'", v);
	}
	if (!strcmp(v, "summary"))
		return view_summary(r, t);
	if (!strcmp(v, "hotspots"))
		return view_hotspots(r, t);
	if (!strcmp(v, "top-down"))
		return view_topdown(r, t);
	if (!strcmp(v, "bottom-up"))
		return view_bottomup(r, t);
	if (!strcmp(v, "caller-callee"))
		return view_callers(r, t);
	if (!strcmp(v, "callstacks"))
		return view_callstacks(r, t);
	if (!strcmp(v, "source"))
		return view_source(r, t);
	return report_usage_error("unknown view '%s'", v);
}

int report_run(const struct report_opts *o)
{
	struct report r[2];
	struct table t;
	FILE *f = stdout;
	size_t i;
	int rc = 0;

	if (o->nresults < 1 || o->nresults > 2)
		return report_usage_error(o->nresults ? "give at most two results (-r A -r B)"
						      : "no result given: use -r DIR");
	if (o->nresults == 2 && strcmp(o->view, "hotspots") && strcmp(o->view, "top-down"))
		return report_usage_error("the difference of two results is shown by the hotspots "
					  "and top-down views, not by '%s'", o->view);
	for (i = 0; i < o->nresults; i++) {
		rc = report_open(&r[i], o, o->results[i], view_flags(o));
		if (rc) {
			while (i--)
				report_close(&r[i]);
			return rc;
		}
	}
	table_init(&t);
	rc = run_view(o, &r[0], o->nresults == 2 ? &r[1] : NULL, &t);
	if (!rc && t.failed)
		rc = -ENOMEM;
	/* Usage errors were told where found; out of memory is told here (docs/errors.md). */
	if (rc && rc != -ERR_USAGE)
		log_error("cannot build the %s view: %s", o->view, strerror(-rc));
	if (!rc && o->output && !(f = fopen(o->output, "w"))) {
		rc = -errno;
		log_error("cannot write report '%s': %s", o->output, strerror(errno));
	}
	if (!rc) {
		bool to_file = f != stdout;

		rc = render(o, &r[0], &t, f);
		if ((to_file ? fclose(f) : fflush(f)) && !rc)
			rc = -errno;
		if (rc)
			log_error("cannot write report '%s': %s", o->output ? o->output : "stdout",
				  strerror(-rc));
	}
	table_release(&t);
	for (i = 0; i < o->nresults; i++)
		report_close(&r[i]);
	return rc;
}
