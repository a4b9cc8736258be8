/* SPDX-License-Identifier: MIT */
/* Where a thread's work began (RAW_REC_ORIGIN): its creation, its OpenMP parts, its pool tasks. */
#include <errno.h>

#include "common/grow.h"
#include "finalizer/finalize-private.h"
#include "finalizer/sorted.h"

/*
 * A thread's first ORIGIN of kind RAW_ORIGIN_CREATE names its creator and the creator's stack
 * (threads.parent_*, placed by fin_locate_stacks() and fin_build_tree()). Those of kind
 * RAW_ORIGIN_WORK and RAW_ORIGIN_TASK mark spans of the thread's time spent on work another
 * thread began (an OpenMP region's part, a pool task it submitted; to the next mark; tid 0
 * ends one): each CPU sample in such a span
 * gets a context naming that thread and its stack there (contexts.origin_*), with the rest
 * of its context kept. Marks are in the
 * thread's own stream, in time order with its samples.
 */

int origin_take(struct stream *s, const struct raw_record *rec)
{
	struct work_mark *m;

	if (rec->u.origin.kind == RAW_ORIGIN_CREATE) {
		if (!s->has_origin && rec->u.origin.tid) {
			s->has_origin = true;
			s->origin_tid = rec->u.origin.tid;
			s->origin_time_ns = rec->time_ns;
			s->origin_stack = rec->u.origin.stack_id;
		}
		return 0;
	}
	if (rec->u.origin.kind != RAW_ORIGIN_WORK && rec->u.origin.kind != RAW_ORIGIN_TASK)
		return 0; /* a later kind: not read by this pfinalize */
	if (GROW(s->works, s->nworks + 1, s->works_cap))
		return -ENOMEM;
	m = &s->works[s->nworks++];
	m->time_ns = rec->time_ns;
	m->tid = rec->u.origin.tid;
	m->stack = rec->u.origin.stack_id;
	/* Times never go back: a damaged one is taken as its predecessor's. */
	if (s->nworks > 1 && m->time_ns < m[-1].time_ns)
		m->time_ns = m[-1].time_ns;
	return 0;
}

int works_to_contexts(struct fin *f, struct stream *s)
{
	size_t i, k;

	for (i = 0; i < s->nsamples; i++) {
		struct sample_rec *r = &s->samples[i];
		const struct work_mark *m;
		int64_t ctx;

		/* The last mark at or before the sample. */
		k = sorted_upper_i64(s->works, s->nworks, sizeof(*s->works),
				     offsetof(struct work_mark, time_ns), r->time_ns);
		if (!k || !(m = &s->works[k - 1])->tid)
			continue;
		ctx = fin_context_origin(f, s->image, r->context, m->tid, m->stack,
					 r->time_ns + s->offset_ns);
		if (ctx < 0)
			return (int)ctx;
		r->context = (uint32_t)ctx;
	}
	return 0;
}
