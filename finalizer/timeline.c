/* SPDX-License-Identifier: MIT */
/* The timeline: every located sample and timed event of every stream merged into (time,
   thread, metric) order. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/cmp.h"
#include "finalizer/finalize-private.h"

/*
 * One stream's samples, or its timed events, in time order: the stream itself (nearly
 * always), or a sorted copy of the order of its records.
 */
struct run {
	const struct stream *s;
	uint32_t stream;
	bool events;           /* s->events, else s->samples */
	const uint32_t *order; /* NULL: the stream order is the time order */
	size_t pos, n;         /* next position in order (or in the records) */
	int64_t time_ns;       /* of the record at pos, collection time */
	uint32_t metric;       /* of the record at pos */
};

struct order_key {
	int64_t time_ns;
	uint32_t idx;
};

static int order_key_cmp(const void *a, const void *b)
{
	const struct order_key *x = a, *y = b;

	return CMP_THEN(CMP(x->time_ns, y->time_ns), CMP(x->idx, y->idx)); /* stable */
}

static size_t run_index(const struct run *r)
{
	return r->order ? r->order[r->pos] : r->pos;
}

/* Record i of the run's kind: its time, and whether it is a timeline row. */
static bool run_record(const struct run *r, size_t i, int64_t *time_ns)
{
	if (r->events) {
		const struct event_rec *e = &r->s->events[i];

		*time_ns = e->time_ns;
		return e->timed && e->stack != NO_STACK;
	}
	*time_ns = r->s->samples[i].time_ns;
	return r->s->samples[i].stack != NO_STACK;
}

/* Move to the next row (at pos or after). False at the end. */
static bool run_settle(struct run *r)
{
	int64_t t;

	while (r->pos < r->n && !run_record(r, run_index(r), &t))
		r->pos++;
	if (r->pos >= r->n)
		return false;
	r->time_ns = t + r->s->offset_ns;
	r->metric = r->events ? r->s->events[run_index(r)].metric : 0;
	return true;
}

/* In the table's key order: time, thread, metric. */
static bool run_less(const struct run *x, const struct run *y)
{
	if (x->time_ns != y->time_ns)
		return x->time_ns < y->time_ns;
	if (x->s->thread != y->s->thread)
		return x->s->thread < y->s->thread;
	return x->metric < y->metric;
}

/* A min-heap of runs keyed by their next row. */
static void heap_down(struct run *h, size_t n, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, m = i;
		struct run t;

		if (l < n && run_less(&h[l], &h[m]))
			m = l;
		if (l + 1 < n && run_less(&h[l + 1], &h[m]))
			m = l + 1;
		if (m == i)
			return;
		t = h[i];
		h[i] = h[m];
		h[m] = t;
		i = m;
	}
}

/* The rows of r's records in time order, when the stream has them otherwise. NULL: -ENOMEM. */
static uint32_t *run_order(const struct run *r, size_t total, size_t *n)
{
	struct order_key *keys = malloc((total ? total : 1) * sizeof(*keys));
	uint32_t *order = malloc((total ? total : 1) * sizeof(*order));
	size_t i, k = 0;
	int64_t t;

	if (!keys || !order) {
		free(keys);
		free(order);
		return NULL;
	}
	for (i = 0; i < total; i++)
		if (run_record(r, i, &t))
			keys[k++] = (struct order_key){ t, (uint32_t)i };
	qsort(keys, k, sizeof(*keys), order_key_cmp);
	for (i = 0; i < k; i++)
		order[i] = keys[i].idx;
	free(keys);
	*n = k;
	return order;
}

/* Start run r over its records: how many rows, and an order when they are not sorted. */
static int run_start(struct run *r, size_t *rows)
{
	int64_t prev = INT64_MIN, t;
	bool sorted = true;
	size_t j, total = r->n;

	for (j = 0; j < total; j++) {
		if (!run_record(r, j, &t))
			continue;
		(*rows)++;
		if (t < prev)
			sorted = false;
		prev = t;
	}
	if (!sorted) {
		r->order = run_order(r, total, &r->n);
		if (!r->order)
			return -ENOMEM;
	}
	return 0;
}

/* The value of a row: a CPU sample's is weight x interval, an event's its own. */
static int64_t row_value(const struct fin *f, const struct run *r, size_t i)
{
	const struct stream *s = r->s;

	if (r->events)
		return s->events[i].value;
	return (int64_t)(s->samples[i].weight *
			 (s->hdr.interval_ns ? s->hdr.interval_ns : f->interval_ns));
}

int fin_build_timeline(struct fin *f)
{
	struct timeline_row *out = NULL;
	struct run *heap;
	const uint32_t **orders;
	int64_t *last = NULL;
	size_t total = 0, i, k, nruns = 0, nm = 1;
	int ret = -ENOMEM;

	/* The metrics of the events are known (fin_build_events): one last time per metric. */
	for (i = 0; i < f->nstreams; i++)
		for (k = 0; k < f->streams[i].nevents; k++)
			if (f->streams[i].events[k].metric + (size_t)1 > nm)
				nm = f->streams[i].events[k].metric + (size_t)1;
	heap = calloc(2 * (f->nstreams ? f->nstreams : 1), sizeof(*heap));
	orders = calloc(2 * (f->nstreams ? f->nstreams : 1), sizeof(*orders));
	last = malloc((f->nthreads ? f->nthreads : 1) * nm * sizeof(*last));
	if (!heap || !orders || !last)
		goto out;
	for (i = 0; i < 2 * f->nstreams; i++) {
		const struct stream *s = &f->streams[i / 2];
		struct run r = { .s = s, .stream = (uint32_t)(i / 2), .events = i % 2 };

		if (!s->has_header)
			continue;
		r.n = r.events ? s->nevents : s->nsamples;
		if (run_start(&r, &total))
			goto out;
		orders[i] = r.order;
		if (run_settle(&r))
			heap[nruns++] = r;
	}
	out = malloc((total ? total : 1) * sizeof(*out));
	if (!out)
		goto out;
	for (i = nruns / 2; i-- > 0;)
		heap_down(heap, nruns, i);
	for (k = 0; nruns; k++) {
		struct run *r = &heap[0];
		size_t idx = run_index(r);

		out[k] = (struct timeline_row){
			.time_ns = r->time_ns,
			.value = row_value(f, r, idx),
			.thread = r->s->thread,
			.stream = r->stream,
			.stack = (uint32_t)(r->events ? r->s->events[idx].stack
						      : r->s->samples[idx].stack),
			.metric = r->metric,
			.context =
				r->events ? r->s->events[idx].context : r->s->samples[idx].context,
		};
		r->pos++;
		if (!run_settle(r))
			heap[0] = heap[--nruns];
		heap_down(heap, nruns, 0);
	}
	/*
	 * (time_ns, thread_id, metric_id) is the table's key: a thread cannot be sampled twice
	 * in the same nanosecond, nor begin two waits, but a damaged or hand-made stream may
	 * say so. Such a row moves 1 ns after the thread's previous one of its metric, so no
	 * row is lost.
	 */
	for (i = 0; i < f->nthreads * nm; i++)
		last[i] = INT64_MIN;
	for (i = 0; i < k; i++) {
		struct timeline_row *r = &out[i];
		int64_t *l = &last[(size_t)r->thread * nm + r->metric];

		if (*l != INT64_MIN && r->time_ns <= *l)
			r->time_ns = *l + 1;
		*l = r->time_ns;
	}
	f->timeline = out;
	f->ntimeline = k;
	out = NULL;
	ret = 0;
out:
	free(out);
	for (i = 0; orders && i < 2 * f->nstreams; i++)
		free((void *)orders[i]);
	free(orders);
	free(heap);
	free(last);
	return ret;
}
