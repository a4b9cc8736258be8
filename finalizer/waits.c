/* SPDX-License-Identifier: MIT */
/* The decoder of the waits' records (48-63): blocking calls become Wait Time and Wait Count. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "finalizer/finalize-private.h"
#include "finalizer/metrics.h"

/*
 * The records of docs/raw-format.md ("Waits"), as the agent writes them. Times are ns of the
 * stream's clock since its origin, absolute (not deltas).
 */
enum {
	WAIT_REC_WAIT = RAW_REC_WAIT_FIRST,       /* time stack duration kind object */
	WAIT_REC_SUM = RAW_REC_WAIT_FIRST + 1,    /* time stack kind object count total */
	WAIT_REC_OBJECT = RAW_REC_WAIT_FIRST + 2, /* kind object name */
};

/* Per wait kind (enum raw_wait_kind): contexts.wait_kind, contexts.object_type, and whether
   the object is an address in the process. */
static const struct {
	const char *name, *object_type;
	bool address;
} kinds[] = {
	[1] = { "mutex", "mutex", true },
	[2] = { "rwlock", "rwlock", true },
	[3] = { "cond", "cond", true },
	[4] = { "join", "thread", false },
	[5] = { "barrier", "barrier", true },
	[6] = { "semaphore", "semaphore", true },
	[7] = { "sleep", NULL, false },
	[8] = { "poll", "fd", false },
	[9] = { "read", "fd", false },
	[10] = { "write", "fd", false },
	[11] = { "accept", "fd", false },
	[12] = { "connect", "fd", false },
	[13] = { "child", "pid", false },
	[14] = { "futex", "futex", true },
	[15] = { "gil", NULL, false },
	[16] = { "openmp-barrier", NULL, false },
	[17] = { "openmp-lock", "openmp-lock", true },
	[18] = { "openmp-other", NULL, false },
};
#define NKINDS (sizeof(kinds) / sizeof(kinds[0]))

/* The most one record may say: more is damage (and could overflow the sums). */
#define MAX_WAIT_COUNT (1ull << 40)

const char *wait_kind_name(uint32_t kind)
{
	return kind < NKINDS && kinds[kind].name ? kinds[kind].name : "other";
}

const char *wait_object_type(uint32_t kind)
{
	return kind < NKINDS ? kinds[kind].object_type : NULL;
}

bool wait_object_is_address(uint32_t kind)
{
	return kind < NKINDS && kinds[kind].address;
}

static char *dup_str(struct raw_string s)
{
	char *d = malloc((size_t)s.len + 1);

	if (d) {
		memcpy(d, s.s, s.len);
		d[s.len] = '\0';
	}
	return d;
}

int wait_take(struct stream *s, const struct raw_record *rec)
{
	struct raw_dec d = { rec->payload, rec->payload + rec->payload_len, false };
	struct wait_rec w = { 0 };

	switch (rec->type) {
	case WAIT_REC_WAIT:
		w.time_ns = raw_dec_svarint(&d);
		w.stack = raw_dec_varint(&d);
		w.total_ns = raw_dec_varint(&d);
		w.kind = (uint32_t)raw_dec_varint(&d);
		w.object = raw_dec_varint(&d);
		w.count = 1;
		break;
	case WAIT_REC_SUM:
		w.time_ns = raw_dec_svarint(&d);
		w.stack = raw_dec_varint(&d);
		w.kind = (uint32_t)raw_dec_varint(&d);
		w.object = raw_dec_varint(&d);
		w.count = raw_dec_varint(&d);
		w.total_ns = raw_dec_varint(&d);
		w.summed = true;
		break;
	case WAIT_REC_OBJECT: {
		struct object_rec o = { 0 };
		struct raw_string name;

		o.kind = (uint32_t)raw_dec_varint(&d);
		o.object = raw_dec_varint(&d);
		name = raw_dec_string(&d);
		if (d.error || !name.len) {
			s->records_malformed++;
			return 0;
		}
		if (GROW(s->objects, s->nobjects + 1, s->objects_cap) || !(o.name = dup_str(name)))
			return -ENOMEM;
		s->objects[s->nobjects++] = o;
		return 0;
	}
	default:
		s->unknown_records++; /* a later record of the range */
		return 0;
	}
	if (d.error || w.total_ns > (uint64_t)FIN_MAX_STREAM_NS || w.count > MAX_WAIT_COUNT ||
	    (w.summed && !w.count)) {
		s->records_malformed++;
		return 0;
	}
	if (GROW(s->waits, s->nwaits + 1, s->waits_cap))
		return -ENOMEM;
	s->waits[s->nwaits++] = w;
	return 0;
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static int event_add(struct stream *s, const struct event_rec *e)
{
	if (GROW(s->events, s->nevents + 1, s->events_cap))
		return -ENOMEM;
	s->events[s->nevents++] = *e;
	return 0;
}

int waits_to_events(struct fin *f, struct stream *s)
{
	struct thread *t = &f->threads[s->thread];
	int64_t wt, wc;
	size_t i;
	int ret = 0;

	if (!s->nwaits)
		return 0;
	wt = fin_metrics_standard(f, FIN_METRIC_WAIT_TIME_NAME);
	wc = fin_metrics_standard(f, FIN_METRIC_WAIT_COUNT_NAME);
	if (wt < 0 || wc < 0)
		return -ENOMEM;
	for (i = 0; i < s->nwaits && !ret; i++) {
		const struct wait_rec *w = &s->waits[i];
		int64_t ctx =
			fin_context_get(f, s->image, w->kind, w->object, w->time_ns + s->offset_ns);
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
			ret = event_add(s, &e);
		}
		if (!ret && wc != UINT32_MAX) {
			e.metric = (uint32_t)wc;
			e.value = (int64_t)w->count;
			e.count = w->count;
			ret = event_add(s, &e);
		}
		t->wait_ns = sat_add(t->wait_ns, w->total_ns);
		t->waits = sat_add(t->waits, w->count);
		f->wait_ns = sat_add(f->wait_ns, w->total_ns);
		f->waits_total = sat_add(f->waits_total, w->count);
		if (w->summed) {
			t->waits_short = sat_add(t->waits_short, w->count);
			f->waits_short = sat_add(f->waits_short, w->count);
		}
	}
	return ret;
}
