/* SPDX-License-Identifier: MIT */
/* Locating stacks: each sample's and event's stack found by its id, each ip of such a stack
   placed in a module (a module-relative address to resolve) or left absolute. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "finalizer/finalize-private.h"

/* Stack ids to stack indexes: a table when the ids are small, else a hash index. */
struct id_map {
	uint32_t *direct; /* id -> index + 1, when ids are small */
	size_t ndirect;
	struct hash_index hash;
	const struct stream *s;
};

/* A lookup: the map and the id looked for, passed to the comparison callback. */
struct id_query {
	struct id_map map;
	uint64_t id;
};

static bool stack_id_eq(const void *ctx, uint32_t idx)
{
	const struct id_query *q = ctx;

	return q->map.s->stacks[idx].id == q->id;
}

static int id_map_build(struct id_map *m, const struct stream *s)
{
	uint64_t max = 0;
	size_t i;

	memset(m, 0, sizeof(*m));
	m->s = s;
	hash_index_init(&m->hash);
	for (i = 0; i < s->nstacks; i++)
		if (s->stacks[i].id > max)
			max = s->stacks[i].id;
	if (max < 4 * (uint64_t)s->nstacks + 4096) {
		m->ndirect = (size_t)max + 1;
		m->direct = calloc(m->ndirect, sizeof(*m->direct));
		if (!m->direct)
			return -ENOMEM;
		for (i = 0; i < s->nstacks; i++)
			m->direct[s->stacks[i].id] = (uint32_t)i + 1; /* a redefinition wins */
		return 0;
	}
	for (i = 0; i < s->nstacks; i++)
		if (hash_index_add(&m->hash, hash_mix(s->stacks[i].id), (uint32_t)i))
			return -ENOMEM;
	return 0;
}

static int64_t id_map_find(struct id_query *q, uint64_t id)
{
	if (q->map.direct)
		return id < q->map.ndirect && q->map.direct[id] ? (int64_t)q->map.direct[id] - 1
								: -1;
	q->id = id;
	return hash_index_find(&q->map.hash, hash_mix(id), stack_id_eq, q);
}

static int stack_locate(struct fin *f, struct stream *s, struct stack_rec *st, int64_t t)
{
	const struct image *im = &f->images[s->image];
	uint32_t k;

	if (array_reserve(&s->locs, &s->locs_cap, s->nlocs + st->depth, sizeof(*s->locs)))
		return -ENOMEM;
	st->loc = s->nlocs;
	for (k = 0; k < st->depth; k++) {
		uint64_t ip = s->ips[st->off + k];
		/* Return addresses point after the call: look up the call itself. */
		uint64_t a = (k == 0 && (st->flags & RAW_STACK_FIRST_IS_PC)) || !ip ? ip : ip - 1;
		const struct mapping *mp = image_find(im, a, t);
		struct loc *l = &s->locs[s->nlocs++];
		int64_t up = im->fork_parent;
		int hops;

		for (hops = 0; !mp && up >= 0 && hops < 16; hops++) {
			mp = image_find(&f->images[up], a, t);
			up = f->images[up].fork_parent;
		}

		if (mp) {
			l->module = mp->module;
			l->addr = a - mp->base;
			if (module_want(&f->modules[mp->module], l->addr))
				return -ENOMEM;
		} else {
			l->module = NO_MODULE;
			l->addr = a;
		}
	}
	return 0;
}

/*
 * A record at stream time time_ns naming the stack *stack (an id): *stack becomes that stack's
 * index, the stack located when it was not yet, and the index is returned; an id no stack
 * has becomes NO_STACK, counted in *bad (-1). The image's span of time grows to the record's.
 */
static int64_t stack_of(struct fin *f, struct stream *s, struct id_query *q, uint64_t *stack,
			int64_t time_ns, uint64_t *bad, int *err)
{
	struct image *im = &f->images[s->image];
	int64_t idx = id_map_find(q, *stack);
	int64_t t = time_ns + s->offset_ns;

	if (t < im->start_ns)
		im->start_ns = t;
	if (t > im->end_ns)
		im->end_ns = t;
	if (idx < 0) {
		(*bad)++;
		*stack = NO_STACK;
		return -1;
	}
	*stack = (uint64_t)idx;
	if (s->stacks[idx].loc == SIZE_MAX)
		*err = stack_locate(f, s, &s->stacks[idx], t);
	return idx;
}

/* The thread stream of tid in image, other than stream skip; -1 when none. */
static int64_t stream_of_tid(const struct fin *f, uint32_t image, uint32_t tid, size_t skip)
{
	size_t j;

	for (j = 0; j < f->nstreams; j++) {
		const struct stream *p = &f->streams[j];

		if (j != skip && p->has_header && p->duplicate_of < 0 &&
		    p->hdr.kind != RAW_STREAM_PROCESS && p->image == image &&
		    (uint32_t)p->hdr.tid == tid)
			return (int64_t)j;
	}
	return -1;
}

/* Stack maps of streams kept while the origins that name them come together. */
struct origin_maps {
	struct id_query q;
	int64_t mapped;
};

static void origin_maps_release(struct origin_maps *om)
{
	free(om->q.map.direct);
	hash_index_release(&om->q.map.hash);
	memset(om, 0, sizeof(*om));
	om->mapped = -1;
}

/*
 * Stack id *stack of tid's stream in image, at collection time t: located there like a
 * sample's, *stack its index and *stream that stream's. False when either is not found.
 */
static bool origin_locate(struct fin *f, struct origin_maps *om, uint32_t image, uint32_t tid,
			  size_t skip, uint64_t *stack, int64_t t, uint32_t *stream, int *err)
{
	int64_t j = stream_of_tid(f, image, tid, skip);
	uint64_t bad = 0;

	if (j < 0)
		return false;
	if (j != om->mapped) {
		origin_maps_release(om);
		om->mapped = j;
		*err = id_map_build(&om->q.map, &f->streams[j]);
		if (*err)
			return false;
	}
	*stream = (uint32_t)j;
	return stack_of(f, &f->streams[j], &om->q, stack, t - f->streams[j].offset_ns, &bad, err) >=
	       0;
}

/*
 * The origins' stacks (RAW_REC_ORIGIN: origins.c), each in the stream of the thread of its
 * tid in the same process image, located there like a sample's, at the record's time (the
 * modules then): each created thread's creating stack, and each context's part of work. An
 * origin whose thread or stack is not found is dropped.
 */
static int locate_origins(struct fin *f)
{
	struct origin_maps om;
	size_t i;
	int ret = 0;

	memset(&om, 0, sizeof(om));
	om.mapped = -1;
	for (i = 0; i < f->nstreams && !ret; i++) {
		struct stream *s = &f->streams[i];

		if (s->has_origin)
			s->has_origin =
				origin_locate(f, &om, s->image, s->origin_tid, i, &s->origin_stack,
					      s->origin_time_ns + s->offset_ns, &s->origin_stream,
					      &ret);
	}
	for (i = 0; i < f->ncontexts && !ret; i++) {
		struct context *c = &f->contexts[i];

		if (c->origin_tid)
			c->origin_found = origin_locate(f, &om, c->image, c->origin_tid, SIZE_MAX,
							&c->origin_stack, c->time_ns,
							&c->origin_stream, &ret);
	}
	origin_maps_release(&om);
	return ret;
}

int fin_locate_stacks(struct fin *f)
{
	size_t i, j;
	int ret = 0;

	for (i = 0; i < f->nstreams && !ret; i++) {
		struct stream *s = &f->streams[i];
		struct id_query q;

		if (!s->has_header)
			continue;
		ret = id_map_build(&q.map, s);
		for (j = 0; j < s->nsamples && !ret; j++) {
			struct sample_rec *r = &s->samples[j];
			int64_t idx = stack_of(f, s, &q, &r->stack, r->time_ns,
					       &s->samples_bad_stack, &ret);

			if (idx >= 0) {
				s->stacks[idx].samples++;
				s->stacks[idx].weight += r->weight;
			}
		}
		/* Events are located like samples, at their own time. */
		for (j = 0; j < s->nevents && !ret; j++)
			stack_of(f, s, &q, &s->events[j].stack, s->events[j].time_ns,
				 &s->events_bad_stack, &ret);
		free(q.map.direct);
		hash_index_release(&q.map.hash);
	}
	return ret ? ret : locate_origins(f);
}
