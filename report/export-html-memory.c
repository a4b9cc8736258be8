/* SPDX-License-Identifier: MIT */
/* The HTML report's memory over time: each process's Live Heap and RSS (table counters). */
#include <errno.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
#include "common/log.h"
#include "report/export-html.h"

/*
 * memory-consumption writes a point of the live heap and the resident set every sampling
 * interval while the program allocates, and one at the moment of each new peak. The page
 * draws each process's two series; a long run's are thinned to HTML_MEMORY_POINTS a series,
 * each slice of time keeping its highest point, so the peak is always among those drawn.
 */

void html_memory_release(struct html *h)
{
	size_t i;

	for (i = 0; i < h->nmem; i++) {
		free(h->mem[i].label);
		free(h->mem[i].name);
		free(h->mem[i].pt);
	}
	free(h->mem);
	h->mem = NULL;
	h->nmem = h->memcap = 0;
}

static char *label_of(sqlite3_stmt *st, bool job)
{
	const char *exe = (const char *)sqlite3_column_text(st, 5);
	const char *host = (const char *)sqlite3_column_text(st, 6);
	const char *base = exe ? strrchr(exe, '/') : NULL;
	int64_t rank = sqlite3_column_type(st, 7) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, 7);
	char buf[512];
	int n;

	base = base ? base + 1 : exe && *exe ? exe : "[process]";
	n = snprintf(buf, sizeof(buf), "%s (PID %lld", base,
		     (long long)sqlite3_column_int64(st, 4));
	if (rank >= 0)
		n += snprintf(buf + n, sizeof(buf) - (size_t)n, ", rank %lld", (long long)rank);
	if (job && host && *host)
		snprintf(buf + n, sizeof(buf) - (size_t)n, ", %s", host);
	strncat(buf, ")", sizeof(buf) - strlen(buf) - 1);
	return strdup(buf);
}

/* Read one database's counters into h's series, times moved by offset_ns. */
static int load_part(struct html *h, int part, sqlite3 *db, int64_t offset_ns, int64_t from,
		     int64_t to, bool job)
{
	sqlite3_stmt *st;
	struct html_series *cur = NULL;
	int rc = 0;

	/* A result of another analysis, or older than the table: no memory to draw. */
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

		if (!name || t < from || t >= to)
			continue;
		if (!cur || cur->proc != proc || strcmp(cur->name, name)) {
			if (GROW(h->mem, h->nmem + 1, h->memcap)) {
				rc = -ENOMEM;
				break;
			}
			cur = &h->mem[h->nmem++];
			*cur = (struct html_series){ .part = part, .proc = proc };
			cur->label = label_of(st, job);
			cur->name = strdup(name);
			if (!cur->label || !cur->name) {
				rc = -ENOMEM;
				break;
			}
		}
		if (GROW(cur->pt, cur->n + 1, cur->cap)) {
			rc = -ENOMEM;
			break;
		}
		cur->pt[cur->n++] = (struct html_point){ t, v };
	}
	sqlite3_finalize(st);
	return rc;
}

/* Thin a series to max points: per slice of [lo, hi], its highest point (the first of equals). */
static void thin(struct html_series *s, int64_t lo, int64_t hi, size_t max)
{
	double span = (double)(hi - lo) + 1.0;
	size_t i, out = 0, slice, last = SIZE_MAX;

	if (s->n <= max)
		return;
	for (i = 0; i < s->n; i++) {
		slice = (size_t)((double)(s->pt[i].t - lo) / span * (double)max);
		if (out && slice == last) {
			if (s->pt[i].v > s->pt[out - 1].v)
				s->pt[out - 1] = s->pt[i];
			continue;
		}
		s->pt[out++] = s->pt[i];
		last = slice;
	}
	s->n = out;
}

/* A process's heaviest series' peak: the order in which processes are drawn. */
static int64_t process_peak(const struct html *h, const struct html_series *s)
{
	int64_t peak = 0;
	size_t i, k;

	for (i = 0; i < h->nmem; i++)
		if (h->mem[i].part == s->part && h->mem[i].proc == s->proc &&
		    !strcmp(h->mem[i].name, "Live Heap"))
			for (k = 0; k < h->mem[i].n; k++)
				if (h->mem[i].pt[k].v > peak)
					peak = h->mem[i].pt[k].v;
	return peak;
}

static int cmp_series(const void *pa, const void *pb)
{
	const struct html_series *a = pa, *b = pb;

	if (a->peak != b->peak)
		return a->peak > b->peak ? -1 : 1;
	if (a->part != b->part)
		return a->part < b->part ? -1 : 1;
	if (a->proc != b->proc)
		return a->proc < b->proc ? -1 : 1;
	return strcmp(a->name, b->name);
}

int html_memory(struct html *h)
{
	struct report *r = &h->r[0];
	size_t parts = model_ndbs(&r->m), i, procs = 0;
	int64_t from, to;
	int rc = 0;

	export_window(r, &from, &to);
	for (i = 0; i < parts && !rc; i++)
		rc = load_part(h, (int)i, model_db(&r->m, i), model_db_offset_ns(&r->m, i), from,
			       to, parts > 1);
	if (rc || !h->nmem) {
		html_memory_release(h);
		return rc;
	}
	h->mem_lo = INT64_MAX;
	h->mem_hi = INT64_MIN;
	for (i = 0; i < h->nmem; i++) {
		h->mem[i].peak = process_peak(h, &h->mem[i]);
		if (h->mem[i].n && h->mem[i].pt[0].t < h->mem_lo)
			h->mem_lo = h->mem[i].pt[0].t;
		if (h->mem[i].n && h->mem[i].pt[h->mem[i].n - 1].t > h->mem_hi)
			h->mem_hi = h->mem[i].pt[h->mem[i].n - 1].t;
	}
	/* From the collection's start (or the window's) to the last point. */
	if (h->mem_lo > from)
		h->mem_lo = from;
	qsort(h->mem, h->nmem, sizeof(*h->mem), cmp_series);
	/* The heaviest processes are drawn; the rest are counted. */
	for (i = 0; i < h->nmem; i++) {
		if (i &&
		    (h->mem[i].part != h->mem[i - 1].part || h->mem[i].proc != h->mem[i - 1].proc))
			procs++;
		if (procs >= HTML_MEMORY_PROCESSES)
			break;
		thin(&h->mem[i], h->mem_lo, h->mem_hi, HTML_MEMORY_POINTS);
	}
	h->mem_shown = i;
	h->mem_more = 0;
	for (; i < h->nmem; i++)
		h->mem_more += !i || h->mem[i].part != h->mem[i - 1].part ||
			       h->mem[i].proc != h->mem[i - 1].proc;
	return 0;
}

void html_put_memory(struct html *h)
{
	size_t i, k;

	if (!h->mem_shown) {
		outbuf_puts(h->b, "\"memory\": null,\n");
		return;
	}
	outbuf_printf(h->b, "\"memory\": {\"start\": %lld, \"end\": %lld, \"series\": [",
		      (long long)h->mem_lo, (long long)h->mem_hi);
	for (i = 0; i < h->mem_shown; i++) {
		const struct html_series *s = &h->mem[i];

		outbuf_puts(h->b, i ? ",\n{\"process\": " : "\n{\"process\": ");
		html_put_str(h->b, s->label);
		outbuf_puts(h->b, ", \"name\": ");
		html_put_str(h->b, s->name);
		outbuf_puts(h->b, ", \"t\": [");
		for (k = 0; k < s->n; k++) {
			if (k)
				outbuf_putc(h->b, ',');
			outbuf_int(h->b, s->pt[k].t);
		}
		outbuf_puts(h->b, "], \"v\": [");
		for (k = 0; k < s->n; k++) {
			if (k)
				outbuf_putc(h->b, ',');
			outbuf_int(h->b, s->pt[k].v);
		}
		outbuf_puts(h->b, "]}");
		outbuf_spill(h->b);
	}
	outbuf_printf(h->b, "], \"more\": %zu},\n", h->mem_more);
}
