/* SPDX-License-Identifier: MIT */
/* Which metrics a report shows, sorts by and judges by: -metric, -sort-desc, -threshold. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/options.h"
#include "report/report-private.h"

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

int report_pick_metrics(struct report *r)
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
	/* The default sort: the first metric -metric names (the user's order says which comes
	   first), else the main metric when shown, else the first shown. */
	r->sort_metric = r->shown[0];
	for (i = 0; !o->nmetrics && i < r->nshown; i++)
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
