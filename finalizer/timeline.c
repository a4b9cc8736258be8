/* SPDX-License-Identifier: MIT */
/* The timeline: every located sample of every stream merged into (time, thread) order. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "finalizer/finalize-private.h"

/* One stream's samples in time order: the stream itself (nearly always), or a sorted copy
   of the order of its samples. */
struct run {
	const struct stream *s;
	uint32_t stream;
	const uint32_t *order; /* NULL: the stream order is the time order */
	size_t pos, n;	       /* next position in order (or in s->samples) */
	int64_t time_ns;       /* of the sample at pos, collection time */
};

struct order_key {
	int64_t time_ns;
	uint32_t idx;
};

static int order_key_cmp(const void *a, const void *b)
{
	const struct order_key *x = a, *y = b;

	if (x->time_ns != y->time_ns)
		return x->time_ns < y->time_ns ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx; /* stable */
}

static size_t run_index(const struct run *r)
{
	return r->order ? r->order[r->pos] : r->pos;
}

/* Move to the next sample with a stack (at pos or after). False at the end. */
static bool run_settle(struct run *r)
{
	while (r->pos < r->n && r->s->samples[run_index(r)].stack == NO_STACK)
		r->pos++;
	if (r->pos >= r->n)
		return false;
	r->time_ns = r->s->samples[run_index(r)].time_ns + r->s->offset_ns;
	return true;
}

static bool run_less(const struct run *x, const struct run *y)
{
	return x->time_ns < y->time_ns ||
	       (x->time_ns == y->time_ns && x->s->thread < y->s->thread);
}

/* A min-heap of runs keyed by their next sample. */
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

/* The samples of s with a stack, in time order when the stream is not. NULL: -ENOMEM. */
static uint32_t *stream_order(const struct stream *s, size_t *n)
{
	struct order_key *keys = malloc((s->nsamples ? s->nsamples : 1) * sizeof(*keys));
	uint32_t *order = malloc((s->nsamples ? s->nsamples : 1) * sizeof(*order));
	size_t i, k = 0;

	if (!keys || !order) {
		free(keys);
		free(order);
		return NULL;
	}
	for (i = 0; i < s->nsamples; i++)
		if (s->samples[i].stack != NO_STACK)
			keys[k++] = (struct order_key){ s->samples[i].time_ns, (uint32_t)i };
	qsort(keys, k, sizeof(*keys), order_key_cmp);
	for (i = 0; i < k; i++)
		order[i] = keys[i].idx;
	free(keys);
	*n = k;
	return order;
}

int fin_build_timeline(struct fin *f)
{
	struct timeline_row *out = NULL;
	struct run *heap;
	uint32_t **orders;
	int64_t *last = NULL;
	size_t total = 0, i, j, k, nruns = 0;
	int ret = -ENOMEM;

	heap = calloc(f->nstreams ? f->nstreams : 1, sizeof(*heap));
	orders = calloc(f->nstreams ? f->nstreams : 1, sizeof(*orders));
	last = malloc((f->nthreads ? f->nthreads : 1) * sizeof(*last));
	if (!heap || !orders || !last)
		goto out;
	for (i = 0; i < f->nstreams; i++) {
		const struct stream *s = &f->streams[i];
		struct run r = { .s = s, .stream = (uint32_t)i, .n = s->nsamples };
		int64_t prev = INT64_MIN;
		bool sorted = true;

		if (!s->has_header)
			continue;
		for (j = 0; j < s->nsamples; j++) {
			if (s->samples[j].stack == NO_STACK)
				continue; /* its stack was never defined */
			total++;
			if (s->samples[j].time_ns < prev)
				sorted = false;
			prev = s->samples[j].time_ns;
		}
		if (!sorted) {
			r.order = orders[i] = stream_order(s, &r.n);
			if (!r.order)
				goto out;
		}
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
		const struct sample_rec *sr = &r->s->samples[run_index(r)];

		out[k] = (struct timeline_row){
			.time_ns = r->time_ns,
			.weight = sr->weight,
			.thread = r->s->thread,
			.stream = r->stream,
			.stack = (uint32_t)sr->stack,
		};
		r->pos++;
		if (!run_settle(r))
			heap[0] = heap[--nruns];
		heap_down(heap, nruns, 0);
	}
	/*
	 * (time_ns, thread_id) is the table's key: a thread cannot be sampled twice in the same
	 * nanosecond, but a damaged or hand-made stream may say so. Such a sample moves 1 ns
	 * after the thread's previous one, so no sample is lost.
	 */
	for (i = 0; i < f->nthreads; i++)
		last[i] = INT64_MIN;
	for (i = 0; i < k; i++) {
		struct timeline_row *r = &out[i];

		if (last[r->thread] != INT64_MIN && r->time_ns <= last[r->thread])
			r->time_ns = last[r->thread] + 1;
		last[r->thread] = r->time_ns;
	}
	f->timeline = out;
	f->ntimeline = k;
	out = NULL;
	ret = 0;
out:
	free(out);
	for (i = 0; orders && i < f->nstreams; i++)
		free(orders[i]);
	free(orders);
	free(heap);
	free(last);
	return ret;
}
