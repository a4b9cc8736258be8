/* SPDX-License-Identifier: MIT */
/* The HTML report's memory over time: each process's Live Heap and RSS (table counters). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "report/export-html.h"

/*
 * memory-consumption writes a point of the live heap and the resident set every sampling
 * interval while the program allocates, and one at the moment of each new peak. The page
 * draws each process's two series; a long run's are thinned to HTML_MEMORY_POINTS a series,
 * each slice of time keeping its highest point, so the peak is always among those drawn.
 */

void html_memory_release(struct html *h)
{
	counters_release(h->mem, h->nmem);
	h->mem = NULL;
	h->nmem = 0;
}

/* Thin a series to max points: per slice of [lo, hi], its highest point (the first of equals). */
static void thin(struct counter_series *s, int64_t lo, int64_t hi, size_t max)
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

int html_memory(struct html *h)
{
	struct report *r = &h->r[0];
	size_t i, procs = 0;
	int64_t from, to;
	int rc;

	export_window(r, &from, &to);
	if ((rc = counters_load(r, from, to, &h->mem, &h->nmem)) || !h->nmem)
		return rc;
	h->mem_lo = INT64_MAX;
	h->mem_hi = INT64_MIN;
	for (i = 0; i < h->nmem; i++) {
		if (h->mem[i].n && h->mem[i].pt[0].t < h->mem_lo)
			h->mem_lo = h->mem[i].pt[0].t;
		if (h->mem[i].n && h->mem[i].pt[h->mem[i].n - 1].t > h->mem_hi)
			h->mem_hi = h->mem[i].pt[h->mem[i].n - 1].t;
	}
	/* From the collection's start (or the window's) to the last point. */
	if (h->mem_lo > from)
		h->mem_lo = from;
	/* The heaviest processes are drawn; the rest are counted. */
	for (i = 0; i < h->nmem; i++) {
		if (i && !counters_same_process(&h->mem[i], &h->mem[i - 1]))
			procs++;
		if (procs >= HTML_MEMORY_PROCESSES)
			break;
		thin(&h->mem[i], h->mem_lo, h->mem_hi, HTML_MEMORY_POINTS);
	}
	h->mem_shown = i;
	h->mem_more = 0;
	for (; i < h->nmem; i++)
		h->mem_more += !counters_same_process(&h->mem[i], &h->mem[i - 1]);
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
		const struct counter_series *s = &h->mem[i];

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
