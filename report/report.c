/* SPDX-License-Identifier: MIT */
/* preport's run: pick the view, open the results, build the table, write it. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/options.h"
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

int report_run(const struct report_opts *o)
{
	/* The gate prints the functions' difference unless told another view. */
	const char *name = o->view ? o->view : o->fail_if_slower >= 0 ? "hotspots" : "summary";
	const struct report_view *v;
	struct report r[2];
	struct table t;
	size_t i;
	int rc = 0;

	bool slower = false;

	if (o->format == REPORT_EXPORT && o->fail_if_slower >= 0)
		return report_usage_error("option '-fail-if-slower' prints a view (hotspots by "
					  "default), not an export");
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
	if ((rc = check_view_options(o, v)) || (rc = report_check_output(o)))
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
	/* The gate's verdicts are notes under the table: judged before it is written. */
	if (!rc && o->fail_if_slower >= 0)
		rc = report_gate(&r[0], &r[1], &t, &slower);
	if (!rc)
		rc = report_write(o, &r[0], &t);
	table_release(&t);
	for (i = 0; i < o->nresults; i++)
		report_close(&r[i]);
	/* Slower: exit 1 (EXIT_RUNTIME), as CI systems read a failed step. */
	return rc ? rc : slower ? REPORT_SLOWER : 0;
}
