/* SPDX-License-Identifier: MIT */
/* Values over time per process, read from table counters of each database of a result. */
#include <errno.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cmp.h"
#include "common/grow.h"
#include "report/counters.h"
#include "report/report-private.h"

void counters_release(struct counter_series *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(s[i].label);
		free(s[i].name);
		free(s[i].pt);
	}
	free(s);
}

static char *label_of(sqlite3_stmt *st, bool job)
{
	const char *exe = (const char *)sqlite3_column_text(st, 5);
	const char *host = (const char *)sqlite3_column_text(st, 6);
	const char *base = exe && *exe ? report_basename(exe) : "[process]";
	int64_t rank = sqlite3_column_type(st, 7) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, 7);
	char buf[512];
	int n;

	n = snprintf(buf, sizeof(buf), "%s (PID %lld", base,
		     (long long)sqlite3_column_int64(st, 4));
	if (n > 0 && (size_t)n < sizeof(buf) && rank >= 0)
		n += snprintf(buf + n, sizeof(buf) - (size_t)n, ", rank %lld", (long long)rank);
	if (n > 0 && (size_t)n < sizeof(buf) && job && host && *host)
		snprintf(buf + n, sizeof(buf) - (size_t)n, ", %s", host);
	n = (int)strlen(buf);
	snprintf(buf + n, sizeof(buf) - (size_t)n, ")");
	return strdup(buf);
}

struct loaded {
	struct counter_series *s;
	size_t n, cap;
};

/* Read one database's counters, times moved by offset_ns. */
static int load_part(struct loaded *l, int part, sqlite3 *db, int64_t offset_ns, int64_t from,
		     int64_t to, bool job)
{
	struct counter_series *cur = NULL;
	sqlite3_stmt *st;
	int rc = 0;

	/* A result of another analysis, or older than the table: nothing. */
	if (sqlite3_prepare_v2(
		    db,
		    "SELECT c.process_id, c.name, c.time_ns, c.value, p.pid, p.exe, p.host,"
		    " p.rank FROM counters c LEFT JOIN processes p ON p.id = c.process_id"
		    " ORDER BY c.process_id, c.name, c.time_ns",
		    -1, &st, NULL) != SQLITE_OK)
		return 0;
	while (!rc && sqlite3_step(st) == SQLITE_ROW) {
		int64_t proc = sqlite3_column_int64(st, 0);
		const char *name = (const char *)sqlite3_column_text(st, 1);
		int64_t t = sqlite3_column_int64(st, 2) + offset_ns,
			v = sqlite3_column_int64(st, 3);

		if (!name || t >= to)
			continue;
		/* a point before the window: its value holds at the window's start */
		if (t < from)
			t = from;
		if (!cur || cur->part != part || cur->proc != proc || strcmp(cur->name, name)) {
			if (GROW(l->s, l->n + 1, l->cap)) {
				rc = -ENOMEM;
				break;
			}
			cur = &l->s[l->n++];
			*cur = (struct counter_series){ .part = part,
							.proc = proc,
							.pid = sqlite3_column_int64(st, 4) };
			cur->label = label_of(st, job);
			cur->name = strdup(name);
			if (!cur->label || !cur->name) {
				rc = -ENOMEM;
				break;
			}
		}
		if (cur->n && cur->pt[cur->n - 1].t == t) {
			cur->pt[cur->n - 1].v = v; /* the later of two at one time */
			continue;
		}
		if (GROW(cur->pt, cur->n + 1, cur->cap)) {
			rc = -ENOMEM;
			break;
		}
		cur->pt[cur->n++] = (struct counter_point){ t, v };
	}
	sqlite3_finalize(st);
	return rc;
}

static int cmp_series(const void *pa, const void *pb)
{
	const struct counter_series *a = pa, *b = pb;

	int c = CMP_THEN(CMP(b->peak, a->peak),
			 CMP_THEN(CMP(a->part, b->part), CMP(a->proc, b->proc)));

	return c ? c : strcmp(a->name, b->name);
}

int counters_load(struct report *r, int64_t from, int64_t to, struct counter_series **out,
		  size_t *n)
{
	struct loaded l = { 0 };
	size_t parts = model_ndbs(&r->m), i, k, j;
	int rc = 0;

	*out = NULL;
	*n = 0;
	for (i = 0; i < parts && !rc; i++)
		rc = load_part(&l, (int)i, model_db(&r->m, i), model_db_offset_ns(&r->m, i), from,
			       to, parts > 1);
	if (rc || !l.n) {
		counters_release(l.s, l.n);
		return rc;
	}
	/* a process's peak: the largest point of its Live Heap; its series are adjacent */
	for (i = 0; i < l.n; i = j) {
		int64_t peak = 0;

		for (j = i; j < l.n && counters_same_process(&l.s[j], &l.s[i]); j++)
			if (!strcmp(l.s[j].name, "Live Heap"))
				for (k = 0; k < l.s[j].n; k++)
					if (l.s[j].pt[k].v > peak)
						peak = l.s[j].pt[k].v;
		for (k = i; k < j; k++)
			l.s[k].peak = peak;
	}
	qsort(l.s, l.n, sizeof(*l.s), cmp_series);
	*out = l.s;
	*n = l.n;
	return 0;
}
