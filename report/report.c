/* SPDX-License-Identifier: MIT */
/* Open a result for a report, pick the view, render it in the chosen format. */
#define LOG_DOMAIN "report"
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/log.h"
#include "common/options.h"
#include "common/result-dir.h"
#include "finalizer/finalize.h"
#include "report/filter.h"
#include "report/names.h"
#include "report/report-private.h"

int report_usage_error(const char *fmt, ...)
{
	char buf[4096];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	log_error("%s", buf);
	return -ERR_USAGE;
}

double report_pct(const struct report *r, int metric, int64_t v)
{
	int64_t total = r->total[metric];

	return total > 0 ? 100.0 * (double)v / (double)total : 0.0;
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

const char *report_group_kind(const struct cct *tree, int node)
{
	static const char *const kinds[] = { "process",   "thread",      "module", "rank",
					     "wait-kind", "sync-object", "node",   "region" };
	int g = cct_group_of(&tree->nodes[node]);

	return g >= 0 ? kinds[tree->groups[g].kind] : "";
}

const char *report_group_label(const struct report *r, const struct cct *tree, int node, char *buf,
			       size_t size)
{
	int g = cct_group_of(&tree->nodes[node]), item;

	if (g < 0)
		return "";
	item = tree->groups[g].item;
	switch (tree->groups[g].kind) {
	case CCT_GROUP_THREAD:
		if (item < 0)
			return "[unknown thread]";
		snprintf(buf, size, "%s (TID %lld)",
			 *r->m.threads[item].name ? r->m.threads[item].name : "[thread]",
			 (long long)r->m.threads[item].tid);
		return buf;
	case CCT_GROUP_PROCESS:
		if (item < 0)
			return "[unknown process]";
		snprintf(buf, size, "%s (PID %lld)", report_basename(r->m.processes[item].exe),
			 (long long)r->m.processes[item].pid);
		return buf;
	case CCT_GROUP_MODULE:
		return item >= 0 ? r->m.modules[item].name : item == -2 ? "[python]" : "[unknown]";
	case CCT_GROUP_RANK:
		if (item < 0)
			return "[no rank]";
		snprintf(buf, size, "rank %d", item);
		return buf;
	case CCT_GROUP_NODE:
		return model_node_label(&r->m, item);
	case CCT_GROUP_WAIT_KIND:
		return model_wait_kind_label(&r->m, item);
	case CCT_GROUP_SYNC_OBJECT:
		return model_sync_object_label(&r->m, item, buf, size);
	case CCT_GROUP_REGION:
		return model_region_label(&r->m, item);
	}
	return "";
}

void report_add_function_cols(struct table *t, struct function_cols *c)
{
	c->module = table_add_col(t, "Module", TABLE_TEXT, TABLE_SHRINK | TABLE_DETAIL);
	c->file = table_add_col(t, "Source File", TABLE_TEXT, TABLE_KEEP_END | TABLE_DETAIL);
	c->line = table_add_col(t, "Source Line", TABLE_INT, TABLE_DETAIL);
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

enum table_type report_metric_type(const struct model_metric *mt)
{
	switch (mt->unit) {
	case MODEL_UNIT_NS:
		return TABLE_TIME;
	case MODEL_UNIT_BYTES:
		return TABLE_BYTES;
	case MODEL_UNIT_COUNT:
		break;
	}
	return TABLE_INT;
}

void report_add_metric_cols(const struct report *r, struct table *t, struct metric_cols *c,
			    unsigned flags)
{
	size_t i;
	int side;

	for (i = 0; i < r->nshown; i++) {
		const struct model_metric *mt = &r->m.metrics[r->shown[i]];
		enum table_type type = report_metric_type(mt);
		char name[512];

		c->self[i] = c->selfp[i] = c->total[i] = c->totalp[i] = -1;
		for (side = 0; side < 2; side++) {
			bool total = (side == 0) == !!(flags & MC_TOTAL_FIRST);
			const char *word = total ? "Total" : "Self";

			if (!(flags & (total ? MC_TOTAL : MC_SELF)))
				continue;
			snprintf(name, sizeof(name), "%s:%s", mt->name, word);
			*(total ? &c->total[i] : &c->self[i]) = table_add_col(t, name, type, 0);
			snprintf(name, sizeof(name), "%s:%s %%", mt->name, word);
			/* Percentages go first when a terminal is too narrow for every column. */
			*(total ? &c->totalp[i] : &c->selfp[i]) =
				table_add_col(t, name, TABLE_PCT, TABLE_OPTIONAL);
		}
	}
}

void report_set_metric_cols(const struct report *r, struct table *t, size_t row,
			    const struct metric_cols *c, const int64_t *self, const int64_t *total)
{
	size_t i;

	for (i = 0; i < r->nshown; i++) {
		int k = r->shown[i];

		/* The column's type says how the number reads; the cell holds the value as is. */
		if (self && c->self[i] >= 0) {
			table_set_int(t, row, c->self[i], self[k]);
			table_set_pct(t, row, c->selfp[i], report_pct(r, k, self[k]));
		}
		if (total && c->total[i] >= 0) {
			table_set_int(t, row, c->total[i], total[k]);
			table_set_pct(t, row, c->totalp[i], report_pct(r, k, total[k]));
		}
	}
}

bool report_passes(const struct report *r, const int64_t *v)
{
	size_t k;

	for (k = 0; k < r->m.nmetrics; k++)
		if (r->min[k] != INT64_MAX && v[k] > 0 && v[k] >= r->min[k])
			return true;
	return false;
}

bool report_any_shown(const struct report *r, const int64_t *v)
{
	size_t i;

	for (i = 0; i < r->nshown; i++)
		if (v[r->shown[i]])
			return true;
	return false;
}

void report_note_pruned(const struct report *r, struct table *t, size_t n, const char *what)
{
	const char *by =
		r->o->threshold_metric
			? r->m.metrics[model_find_metric(&r->m, r->o->threshold_metric)].name
			: NULL;

	if (!n)
		return;
	if (by)
		table_add_note(t,
			       "%zu %s below %.3g%% of the total %s not shown (-threshold 0 "
			       "shows all)",
			       n, what, r->o->threshold, by);
	else
		table_add_note(t,
			       "%zu %s below %.3g%% of the total not shown (-threshold 0 shows "
			       "all)",
			       n, what, r->o->threshold);
}

struct child_order {
	const struct cct *tree;
	size_t k; /* value index within a node: metric */
	const int64_t *v;
};

static int child_cmp(const void *pa, const void *pb, void *arg)
{
	const struct child_order *o = arg;
	int a = *(const int *)pa, b = *(const int *)pb;
	int64_t va = o->v[(size_t)a * o->tree->nm + o->k];
	int64_t vb = o->v[(size_t)b * o->tree->nm + o->k];

	if (va != vb)
		return va > vb ? -1 : 1;
	return a < b ? -1 : a > b;
}

int report_sorted_children(const struct report *r, const struct cct *tree, int node, int **out,
			   size_t *n)
{
	struct child_order o = {
		.tree = tree,
		.k = (size_t)r->sort_metric,
		.v = r->sort_side == REPORT_SELF ? tree->self : tree->total,
	};
	const struct cct_node *nodes = tree->nodes;
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
	qsort_r(*out, k, sizeof(int), child_cmp, &o);
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
					"(did you mean '%s'?)",
					name, view, near);
	else
		rc = report_usage_error("unknown column '%s' for -sort-desc in the %s view", name,
					view);
	free(names);
	return rc;
}

/* The column called name, ignoring case. */
static int find_col_nocase(const struct table *t, const char *name)
{
	size_t i;

	for (i = 0; i < t->ncols; i++)
		if (!strcasecmp(t->cols[i].name, name))
			return (int)i;
	return -1;
}

int report_sort_limit(const struct report *r, struct table *t, const char *default_col)
{
	const char *name = r->o->sort_desc ? r->o->sort_desc : default_col;
	int col = name ? find_col_nocase(t, name) : -1;
	char buf[512];

	/* A metric named alone: its self (in a difference report, the difference of it). */
	if (name && col < 0 && model_find_metric(&r->m, name) >= 0) {
		const char *mname = r->m.metrics[model_find_metric(&r->m, name)].name;

		snprintf(buf, sizeof(buf), "%s:Self", mname);
		if ((col = find_col_nocase(t, buf)) < 0) {
			snprintf(buf, sizeof(buf), "%s:Self:Difference", mname);
			col = find_col_nocase(t, buf);
		}
	}
	if (name && col < 0)
		return unknown_column(t, name, r->view->name);
	if (col >= 0)
		table_sort(t, col);
	if (r->o->limit > 0)
		table_truncate(t, (size_t)r->o->limit);
	return 0;
}

/* The metric and side spec names: "Wait Time", "Wait Time:Self", "cpu time:total %". */
static int parse_metric_side(const struct model *m, const char *spec, int *metric, int *side)
{
	const char *colon = strchr(spec, ':');
	char name[256], rest[64];
	size_t i = 0, j;

	snprintf(name, sizeof(name), "%.*s", colon ? (int)(colon - spec) : (int)strlen(spec), spec);
	*metric = model_find_metric(m, name);
	*side = -1;
	if (*metric < 0)
		return -1;
	if (!colon)
		return 0;
	/* "Self", "Self %", "total": the side; anything else is no metric side. */
	for (j = 1; colon[j] && i + 1 < sizeof(rest); j++)
		if (colon[j] != ' ' && colon[j] != '%')
			rest[i++] = colon[j];
	rest[i] = '\0';
	if (!strcasecmp(rest, "self"))
		*side = REPORT_SELF;
	else if (!strcasecmp(rest, "total"))
		*side = REPORT_TOTAL;
	else
		return -1;
	return 0;
}

/* The metric names of the result, for messages: "'CPU Time', 'Wait Time'". */
static void metric_list(const struct model *m, char *buf, size_t size)
{
	size_t i, len = 0;

	buf[0] = '\0';
	for (i = 0; i < m->nmetrics && len < size; i++)
		len += (size_t)snprintf(buf + len, size - len, "%s'%s'", i ? ", " : "",
					m->metrics[i].name);
}

static int unknown_metric(const struct report *r, const char *name, const char *what)
{
	const char **names = malloc((r->m.nmetrics + 1) * sizeof(*names));
	const char *near = NULL;
	char list[1024];
	size_t i;
	int rc;

	for (i = 0; names && i < r->m.nmetrics; i++)
		names[i] = r->m.metrics[i].name;
	if (names)
		near = options_nearest(name, names, r->m.nmetrics);
	metric_list(&r->m, list, sizeof(list));
	if (near)
		rc = report_usage_error("no metric '%s' for %s in result '%s' (did you mean '%s'?)",
					name, what, r->dir, near);
	else
		rc = report_usage_error("no metric '%s' for %s in result '%s'; it holds %s", name,
					what, r->dir, list);
	free(names);
	return rc;
}

/* -sort-desc where the view sorts by a metric: the metric and a side the view has. */
static int check_sort(const struct report *r)
{
	const struct report_view *v = r->view;
	const char *s = r->o->sort_desc;
	const char *side = v->flags & VIEW_SORT_TOTAL ? "Total" : "Self";

	if (!s || (v->flags & VIEW_FLAT_GROUPS))
		return 0; /* flat tables sort by any of their columns (report_sort_limit) */
	if (v->flags & VIEW_NO_SORT)
		return report_usage_error("the %s view is not sorted: its rows are in order",
					  v->name);
	if (!r->sort_given)
		return report_usage_error("the %s view sorts by a metric ('%s' or '%s:%s'), not "
					  "'%s'",
					  v->name, r->m.metrics[r->sort_metric].name,
					  r->m.metrics[r->sort_metric].name, side, s);
	if ((v->flags & VIEW_SELF_ONLY) && r->sort_side == REPORT_TOTAL)
		return report_usage_error("the %s view sorts by a metric's Self only: '%s:Self'",
					  v->name, r->m.metrics[r->sort_metric].name);
	return 0;
}

/* pct percent of total; a saturated total stays in range (the conversion would not). */
static int64_t share_of(int64_t total, double pct)
{
	double v = (double)total * pct / 100.0;

	return v >= 0x1p63 ? INT64_MAX : v <= -0x1p63 ? INT64_MIN : (int64_t)v;
}

/* -metric, -sort-desc and -threshold: which metrics a view shows, sorts and judges by. */
static int pick_metrics(struct report *r)
{
	const struct report_opts *o = r->o;
	const struct report_view *v = r->view;
	size_t i, k, nm = r->m.nmetrics;
	int metric, side, rc;

	r->nshown = 0;
	for (i = 0; i < o->nmetrics; i++) {
		int m = model_find_metric(&r->m, o->metrics[i]);

		if (m < 0)
			return unknown_metric(r, o->metrics[i], "-metric");
		for (k = 0; k < r->nshown && r->shown[k] != m; k++)
			;
		if (k == r->nshown && r->nshown < REPORT_MAX_METRICS)
			r->shown[r->nshown++] = m;
	}
	for (i = 0; !o->nmetrics && i < nm && r->nshown < REPORT_MAX_METRICS; i++)
		if (!r->skipped[i])
			r->shown[r->nshown++] = (int)i;
	if (!r->nshown)
		return report_usage_error("no metric of result '%s' can be shown with "
					  "-time-filter",
					  r->dir);
	for (i = 0; i < r->nshown; i++)
		if (r->skipped[r->shown[i]])
			return report_usage_error("metric '%s' aggregates as a peak, which "
						  "-time-filter cannot compute; leave it out of "
						  "-metric",
						  r->m.metrics[r->shown[i]].name);
	/* The default sort: the main metric when shown, else the first shown. */
	r->sort_metric = r->shown[0];
	for (i = 0; i < r->nshown; i++)
		if (r->m.metrics[r->shown[i]].main) {
			r->sort_metric = r->shown[i];
			break;
		}
	r->sort_side = v->flags & VIEW_SORT_TOTAL ? REPORT_TOTAL : REPORT_SELF;
	if (o->sort_desc && !parse_metric_side(&r->m, o->sort_desc, &metric, &side)) {
		r->sort_metric = metric;
		r->sort_given = true;
		if (side >= 0)
			r->sort_side = (enum report_side)side;
	}
	if ((rc = check_sort(r)))
		return rc;
	r->min = malloc(nm * sizeof(*r->min));
	if (!r->min)
		return -ENOMEM;
	for (k = 0; k < nm; k++)
		r->min[k] = INT64_MAX;
	if (o->threshold_metric) {
		if ((metric = model_find_metric(&r->m, o->threshold_metric)) < 0)
			return unknown_metric(r, o->threshold_metric, "-threshold");
		r->min[metric] = share_of(r->total[metric], o->threshold);
	} else {
		for (i = 0; i < r->nshown; i++)
			r->min[r->shown[i]] = share_of(r->total[r->shown[i]], o->threshold);
	}
	return 0;
}

/* Function names as shown: whole, or with -name-style short without parameter lists. */
static int name_functions(struct report *r)
{
	size_t i;

	r->fnames = malloc((r->m.nfunctions + 1) * sizeof(*r->fnames));
	if (!r->fnames)
		return -ENOMEM;
	for (i = 0; i < r->m.nfunctions; i++) {
		const char *name = r->m.functions[i].name;
		size_t n = r->o->short_names ? names_short_len(name) : strlen(name);
		char *s;

		r->fnames[i] = name;
		if (n == strlen(name))
			continue;
		s = strndup(name, n);
		if (!s || !(r->fnames[i] = model_strdup(&r->m, s))) {
			free(s);
			return -ENOMEM;
		}
		free(s);
	}
	return 0;
}

int report_parse_time_filter(const char *s, int64_t *from, int64_t *to)
{
	char a[64], err[256];
	const char *colon = strchr(s, ':');
	double x;

	*from = 0;
	*to = INT64_MAX;
	if (!colon || (size_t)(colon - s) >= sizeof(a))
		return report_usage_error("invalid value '%s' for option '-time-filter': expected "
					  "START:END in seconds, e.g. 0.5:2",
					  s);
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
					  "must come after the start",
					  s);
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
			  "then run preport again",
			  dir, dir);
		return rc;
	}
	return 0;
}

/* A result directory that does not exist (and is no job). */
static int missing_result(const char *dir, int err)
{
	/* A name that leads nowhere is the user's to fix; a refusal of the system is not. */
	if (err == ENOENT || err == ENOTDIR)
		return report_usage_error("cannot open result '%s': %s (and no '%s.<host>' "
					  "results of a parallel job are beside it)",
					  dir, strerror(err), report_basename(dir));
	log_error("cannot open result '%s': %s", dir, strerror(err));
	return -err;
}

/* Finalize the node results of job dir that have raw streams but no database yet. */
static int finalize_job_first(const struct report_opts *o, const char *dir, char **parts, size_t n)
{
	struct finalize_opts fo = {
		.result_dir = dir,
		.source_dirs = o->source_dirs,
		.nsource_dirs = o->nsource_dirs,
		.quiet = o->quiet,
	};
	char **todo = calloc(n + 1, sizeof(*todo)), db[4096];
	size_t i, k = 0;
	struct stat st;
	int rc = 0;

	if (!todo)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		if (result_path(db, sizeof(db), parts[i], RESULT_PATH_DB, 0, 0, NULL, NULL) >= 0 &&
		    stat(db, &st) < 0)
			todo[k++] = parts[i];
	if (k) {
		if (!o->quiet)
			log_info("%zu of the %zu node results of job '%s' are not finalized yet: "
				 "finalizing them now",
				 k, n, dir);
		rc = finalize_job(&fo, todo, k);
		if (rc < 0)
			log_error("cannot finalize job '%s'; finalize it with 'pfinalize -r %s', "
				  "then run preport again",
				  dir, dir);
	}
	free(todo);
	return rc;
}

/* A parallel job's results DIR.<host> as one model. 1: dir is no job. */
static int load_job(struct report *r, const char *dir, unsigned mflags)
{
	char **parts = NULL, **dbs = NULL, err[1024];
	size_t n = 0, i;
	int rc;

	if ((rc = result_dir_job_parts(dir, &parts, &n)) || !n)
		return rc ? rc : 1;
	rc = finalize_job_first(r->o, dir, parts, n);
	if (!rc && !(dbs = calloc(n + 1, sizeof(*dbs))))
		rc = -ENOMEM;
	for (i = 0; !rc && i < n; i++) {
		dbs[i] = malloc(4096);
		if (!dbs[i])
			rc = -ENOMEM;
		else if (result_path(dbs[i], 4096, parts[i], RESULT_PATH_DB, 0, 0, NULL, NULL) < 0)
			rc = report_usage_error("cannot open result '%s': %s", parts[i],
						strerror(ENAMETOOLONG));
	}
	if (!rc) {
		log_debug("reading the %zu node results of job '%s'", n, dir);
		rc = model_load_job(&r->m, dir, dbs, n, mflags, err, sizeof(err));
		if (rc)
			log_error("%s", err);
	} else if (rc == -ENOMEM) {
		log_error("cannot load job '%s': %s", dir, strerror(ENOMEM));
	}
	result_dir_list_free(dbs, n);
	result_dir_list_free(parts, n);
	return rc;
}

/* The tree views' -group-by keys: each a level of the tree (function ends the list). */
static const struct {
	const char *name;
	enum cct_group_kind kind;
} tree_keys[] = {
	{ "process", CCT_GROUP_PROCESS },
	{ "thread", CCT_GROUP_THREAD },
	{ "module", CCT_GROUP_MODULE },
	{ "rank", CCT_GROUP_RANK },
	{ "node", CCT_GROUP_NODE },
	{ "wait-kind", CCT_GROUP_WAIT_KIND },
	{ "sync-object", CCT_GROUP_SYNC_OBJECT },
	{ "region", CCT_GROUP_REGION },
	{ "function", CCT_GROUP_PROCESS }, /* not a level: the call tree itself */
};
#define NTREE_KEYS        (sizeof(tree_keys) / sizeof(tree_keys[0]))
#define TREE_KEY_FUNCTION (NTREE_KEYS - 1)

/*
 * The tree views' -group-by: process, thread, module, rank, node, wait-kind, sync-object and
 * region as the top levels of the tree.
 */
static int tree_levels(struct report *r)
{
	const char *p = r->o->group_by;
	const char *names[NTREE_KEYS];
	size_t k, l;

	for (k = 0; k < NTREE_KEYS; k++)
		names[k] = tree_keys[k].name;
	r->nlevels = 0;
	while (p && *p) {
		size_t len = strcspn(p, ",");
		char word[64];

		snprintf(word, sizeof(word), "%.*s", (int)len, p);
		for (k = 0; k < NTREE_KEYS && strcmp(word, names[k]); k++)
			;
		if (k == NTREE_KEYS) {
			const char *near = options_nearest(word, names, NTREE_KEYS);

			if (!strcmp(word, "source-line"))
				return report_usage_error(
					"the %s view does not group by source-line "
					"(the hotspots view does); use thread, "
					"process, module, rank, node, wait-kind, "
					"sync-object or region",
					r->view->name);
			return report_usage_error("unknown grouping '%s' for -group-by in the %s "
						  "view%s%s%s; use thread, process, module, "
						  "rank, node, wait-kind, sync-object or region",
						  word, r->view->name,
						  near ? " (did you mean '" : "", near ? near : "",
						  near ? "'?)" : "");
		}
		p += len + (p[len] == ',');
		if (k == TREE_KEY_FUNCTION) {
			if (*p)
				return report_usage_error("in the %s view, function comes last in "
							  "-group-by (the call tree itself): e.g. "
							  "-group-by thread,function",
							  r->view->name);
			break;
		}
		for (l = 0; l < r->nlevels; l++)
			if (r->levels[l] == tree_keys[k].kind)
				return report_usage_error(
					"option '-group-by' takes each of thread, "
					"process, module, rank, node, "
					"wait-kind, sync-object and region once");
		r->levels[r->nlevels++] = tree_keys[k].kind;
	}
	return 0;
}

/* The rank and the node of a sample's process: -1 when unknown. */
int report_sample_rank(const struct report *r, const struct model_sample *s)
{
	int p = s->thread >= 0 ? r->m.threads[s->thread].process : -1;

	return p >= 0 ? (int)r->m.processes[p].rank : -1;
}

int report_sample_node(const struct report *r, const struct model_sample *s)
{
	int p = s->thread >= 0 ? r->m.threads[s->thread].process : -1;

	return p >= 0 ? r->m.processes[p].node : -1;
}

/* The wait kind and the sync object of a sample: -1 (no wait) without a context. */
int report_sample_wait_kind(const struct report *r, const struct model_sample *s)
{
	return s->context >= 0 ? r->m.contexts[s->context].kind : -1;
}

int report_sample_sync_object(const struct report *r, const struct model_sample *s)
{
	return s->context >= 0 ? r->m.contexts[s->context].sync_object : -1;
}

int report_sample_region(const struct report *r, const struct model_sample *s)
{
	return s->context >= 0 ? r->m.contexts[s->context].region_index : -1;
}

/* The subject of group level kind for a record. */
static int level_item(const struct report *r, enum cct_group_kind kind, const struct record *rec)
{
	const struct model_sample *s = report_sample(r, rec);
	const struct model_function *f;
	int func;

	switch (kind) {
	case CCT_GROUP_THREAD:
		return s->thread;
	case CCT_GROUP_PROCESS:
		return s->thread >= 0 ? r->m.threads[s->thread].process : -1;
	case CCT_GROUP_RANK:
		return report_sample_rank(r, s);
	case CCT_GROUP_NODE:
		return report_sample_node(r, s);
	case CCT_GROUP_MODULE:
		func = r->tree.nodes[rec->node].func;
		if (func < 0)
			return -1;
		f = &r->m.functions[func];
		return f->module >= 0 ? f->module : f->python ? -2 : -1;
	case CCT_GROUP_WAIT_KIND:
		return report_sample_wait_kind(r, s);
	case CCT_GROUP_SYNC_OBJECT:
		return report_sample_sync_object(r, s);
	case CCT_GROUP_REGION:
		return report_sample_region(r, s);
	}
	return -1;
}

/* Tree views: the tree again, under -group-by levels and with recursion collapsed. */
static int derive_tree(struct report *r)
{
	struct cct dst;
	size_t i, l;
	int rc;

	if (!r->nlevels && !r->o->collapse_recursion)
		return 0;
	if ((rc = cct_derive_init(&dst, &r->tree)))
		return rc;
	for (i = 0; i < r->nrecs && !rc; i++) {
		struct record *rec = &r->recs[i];
		int top = 0, node;

		for (l = 0; l < r->nlevels && top >= 0; l++)
			top = cct_derive_group(&dst, top, r->levels[l],
					       level_item(r, r->levels[l], rec));
		node = top < 0 ? top
			       : cct_derive_node(&dst, &r->tree, top, rec->node,
						 r->o->collapse_recursion);
		if (node < 0) {
			rc = node;
			break;
		}
		rec->node = node;
		cct_add(&dst, node, report_sample(r, rec)->metric, report_sample(r, rec)->value,
			report_sample(r, rec)->count);
	}
	if (!rc)
		rc = cct_sum(&dst);
	if (rc) {
		cct_release(&dst);
		return rc;
	}
	cct_release(&r->tree);
	r->tree = dst;
	return 0;
}

int report_open(struct report *r, const struct report_opts *o, const char *dir,
		const struct report_view *view)
{
	char db[4096], err[1024];
	unsigned flags = 0, mflags;
	struct stat st;
	int rc;

	memset(r, 0, sizeof(*r));
	r->o = o;
	r->dir = dir;
	r->view = view;
	if (o->inline_on)
		flags |= CCT_INLINE;
	if (o->all_frames)
		flags |= CCT_ALL_FRAMES;
	if (o->python_only)
		flags |= CCT_PYTHON_ONLY;
	/* Source positions only where the view shows them. */
	if ((view->flags & VIEW_LINES) ||
	    ((view->flags & VIEW_FLAT_GROUPS) && o->group_by && strstr(o->group_by, "source-line")))
		flags |= CCT_LINES;
	if ((view->flags & VIEW_TREE) && (rc = tree_levels(r)))
		return rc;
	mflags = (o->time_filter ? MODEL_NO_SAMPLES : 0) |
		 (flags & CCT_LINES || view->flags & VIEW_FRAME_LINES ? MODEL_FRAME_LINES : 0);
	if (stat(dir, &st) < 0) {
		int err_stat = errno;

		rc = load_job(r, dir, mflags);
		if (rc == 1)
			return missing_result(dir, err_stat);
		if (rc)
			return rc;
		goto loaded;
	}
	if (!S_ISDIR(st.st_mode) || !result_dir_is_result(dir))
		return report_usage_error(
			"'%s' is not a result directory (it has neither result.db "
			"nor raw/); give the directory pcollect -r wrote",
			dir);
	if (result_path(db, sizeof(db), dir, RESULT_PATH_DB, 0, 0, NULL, NULL) < 0)
		return report_usage_error("cannot open result '%s': %s", dir,
					  strerror(ENAMETOOLONG));
	if (stat(db, &st) < 0) {
		long pid = result_dir_collecting(dir);

		/* Finalized now, the result would stay a partial one without a word. */
		if (pid) {
			log_error(
				"result '%s' is still being collected (pcollect, pid %ld, is "
				"running): run preport when it ends, or finalize what was written "
				"so far with 'pfinalize -r %s'",
				dir, pid, dir);
			return -EBUSY;
		}
		log_debug("'%s': no database yet: finalizing first", db);
		rc = finalize_first(o, dir);
		if (rc)
			return rc;
	}
	log_debug("reading '%s'%s", db, o->time_filter ? " (the timeline, for -time-filter)" : "");
	/* With a time filter the samples come from the timeline: the samples table is not read. */
	rc = model_load(&r->m, db, mflags, err, sizeof(err));
	if (rc) {
		log_error("%s", err);
		if (rc == -EPROTO)
			log_error("or finalize it again with this version: 'pfinalize -r %s'", dir);
		return rc;
	}
loaded:
	if (model_meta_int(&r->m, "collection_running", 0) > 0)
		log_warn("result '%s' was finalized while it was still being collected (pcollect, "
			 "pid %lld): it holds only what was written by then; once the collection "
			 "has ended, finalize it again with 'pfinalize -r %s'",
			 dir, (long long)model_meta_int(&r->m, "collection_running", 0), dir);
	r->total = calloc(r->m.nmetrics, sizeof(*r->total));
	r->count = calloc(r->m.nmetrics, sizeof(*r->count));
	r->skipped = calloc(r->m.nmetrics, sizeof(*r->skipped));
	if (!r->total || !r->count || !r->skipped || name_functions(r)) {
		rc = -ENOMEM;
		log_error("cannot load result '%s': %s", dir, strerror(ENOMEM));
		goto fail;
	}
	if (o->time_filter ? !model_has_samples(&r->m) : !r->m.nsamples) {
		report_explain_empty(r);
		rc = -ENODATA;
		goto fail;
	}
	if (o->time_filter) {
		int64_t from, to;

		rc = report_parse_time_filter(o->time_filter, &from, &to);
		if (!rc &&
		    (rc = model_load_time_range(&r->m, from, to, r->skipped, err, sizeof(err))))
			log_error("%s", err);
		if (rc)
			goto fail;
	}
	rc = cct_build(&r->tree, &r->m, flags);
	if (rc) {
		log_error("cannot build the call tree of '%s': %s", dir, strerror(-rc));
		goto fail;
	}
	rc = report_filter_samples(r);
	if (!rc)
		rc = pick_metrics(r);
	if (!rc && (view->flags & (VIEW_TREE | VIEW_RECURSION)) && (rc = derive_tree(r)) == -ENOMEM)
		log_error("cannot group the call tree of '%s': %s", dir, strerror(ENOMEM));
	else if (rc == -ENOMEM)
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
	free(r->total);
	free(r->count);
	free(r->min);
	free(r->skipped);
	free(r->fnames);
	r->recs = NULL;
	r->total = r->count = r->min = NULL;
	r->skipped = NULL;
	r->fnames = NULL;
}

/* The options that only some views take are refused by the others, never ignored. */
static int check_view_options(const struct report_opts *o, const struct report_view *v)
{
	if (o->group_by && !(v->flags & (VIEW_TREE | VIEW_FLAT_GROUPS)))
		return report_usage_error("the %s view takes no -group-by (the hotspots, top-down, "
					  "bottom-up and callstacks views do)",
					  v->name);
	if (o->function && !(v->flags & VIEW_FUNCTION))
		return report_usage_error("the %s view takes no -function (the hotspots and "
					  "caller-callee views do; the source view takes "
					  "-source-object function=NAME)",
					  v->name);
	if (o->source_object && !(v->flags & VIEW_SOURCE_OBJECT))
		return report_usage_error("option '-source-object' is for the source view: "
					  "-view source -source-object %s",
					  o->source_object);
	if (o->collapse_recursion && !(v->flags & (VIEW_TREE | VIEW_RECURSION)))
		return report_usage_error("option '-recursion-mode' applies to the top-down, "
					  "bottom-up, callstacks and caller-callee views");
	if (o->time_buckets && !(v->flags & VIEW_TIME))
		return report_usage_error("option '-time-buckets' is for the timeline view: "
					  "-view timeline -time-buckets %d",
					  o->time_buckets);
	return 0;
}

/* The terminal's width, 100 when it does not say. */
static int terminal_width(FILE *f)
{
	struct winsize ws;

	if (!ioctl(fileno(f), TIOCGWINSZ, &ws) && ws.ws_col >= 20)
		return ws.ws_col;
	return 100;
}

static int render(const struct report_opts *o, struct report *r, const struct table *t, FILE *f)
{
	/* Nothing is cut on the way to a file or a pipe; a terminal gets its width. */
	int width = o->width ? o->width : isatty(fileno(f)) ? terminal_width(f) : 0;

	if (o->format == REPORT_CSV)
		return table_render_csv(t, f, o->csv_delimiter);
	if (o->format == REPORT_JSON)
		return table_render_json(t, f, r->view->name);
	if (r->view->text)
		return r->view->text(r, t, f, width);
	return table_render_text(t, f, width);
}

/* Notes every view shares: metrics a time filter could not show. */
static void common_notes(struct report *r, struct table *t)
{
	size_t k;

	for (k = 0; k < r->m.nmetrics; k++)
		if (r->skipped[k])
			table_add_note(t,
				       "metric '%s' is not shown: it aggregates as a peak, which "
				       "-time-filter cannot compute",
				       r->m.metrics[k].name);
}

/* -report-output must not name a file of a result it reads (item 10 of issue 10). */
static int check_output(const struct report_opts *o)
{
	char why[128];
	size_t i;
	int ret;

	for (i = 0; o->output && i < o->nresults; i++) {
		ret = result_dir_owns(o->results[i], o->output, why, sizeof(why));
		if (ret == 1)
			return report_usage_error("will not write the report to '%s': it would "
						  "overwrite %s of result '%s'; give "
						  "-report-output a new file (one beside them in "
						  "the result directory will do)",
						  o->output, why, o->results[i]);
		if (ret < 0)
			return report_usage_error("cannot write report '%s': %s", o->output,
						  strerror(-ret));
	}
	return 0;
}

int report_run(const struct report_opts *o)
{
	const char *name = o->view ? o->view : "summary";
	const struct report_view *v;
	struct report r[2];
	struct table t;
	FILE *f = stdout;
	size_t i;
	int rc = 0;

	if (o->format == REPORT_EXPORT)
		return report_export(o);
	if (!(v = report_view_find(name))) {
		size_t n = 0;
		const char *near;

		while (report_views[n])
			n++;
		near = options_nearest(name, report_views, n);

		return report_usage_error("unknown view '%s'%s%s%s", name,
					  near ? " (did you mean '" : "", near ? near : "",
					  near ? "'?)" : "");
	}
	if (o->nresults < 1 || o->nresults > 2)
		return report_usage_error(o->nresults ? "give at most two results (-r A -r B)"
						      : "no result given: use -r DIR");
	if (o->nresults == 2 && !v->diff)
		return report_usage_error(
			"the difference of two results is shown by the hotspots, "
			"top-down, bottom-up and caller-callee views, not by '%s'",
			v->name);
	if ((rc = check_view_options(o, v)) || (rc = check_output(o)))
		return rc;
	for (i = 0; i < o->nresults; i++) {
		rc = report_open(&r[i], o, o->results[i], v);
		if (rc) {
			while (i--)
				report_close(&r[i]);
			return rc;
		}
	}
	table_init(&t);
	rc = o->nresults == 2 ? v->diff(&r[0], &r[1], &t) : v->run(&r[0], &t);
	if (!rc)
		common_notes(&r[0], &t);
	if (!rc && t.failed)
		rc = -ENOMEM;
	/* Usage errors were told where found; out of memory is told here (docs/errors.md). */
	if (rc && rc != -ERR_USAGE)
		log_error("cannot build the %s view: %s", name, strerror(-rc));
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
