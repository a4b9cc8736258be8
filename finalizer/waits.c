/* SPDX-License-Identifier: MIT */
/* The decoder of the waits' records (48-63): blocking calls become Wait Time and Wait Count. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/sat.h"
#include "finalizer/finalize-private.h"
#include "finalizer/metrics.h"
#include "finalizer/str-pool.h"

/*
 * Per wait kind (enum raw_wait_kind, common/raw-stream.h): contexts.object_type, and what
 * the object is, which says how it can be named: a variable in the program's data, a place
 * in its code (an OpenMP construct), or a number (fd, pid, pthread_t).
 */
static const struct {
	const char *object_type;
	enum wait_object what;
} kinds[] = {
	[RAW_WAIT_MUTEX] = { "mutex", WAIT_OBJECT_DATA },
	[RAW_WAIT_RWLOCK] = { "rwlock", WAIT_OBJECT_DATA },
	[RAW_WAIT_COND] = { "cond", WAIT_OBJECT_DATA },
	[RAW_WAIT_JOIN] = { "thread", WAIT_OBJECT_NUMBER },
	[RAW_WAIT_BARRIER] = { "barrier", WAIT_OBJECT_DATA },
	[RAW_WAIT_SEMAPHORE] = { "semaphore", WAIT_OBJECT_DATA },
	[RAW_WAIT_SLEEP] = { NULL, WAIT_OBJECT_NONE },
	[RAW_WAIT_POLL] = { "fd", WAIT_OBJECT_NUMBER },
	[RAW_WAIT_READ] = { "fd", WAIT_OBJECT_NUMBER },
	[RAW_WAIT_WRITE] = { "fd", WAIT_OBJECT_NUMBER },
	[RAW_WAIT_ACCEPT] = { "fd", WAIT_OBJECT_NUMBER },
	[RAW_WAIT_CONNECT] = { "fd", WAIT_OBJECT_NUMBER },
	[RAW_WAIT_CHILD] = { "pid", WAIT_OBJECT_NUMBER },
	[RAW_WAIT_FUTEX] = { "futex", WAIT_OBJECT_DATA },
	/* One lock per interpreter: the waits on it read "[gil]". */
	[RAW_WAIT_GIL] = { NULL, WAIT_OBJECT_NONE },
	/* The construct: the return address into the program of the runtime call. */
	[RAW_WAIT_OMP_BARRIER] = { "code", WAIT_OBJECT_CODE },
	[RAW_WAIT_OMP_LOCK] = { "openmp-lock", WAIT_OBJECT_DATA },
	[RAW_WAIT_OMP_OTHER] = { NULL, WAIT_OBJECT_NONE },
	/* A task's suspension: no object, and no time the thread was blocked. */
	[RAW_WAIT_TASK] = { NULL, WAIT_OBJECT_NONE },
};
#define NKINDS (sizeof(kinds) / sizeof(kinds[0]))

/* The most one record may say: more is damage (and could overflow the sums). */
#define MAX_WAIT_COUNT (1ull << 40)

const char *wait_kind_name(uint32_t kind)
{
	return raw_wait_kind_name(kind);
}

const char *wait_object_type(uint32_t kind)
{
	return kind < NKINDS ? kinds[kind].object_type : NULL;
}

enum wait_object wait_object_what(uint32_t kind)
{
	return kind < NKINDS ? kinds[kind].what : WAIT_OBJECT_NONE;
}

int wait_take(struct stream *s, const struct raw_record *rec)
{
	struct wait_rec w = { .time_ns = rec->time_ns };

	if (!rec->decoded) {
		s->unknown_records++; /* a later record of the range */
		return 0;
	}
	switch (rec->type) {
	case RAW_REC_WAIT:
		w.stack = rec->u.wait.stack_id;
		w.total_ns = rec->u.wait.duration_ns;
		w.kind = rec->u.wait.kind;
		w.object = rec->u.wait.object;
		w.count = 1;
		break;
	case RAW_REC_WAIT_OPEN:
		w.stack = rec->u.wait.stack_id;
		w.kind = rec->u.wait.kind;
		w.object = rec->u.wait.object;
		w.count = 1;
		w.open = true;
		w.seen_ns = rec->u.wait.seen_ns;
		if (w.seen_ns < w.time_ns) {
			s->records_malformed++;
			return 0;
		}
		break;
	case RAW_REC_WAIT_SUM:
		w.stack = rec->u.wait_sum.stack_id;
		w.kind = rec->u.wait_sum.kind;
		w.object = rec->u.wait_sum.object;
		w.count = rec->u.wait_sum.count;
		w.total_ns = rec->u.wait_sum.total_ns;
		w.summed = true;
		break;
	case RAW_REC_OBJECT: {
		struct object_rec o = { rec->u.object.kind, rec->u.object.object, NULL };

		if (!rec->u.object.name.len) {
			s->records_malformed++;
			return 0;
		}
		if (GROW(s->objects, s->nobjects + 1, s->objects_cap) ||
		    !(o.name = str_dup_mem(rec->u.object.name.s, rec->u.object.name.len)))
			return -ENOMEM;
		s->objects[s->nobjects++] = o;
		return 0;
	}
	case RAW_REC_OMP_REGION:
		if (rec->u.omp_region.duration_ns > (uint64_t)FIN_MAX_STREAM_NS) {
			s->records_malformed++;
			return 0;
		}
		if (GROW(s->regions, s->nregions + 1, s->regions_cap))
			return -ENOMEM;
		s->regions[s->nregions++] = (struct region_rec){
			.time_ns = rec->time_ns,
			.duration_ns = rec->u.omp_region.duration_ns,
			.object = rec->u.omp_region.object,
			.threads = rec->u.omp_region.threads,
		};
		return 0;
	default:
		s->unknown_records++; /* a later record of the range */
		return 0;
	}
	if (w.total_ns > (uint64_t)FIN_MAX_STREAM_NS || w.count > MAX_WAIT_COUNT ||
	    (w.summed && !w.count)) {
		s->records_malformed++;
		return 0;
	}
	if (GROW(s->waits, s->nwaits + 1, s->waits_cap))
		return -ENOMEM;
	s->waits[s->nwaits++] = w;
	return 0;
}

/* How long after its last WAIT_OPEN a wait may have lasted: the agent's period of telling it
   again (a second, or a tenth of its length so far), and the control thread's poll. */
static int64_t open_grace(const struct wait_rec *w)
{
	int64_t every = (w->seen_ns - w->time_ns) / 10;

	return (every > 1000000000 ? every : 1000000000) + 100000000;
}

/* Whether w, a WAIT_OPEN, is told again by a later one, or ended by its WAIT. */
static bool open_superseded(const struct stream *s, size_t i)
{
	const struct wait_rec *w = &s->waits[i];
	size_t j;

	for (j = 0; j < s->nwaits; j++) {
		const struct wait_rec *o = &s->waits[j];

		if (j == i || o->summed || o->time_ns != w->time_ns || o->kind != w->kind)
			continue;
		if (!o->open || o->seen_ns > w->seen_ns || (o->seen_ns == w->seen_ns && j > i))
			return true;
	}
	return false;
}

/*
 * A WAIT_OPEN (a wait in progress when the agent's control thread saw it, told again every
 * second or tenth of its length) is the wait its WAIT of the same start closes, counted
 * there; one left without it lasted until its process was ended by a signal: to the
 * program's end as pcollect saw it (meta end_monotonic_ns, the moment its wait for the
 * program returned), but no later than its last WAIT_OPEN allows (a process of the family
 * killed while the program went on); without pcollect's end, to its last WAIT_OPEN.
 */
static void opens_close(const struct fin *f, struct stream *s)
{
	int64_t end = INT64_MIN;
	size_t i, n = 0;

	if (f->end_mono_ns >= 0 && (uint64_t)f->end_mono_ns >= s->hdr.origin_ns)
		end = (int64_t)((uint64_t)f->end_mono_ns - s->hdr.origin_ns);
	for (i = 0; i < s->nwaits; i++) {
		struct wait_rec *w = &s->waits[i];

		if (w->open) {
			int64_t last = w->seen_ns;

			if (open_superseded(s, i))
				continue;
			if (end != INT64_MIN) {
				last = sat_add_i64(w->seen_ns, open_grace(w));
				if (end < last)
					last = end;
			}
			if (last < w->time_ns)
				last = w->time_ns;
			w->total_ns = (uint64_t)(last - w->time_ns);
			w->open = false;
		}
		s->waits[n++] = *w;
	}
	s->nwaits = n;
}

int waits_to_events(struct fin *f, struct stream *s)
{
	struct thread *t = &f->threads[s->thread];
	int64_t wt, wc;
	size_t i;
	int ret = 0;

	/* A region is the context of its implicit barrier's waits. */
	for (i = 0; i < s->nregions; i++) {
		int64_t ctx =
			fin_context_get(f, s->image, RAW_WAIT_OMP_BARRIER, s->regions[i].object,
					s->regions[i].time_ns + s->offset_ns,
					region_at(s, s->regions[i].time_ns));

		if (ctx < 0)
			return (int)ctx;
		s->regions[i].context = (uint32_t)ctx;
		f->regions++;
	}
	opens_close(f, s);
	if (!s->nwaits)
		return 0;
	for (i = 0; i < s->nwaits && !ret; i++) {
		const struct wait_rec *w = &s->waits[i];
		/* A task's suspension blocked no thread: Task Wait Time alone. */
		bool task = w->kind == RAW_WAIT_TASK;

		wt = fin_metrics_standard(f, task ? METRIC_TASK_WAIT_TIME : METRIC_WAIT_TIME);
		wc = task ? UINT32_MAX : fin_metrics_standard(f, METRIC_WAIT_COUNT);
		if (wt < 0 || wc < 0)
			return -ENOMEM;
		int64_t ctx = fin_context_get(f, s->image, w->kind, w->object,
					      w->time_ns + s->offset_ns, region_at(s, w->time_ns));
		struct event_rec e = {
			.time_ns = w->time_ns,
			.stack = w->stack,
			.context = (uint32_t)ctx,
			.timed = !w->summed,
		};

		if (ctx < 0)
			return (int)ctx;
		if (wt != UINT32_MAX) {
			e.metric = (uint32_t)wt;
			e.value = (int64_t)w->total_ns;
			e.count = w->count;
			ret = fin_event_add(s, &e);
		}
		if (!ret && wc != UINT32_MAX) {
			e.metric = (uint32_t)wc;
			e.value = (int64_t)w->count;
			e.count = w->count;
			ret = fin_event_add(s, &e);
		}
		if (task)
			continue;
		t->wait_ns = sat_add_u64(t->wait_ns, w->total_ns);
		t->waits = sat_add_u64(t->waits, w->count);
		f->wait_ns = sat_add_u64(f->wait_ns, w->total_ns);
		f->waits_total = sat_add_u64(f->waits_total, w->count);
		if (w->summed) {
			t->waits_short = sat_add_u64(t->waits_short, w->count);
			f->waits_short = sat_add_u64(f->waits_short, w->count);
		}
	}
	return ret;
}
