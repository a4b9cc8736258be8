/* SPDX-License-Identifier: MIT */
/* Regions the program named (REGION_BEGIN/END records): each sample's and event's region path. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "finalizer/finalize-private.h"
#include "finalizer/sorted.h"
#include "finalizer/str-pool.h"

/*
 * A thread writes its regions into its own stream (docs/raw-format.md), so the records and
 * the thread's samples and waits are in one order of time. The marks become spans: from each
 * mark's time on, the thread is in the path of the regions open then ("solve/assemble", NULL
 * for none). A sample's or an event's region is the span its time falls in; with the rest of
 * its context (a wait's kind and object) it is interned as a context (events.c). A BEGIN at
 * depth d replaces the levels from d on, an END at d closes d and deeper, so a mark lost to
 * damage costs only until the next one.
 */

int region_take(struct stream *s, const struct raw_record *rec)
{
	struct region_mark *m;

	if (GROW(s->marks, s->nmarks + 1, s->marks_cap))
		return -ENOMEM;
	m = &s->marks[s->nmarks];
	m->time_ns = rec->time_ns;
	m->depth = rec->u.region.depth;
	m->name = NULL;
	if (rec->type == RAW_REC_REGION_BEGIN) {
		m->name = str_dup_mem(rec->u.region.name.s, rec->u.region.name.len);
		if (!m->name)
			return -ENOMEM;
	}
	s->nmarks++;
	return 0;
}

/* The path of the open levels, interned; NULL for none. */
static int path_of(struct fin *f, char *const *open, uint32_t depth, const char **out)
{
	size_t len = 0, at = 0;
	uint32_t d;
	char *buf;

	*out = NULL;
	if (!depth)
		return 0;
	for (d = 0; d < depth; d++)
		len += strlen(open[d] ? open[d] : "[unknown]") + 1;
	buf = malloc(len);
	if (!buf)
		return -ENOMEM;
	for (d = 0; d < depth; d++) {
		const char *n = open[d] ? open[d] : "[unknown]";

		if (d)
			buf[at++] = '/';
		memcpy(buf + at, n, strlen(n));
		at += strlen(n);
	}
	buf[at] = '\0';
	*out = str_pool_get(&f->strings, buf);
	free(buf);
	return *out ? 0 : -ENOMEM;
}

/* s->spans from s->marks. */
static int build_spans(struct fin *f, struct stream *s)
{
	char *open[RAW_MAX_REGION_DEPTH] = { NULL };
	uint32_t depth = 0;
	int64_t last = INT64_MIN;
	size_t i;
	int ret;

	for (i = 0; i < s->nmarks; i++) {
		const struct region_mark *m = &s->marks[i];
		uint32_t d = m->depth < RAW_MAX_REGION_DEPTH ? m->depth : RAW_MAX_REGION_DEPTH;
		struct region_span *sp;

		if (m->name) {
			/* Levels skipped over (their BEGIN lost) are unknown. */
			while (depth + 1 < d)
				open[depth++] = NULL;
			open[d - 1] = m->name;
			depth = d;
		} else {
			depth = d - 1 < depth ? d - 1 : depth;
		}
		if (GROW(s->spans, s->nspans + 1, s->spans_cap))
			return -ENOMEM;
		sp = &s->spans[s->nspans++];
		/* Times never go back: a damaged one is taken as its predecessor's. */
		sp->time_ns = m->time_ns > last ? m->time_ns : last;
		last = sp->time_ns;
		ret = path_of(f, open, depth, &sp->path);
		if (ret)
			return ret;
	}
	return 0;
}

const char *region_at(const struct stream *s, int64_t time_ns)
{
	/* The last span that began at or before time_ns. */
	size_t k = sorted_upper_i64(s->spans, s->nspans, sizeof(*s->spans),
				    offsetof(struct region_span, time_ns), time_ns);

	return k ? s->spans[k - 1].path : NULL;
}

int regions_to_events(struct fin *f, struct stream *s)
{
	size_t i;
	int ret;

	if (!s->nmarks)
		return 0;
	ret = build_spans(f, s);
	if (ret)
		return ret;
	f->region_streams++;
	/* A CPU sample in a region has a context of its own; outside one, none. */
	for (i = 0; i < s->nsamples; i++) {
		struct sample_rec *r = &s->samples[i];
		const char *path = region_at(s, r->time_ns);
		int64_t ctx;

		if (!path)
			continue;
		ctx = fin_context_get(f, s->image, 0, 0, r->time_ns + s->offset_ns, path);
		if (ctx < 0)
			return (int)ctx;
		r->context = (uint32_t)ctx;
	}
	return 0;
}

void regions_release(struct stream *s)
{
	size_t i;

	for (i = 0; i < s->nmarks; i++)
		free(s->marks[i].name);
	free(s->marks);
	free(s->spans);
	s->marks = NULL;
	s->spans = NULL;
	s->nmarks = s->marks_cap = s->nspans = s->spans_cap = 0;
}
