/* SPDX-License-Identifier: MIT */
/* The timeline view of a memory-consumption result: each process's live heap and resident set
   per time bucket, from table counters. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "report/counters.h"
#include "report/report-private.h"

/*
 * A counter is a step function: each point holds until the next. A bucket shows the highest
 * value the counter had in it: the one carried in from before its start, or any point inside.
 */
static int64_t highest(const struct counter_series *s, int64_t a, int64_t b)
{
	size_t lo = 0, hi = s->n;
	int64_t v;

	while (lo < hi) { /* the first point at or after a */
		size_t mid = lo + (hi - lo) / 2;

		if (s->pt[mid].t < a)
			lo = mid + 1;
		else
			hi = mid;
	}
	v = lo ? s->pt[lo - 1].v : -1; /* carried in; -1: none yet */
	for (; lo < s->n && s->pt[lo].t < b; lo++)
		if (s->pt[lo].v > v)
			v = s->pt[lo].v;
	return v;
}

static void fill(struct table *t, const struct counter_series *s, size_t ns, int64_t from,
		 int64_t to, size_t nb)
{
	int start = table_add_col(t, "Start", TABLE_TIME, 0);
	int end = table_add_col(t, "End", TABLE_TIME, 0);
	int name = table_add_col(t, "Process", TABLE_TEXT, TABLE_SHRINK);
	int pid = table_add_col(t, "PID", TABLE_INT, 0);
	int heap = table_add_col(t, "Live Heap", TABLE_BYTES, 0);
	int rss = table_add_col(t, "RSS", TABLE_BYTES, 0);
	int64_t len = (to - from) / (int64_t)nb;
	size_t i, j, b;

	for (i = 0; i < ns; i = j) {
		const struct counter_series *h = NULL, *m = NULL;

		/* a process's series are adjacent */
		for (j = i; j < ns && counters_same_process(&s[j], &s[i]); j++)
			if (!strcmp(s[j].name, "Live Heap"))
				h = &s[j];
			else if (!strcmp(s[j].name, "RSS"))
				m = &s[j];
		for (b = 0; b < nb; b++) {
			int64_t a = from + (int64_t)b * len, e = b + 1 == nb ? to : a + len;
			int64_t hv = h ? highest(h, a, e) : -1, mv = m ? highest(m, a, e) : -1;
			size_t row;

			if (hv < 0 && mv < 0)
				continue; /* before the process's first point */
			row = table_add_row(t, 0);
			table_set_int(t, row, start, a);
			table_set_int(t, row, end, e);
			table_set_text(t, row, name, s[i].label);
			table_set_int(t, row, pid, s[i].pid);
			if (hv >= 0)
				table_set_int(t, row, heap, hv);
			if (mv >= 0)
				table_set_int(t, row, rss, mv);
		}
	}
}

int view_timeline_memory(struct report *r, struct table *t)
{
	struct counter_series *s = NULL;
	int64_t from = 0, to = INT64_MAX, last = 0;
	size_t ns = 0, nb, i;
	int rc;

	if (r->o->time_filter && (rc = report_parse_time_filter(r->o->time_filter, &from, &to)))
		return rc;
	if ((rc = counters_load(r, from, to, &s, &ns)))
		return rc;
	if (!ns) {
		table_add_col(t, "Start", TABLE_TIME, 0);
		table_add_note(t, "no live heap or RSS was recorded in this time range");
		return 0;
	}
	for (i = 0; i < ns; i++)
		if (s[i].n && s[i].pt[s[i].n - 1].t >= last)
			last = s[i].pt[s[i].n - 1].t + 1;
	if (to == INT64_MAX) {
		to = model_meta_int(&r->m, "elapsed_ns", 0);
		if (to < last)
			to = last;
	}
	if (to <= from)
		to = from + 1;
	nb = (size_t)(r->o->time_buckets > 0 ? r->o->time_buckets : REPORT_TIME_BUCKETS);
	if ((int64_t)nb > to - from)
		nb = (size_t)(to - from);
	fill(t, s, ns, from, to, nb);
	if (r->o->nfilters)
		table_add_note(
			t, "-filter does not apply to memory over time: every process is shown");
	table_add_note(t, "Live Heap and RSS: the highest value in each bucket");
	counters_release(s, ns);
	return 0;
}
