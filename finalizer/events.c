/* SPDX-License-Identifier: MIT */
/* Events of metrics other than the samples' CPU Time: VALUE records and what each analysis's
   records decode to, with their metrics mapped by name and their contexts interned. */
#define LOG_DOMAIN "events"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/raw-mpi.h"
#include "finalizer/finalize-private.h"
#include "finalizer/metrics.h"

/*
 * The analyses whose records become events, one line each: the record types they own, the
 * function that keeps a record at load (in parallel, one stream per thread) and the one that
 * turns a stream's kept records into events once the images are known. A later analysis
 * (allocations, MPI, regions) adds its line; everything after the events is shared.
 */
static const struct event_decoder {
	uint8_t first, last;
	int (*take)(struct stream *s, const struct raw_record *rec);
	int (*to_events)(struct fin *f, struct stream *s);
} decoders[] = {
	/* First: the others' events take their region from the spans it makes. */
	{ RAW_REC_REGION_BEGIN, RAW_REC_REGION_END, region_take, regions_to_events },
	{ RAW_REC_ALLOC_FIRST, RAW_REC_ALLOC_FIRST + 15, mem_take, mems_to_events },
	{ RAW_REC_WAIT_FIRST, RAW_REC_WAIT_FIRST + 15, wait_take, waits_to_events },
	{ RAW_REC_MPI_FIRST, RAW_REC_MPI_FIRST + 15, mpi_take, mpis_to_events },
};
#define NDECODERS (sizeof(decoders) / sizeof(decoders[0]))

int fin_event_add(struct stream *s, const struct event_rec *e)
{
	if (GROW(s->events, s->nevents + 1, s->events_cap))
		return -ENOMEM;
	s->events[s->nevents++] = *e;
	return 0;
}

int fin_events_take(struct stream *s, const struct raw_record *rec)
{
	size_t i;
	int ret;

	for (i = 0; i < NDECODERS; i++)
		if (rec->type >= decoders[i].first && rec->type <= decoders[i].last) {
			ret = decoders[i].take(s, rec);
			return ret ? ret : 1;
		}
	return 0;
}

/* ---- metrics ------------------------------------------------------------------------------ */

static const char *unit_name(uint32_t u)
{
	return u == RAW_UNIT_NS ? "ns" : u == RAW_UNIT_BYTES ? "bytes" : "count";
}

static const char *kind_name(uint32_t k)
{
	return k == RAW_METRIC_KIND_CPU_SAMPLE ? "cpu"
	       : k == RAW_METRIC_KIND_ALLOC    ? "alloc"
					       : "other";
}

/* Image im's METRIC id → the result's metric (UINT32_MAX: left out). -ENOMEM. */
static int image_metric_put(struct image *im, uint64_t id, uint32_t metric)
{
	size_t i;

	for (i = 0; i < im->nmetric_ids; i++)
		if (im->metric_ids[i].id == id)
			return 0; /* the first declaration of an id wins */
	if (GROW(im->metric_ids, im->nmetric_ids + 1, im->metric_ids_cap))
		return -ENOMEM;
	im->metric_ids[im->nmetric_ids++] = (struct image_metric){ id, metric };
	return 0;
}

int64_t fin_image_metric(const struct image *im, uint64_t id)
{
	size_t i;

	for (i = 0; i < im->nmetric_ids; i++)
		if (im->metric_ids[i].id == id)
			return im->metric_ids[i].metric;
	return -1;
}

/* CPU Time (index 0), then each metric the streams declare, in stream order. */
static int build_metrics(struct fin *f)
{
	size_t i, j;
	int64_t m = fin_metrics_standard(f, METRIC_CPU_TIME);
	int ret;

	if (m < 0)
		return (int)m;
	if (m != 0)
		BUG("CPU Time is not the first metric");
	for (i = 0; i < f->nstreams; i++) {
		struct stream *s = &f->streams[i];

		for (j = 0; s->has_header && j < s->nmetrics; j++) {
			const struct metric_decl *d = &s->metrics[j];

			m = fin_metrics_add(f, d->name, unit_name(d->unit),
					    d->aggregation == RAW_AGG_PEAK ? "peak" : "sum",
					    kind_name(d->kind), NULL);
			if (m < 0)
				return (int)m;
			ret = image_metric_put(&f->images[s->image], d->id, (uint32_t)m);
			if (ret)
				return ret;
		}
	}
	return 0;
}

/* VALUE records: one timed event each, of the metric the image declared under its id. */
static int values_to_events(struct fin *f, struct stream *s)
{
	const struct image *im = &f->images[s->image];
	size_t i;

	for (i = 0; i < s->nvalues; i++) {
		const struct value_rec *v = &s->values[i];
		int64_t m = fin_image_metric(im, v->metric);

		if (m < 0 || m == UINT32_MAX) {
			s->values_unknown_metric++;
			continue;
		}
		if (GROW(s->events, s->nevents + 1, s->events_cap))
			return -ENOMEM;
		s->events[s->nevents++] = (struct event_rec){
			.time_ns = v->time_ns,
			.stack = v->stack,
			.metric = (uint32_t)m,
			.value = v->value,
			.count = 1,
			.timed = true,
		};
	}
	if (s->values_unknown_metric)
		log_warn("'%s': %llu values of metrics its process did not declare: left out",
			 s->path, (unsigned long long)s->values_unknown_metric);
	return 0;
}

int fin_build_events(struct fin *f)
{
	size_t i, k;
	int ret = build_metrics(f);

	for (i = 0; i < f->nstreams && !ret; i++) {
		struct stream *s = &f->streams[i];

		if (!s->has_header)
			continue;
		ret = values_to_events(f, s);
		for (k = 0; k < NDECODERS && !ret; k++)
			ret = decoders[k].to_events(f, s);
		if (!ret && s->nworks)
			ret = works_to_contexts(f, s);
	}
	return ret;
}

/* ---- contexts ----------------------------------------------------------------------------- */

struct context_key {
	struct fin *f;
	uint32_t image, kind;
	uint64_t object;
	int64_t t;
	uint32_t mpi_function, comm_size;
	const char *region;
	uint32_t origin_tid;
	uint64_t origin_stack;
};

static bool context_eq(const void *ctx, uint32_t idx)
{
	const struct context_key *k = ctx;
	const struct context *c = &k->f->contexts[idx];

	return c->image == k->image && c->kind == k->kind && c->object == k->object &&
	       c->mpi_function == k->mpi_function && c->comm_size == k->comm_size &&
	       c->region == k->region && c->origin_tid == k->origin_tid &&
	       c->origin_stack == k->origin_stack;
}

/* The mapping of addr in image or, for a forked child, in the parents it started with. */
static const struct mapping *find_in(const struct fin *f, uint32_t image, uint64_t addr, int64_t t,
				     bool code)
{
	const struct mapping *mp = NULL;
	int64_t up = (int64_t)image;
	int hops;

	for (hops = 0; !mp && up >= 0 && hops < 16; hops++) {
		mp = code ? image_find(&f->images[up], addr, t)
			  : image_find_data(&f->images[up], addr, t);
		up = f->images[up].fork_parent;
	}
	return mp;
}

/*
 * A new context. A sync object in memory is looked for among the image's data segments: its
 * variable's name is asked of the module. An OpenMP construct, a return address into the
 * program, is looked up as a caller frame is (at the call): its function and line are
 * asked. Both are read once the modules are resolved (fin_name_contexts).
 */
static int context_make(const void *ctx, void *elem)
{
	const struct context_key *k = ctx;
	struct fin *f = k->f;
	struct context *c = elem;
	enum wait_object what = wait_object_what(k->kind);
	bool code = what == WAIT_OBJECT_CODE;
	const struct mapping *mp;
	uint64_t addr = code ? k->object - 1 : k->object;

	*c = (struct context){ .image = k->image,
			       .kind = k->kind,
			       .object = k->object,
			       .mpi_function = k->mpi_function,
			       .comm_size = k->comm_size,
			       .region = k->region,
			       .origin_tid = k->origin_tid,
			       .origin_stack = k->origin_stack,
			       .time_ns = k->t,
			       .module = NO_MODULE,
			       .db_id = -1 };
	if (!k->kind || (what != WAIT_OBJECT_DATA && !code) || !k->object)
		return 0;
	mp = find_in(f, k->image, addr, k->t, code);
	if (!mp)
		return 0;
	c->module = mp->module;
	c->addr = addr - mp->base;
	return code ? module_want(&f->modules[mp->module], c->addr)
		    : module_want_object(&f->modules[mp->module], c->addr);
}

static int64_t context_get(struct context_key *k)
{
	struct fin *f = k->f;
	uint64_t h = hash_combine(hash_combine(hash_mix(k->image), k->kind), k->object);
	int64_t i;

	if (k->mpi_function)
		h = hash_combine(hash_combine(h, k->mpi_function), k->comm_size);
	if (k->region)
		h = hash_combine(h, (uint64_t)(uintptr_t)k->region);
	if (k->origin_tid)
		h = hash_combine(hash_combine(h, k->origin_tid), k->origin_stack);
	i = HASH_INDEX_GET(&f->context_index, h, context_eq, context_make, k, f->contexts,
			   f->ncontexts, f->contexts_cap);
	return i < 0 ? i : i + 1;
}

int64_t fin_context_get(struct fin *f, uint32_t image, uint32_t kind, uint64_t object, int64_t t,
			const char *region)
{
	struct context_key k = { f, image, kind, object, t, 0, 0, region };

	return context_get(&k);
}

int64_t fin_context_get_mpi(struct fin *f, uint32_t image, uint32_t function, uint32_t comm_size,
			    const char *region)
{
	struct context_key k = { f, image, 0, 0, 0, function, comm_size, region };

	return context_get(&k);
}

int64_t fin_context_origin(struct fin *f, uint32_t image, uint32_t ctx, uint32_t tid,
			   uint64_t stack_id, int64_t t)
{
	struct context_key k = { f, image, 0, 0, t, 0, 0, NULL, tid, stack_id };

	if (ctx) {
		const struct context *c = &f->contexts[ctx - 1];

		k.kind = c->kind;
		k.object = c->object;
		k.t = c->time_ns;
		k.mpi_function = c->mpi_function;
		k.comm_size = c->comm_size;
		k.region = c->region;
	}
	return context_get(&k);
}

/* The name an OBJECT record of the image gives object (of kind's object type), or NULL. */
static const char *object_record_name(const struct fin *f, const struct context *c)
{
	const char *type = wait_object_type(c->kind), *name = NULL;
	size_t i, j;

	if (!type)
		return NULL;
	for (i = 0; i < f->nstreams; i++) {
		const struct stream *s = &f->streams[i];

		if (!s->has_header || s->image != c->image)
			continue;
		for (j = 0; j < s->nobjects; j++) {
			const char *t = wait_object_type(s->objects[j].kind);

			if (s->objects[j].object == c->object && t && !strcmp(t, type))
				name = s->objects[j].name; /* the last one said wins */
		}
	}
	return name;
}

/* A child waited for that was profiled too: its executable's name. */
static const char *child_name(const struct fin *f, const struct context *c)
{
	const struct image *im = &f->images[c->image];
	const char *exe = NULL, *slash;
	size_t i;

	for (i = 0; i < f->nimages; i++) {
		const struct image *o = &f->images[i];

		if (o->pid == (int32_t)c->object && !strcmp(o->host, im->host) && o->process.seen &&
		    o->process.exe)
			exe = o->process.exe; /* the latest image of that pid */
	}
	if (!exe)
		return NULL;
	slash = strrchr(exe, '/');
	return slash && slash[1] ? slash + 1 : exe;
}

/* A place in the code: "main at omp.c:42" (the function, and the line of the call). */
static const char *code_name(const struct module *m, uint64_t addr, char *buf, size_t size)
{
	int64_t ai = module_addr_index(m, addr);
	const struct sym_frame *outer, *inner;
	const char *file;

	if (ai < 0 || !m->count[ai] || !m->frames[m->first[ai]].resolved)
		return NULL;
	outer = &m->frames[m->first[ai]];
	inner = &m->frames[m->first[ai] + m->count[ai] - 1];
	if (!inner->file || !inner->line)
		return outer->name;
	file = strrchr(inner->file, '/') ? strrchr(inner->file, '/') + 1 : inner->file;
	snprintf(buf, size, "%s at %s:%u", outer->name, file, inner->line);
	return buf;
}

int fin_name_contexts(struct fin *f)
{
	size_t i;
	char buf[1024];

	for (i = 0; i < f->ncontexts; i++) {
		struct context *c = &f->contexts[i];
		enum wait_object what = wait_object_what(c->kind);
		const char *name = NULL;

		if (!c->kind)
			continue; /* an MPI call's or a region's alone: no object to name */
		if (c->module != NO_MODULE && what == WAIT_OBJECT_CODE)
			name = code_name(&f->modules[c->module], c->addr, buf, sizeof(buf));
		else if (c->module != NO_MODULE)
			name = module_object_name(&f->modules[c->module], c->addr);
		else if (c->kind == RAW_WAIT_CHILD)
			name = child_name(f, c);
		if (!name)
			name = object_record_name(f, c);
		if (name && !(c->name = str_pool_get(&f->strings, name)))
			return -ENOMEM;
		log_debug("context %zu: %s object 0x%llx%s%s", i + 1, wait_kind_name(c->kind),
			  (unsigned long long)c->object, c->name ? " named " : "",
			  c->name ? c->name : "");
	}
	return 0;
}
