/* SPDX-License-Identifier: MIT */
/* Process images (pid, exec generation), their threads, and their time-ordered module maps. */
#include <errno.h>
#include <elf.h>
#include <stdlib.h>
#include <string.h>

#include "common/cmp.h"
#include "common/grow.h"
#include "finalizer/finalize-private.h"
#include "finalizer/sorted.h"

struct module_key {
	const struct fin *f;
	const struct raw_module *rm;
};

static uint64_t module_hash(const struct raw_module *rm)
{
	uint64_t h = hash_bytes(rm->path, rm->path_len);

	h = hash_combine(h, hash_bytes(rm->build_id, rm->build_id_len));
	return hash_combine(h, rm->kind);
}

static bool module_eq(const void *ctx, uint32_t idx)
{
	const struct module_key *k = ctx;
	const struct module *m = &k->f->modules[idx];

	return m->kind == k->rm->kind && m->build_id_len == k->rm->build_id_len &&
	       !memcmp(m->build_id, k->rm->build_id, m->build_id_len) &&
	       strlen(m->path) == k->rm->path_len && !memcmp(m->path, k->rm->path, k->rm->path_len);
}

static int module_make(const void *ctx, void *elem)
{
	const struct module_key *k = ctx;

	return module_init(elem, k->rm);
}

/* The global module for a load record, added when new. Returns its index or -ENOMEM. */
static int64_t module_get(struct fin *f, const struct raw_module *rm)
{
	struct module_key k = { f, rm };

	return HASH_INDEX_GET(&f->module_index, module_hash(rm), module_eq, module_make, &k,
			      f->modules, f->nmodules, f->modules_cap);
}

static int64_t image_get(struct fin *f, const struct raw_file_header *h)
{
	size_t i;
	struct image *im;

	for (i = 0; i < f->nimages; i++)
		if (f->images[i].pid == h->pid && f->images[i].generation == h->generation)
			return (int64_t)i;
	if (GROW(f->images, f->nimages + 1, f->images_cap))
		return -ENOMEM;
	im = &f->images[f->nimages];
	*im = (struct image){
		.pid = h->pid,
		.generation = h->generation,
		.rank = h->rank,
		.start_ns = INT64_MAX,
		.end_ns = INT64_MIN,
		.fork_parent = -1,
		.db_id = -1,
	};
	memcpy(im->host, h->host, sizeof(h->host));
	im->host[sizeof(h->host)] = '\0';
	return (int64_t)f->nimages++;
}

static int64_t thread_get(struct fin *f, uint32_t image, int32_t tid)
{
	size_t i;

	for (i = 0; i < f->nthreads; i++)
		if (f->threads[i].image == image && f->threads[i].tid == tid)
			return (int64_t)i;
	if (GROW(f->threads, f->nthreads + 1, f->threads_cap))
		return -ENOMEM;
	f->threads[f->nthreads] = (struct thread){ .image = image, .tid = tid, .db_id = -1 };
	return (int64_t)f->nthreads++;
}

/* Add [lo, hi) of module to maps, unless the same load is there already (kept earliest). */
static int mapping_add(struct mapping **maps, size_t *n, size_t *cap, uint32_t module,
		       uint64_t base, uint64_t lo, uint64_t hi, int64_t t)
{
	struct mapping *mp;
	size_t j;

	/* The same load seen by several threads of the image: keep the earliest. */
	for (j = 0; j < *n; j++) {
		mp = &(*maps)[j];
		if (mp->module == module && mp->base == base && mp->lo == lo && mp->hi == hi) {
			if (t < mp->load_ns)
				mp->load_ns = t;
			return 0;
		}
	}
	if (array_reserve(maps, cap, *n + 1, sizeof(**maps)))
		return -ENOMEM;
	(*maps)[(*n)++] = (struct mapping){
		.lo = lo,
		.hi = hi,
		.base = base,
		.module = module,
		.load_ns = t,
		.unload_ns = INT64_MAX,
	};
	return 0;
}

/*
 * The code segments of a load go to maps (where stacks are located); the others of an ELF
 * file (data, bss) to data, where the address of a sync object names its variable.
 */
static int add_mapping(struct image *im, uint32_t module, const struct raw_module *rm, int64_t t)
{
	uint32_t i;
	bool any_exec = false;
	int ret = 0;

	for (i = 0; i < rm->nsegs; i++)
		if (rm->segs[i].prot & PF_X)
			any_exec = true;
	for (i = 0; i < rm->nsegs && !ret; i++) {
		const struct raw_segment *sg = &rm->segs[i];

		if (!sg->size)
			continue;
		if (!any_exec || (sg->prot & PF_X))
			ret = mapping_add(&im->maps, &im->nmaps, &im->maps_cap, module, rm->base,
					  sg->start, sg->start + sg->size, t);
		else if (rm->kind == RAW_MODULE_FILE)
			ret = mapping_add(&im->data, &im->ndata, &im->data_cap, module, rm->base,
					  sg->start, sg->start + sg->size, t);
	}
	return ret;
}

static void unload_in(struct fin *f, struct mapping *maps, size_t n, const struct module_event *e,
		      int64_t t)
{
	size_t j;

	for (j = 0; j < n; j++) {
		struct mapping *mp = &maps[j];

		if (mp->base == e->rm.base && mp->load_ns <= t && mp->unload_ns == INT64_MAX &&
		    !strcmp(f->modules[mp->module].path, e->rm.path))
			mp->unload_ns = t;
	}
}

static void apply_unload(struct fin *f, struct image *im, const struct module_event *e, int64_t t)
{
	unload_in(f, im->maps, im->nmaps, e, t);
	unload_in(f, im->data, im->ndata, e, t);
}

static int mapping_cmp(const void *a, const void *b)
{
	const struct mapping *x = a, *y = b;

	return CMP_THEN(CMP(x->lo, y->lo), CMP(x->load_ns, y->load_ns));
}

static const struct mapping *maps_find(const struct mapping *maps, size_t n, uint64_t addr,
				       int64_t t)
{
	size_t j = sorted_upper_u64(maps, n, sizeof(*maps), offsetof(struct mapping, lo), addr);
	const struct mapping *best = NULL, *later = NULL;

	while (j-- > 0 && maps[j].max_hi > addr) {
		const struct mapping *mp = &maps[j];

		if (addr >= mp->hi)
			continue;
		if (mp->load_ns <= t && t < mp->unload_ns) {
			if (!best || mp->load_ns > best->load_ns)
				best = mp;
		} else if (!later || mp->load_ns < later->load_ns) {
			later = mp;
		}
	}
	/* A module recorded just after the sample (the agent's clock read races the load). */
	return best ? best : later;
}

const struct mapping *image_find(const struct image *im, uint64_t addr, int64_t t)
{
	return maps_find(im->maps, im->nmaps, addr, t);
}

const struct mapping *image_find_data(const struct image *im, uint64_t addr, int64_t t)
{
	return maps_find(im->data, im->ndata, addr, t);
}

/* Sorted by lo, each with the largest hi up to it (maps_find's stop). */
static void maps_sort(struct mapping *maps, size_t n)
{
	uint64_t mx = 0;
	size_t j;

	if (n)
		qsort(maps, n, sizeof(*maps), mapping_cmp);
	for (j = 0; j < n; j++) {
		if (maps[j].hi > mx)
			mx = maps[j].hi;
		maps[j].max_hi = mx;
	}
}

/* *dst becomes a copy of name, unless name is NULL or empty. */
static int name_set(char **dst, const char *name)
{
	char *n;

	if (!name || !*name)
		return 0;
	if (!(n = strdup(name)))
		return -ENOMEM;
	free(*dst);
	*dst = n;
	return 0;
}

static int thread_event_apply(struct fin *f, struct stream *s, const struct thread_event *e)
{
	int64_t ti = thread_get(f, s->image, (int32_t)e->tid);
	struct thread *t;
	int64_t when = e->time_ns + s->offset_ns;

	if (ti < 0)
		return (int)ti;
	t = &f->threads[ti];
	switch (e->type) {
	case RAW_REC_THREAD_START:
		if (!t->has_start || when < t->start_ns)
			t->start_ns = when;
		t->has_start = true;
		/* The start record names the thread too. */
		__attribute__((fallthrough));
	case RAW_REC_THREAD_NAME:
		return name_set(&t->name, e->name);
	case RAW_REC_PY_THREAD_NAME:
		/* the latest by time: the process stream's and the thread's own come apart */
		if (t->py_name && when < t->py_name_ns)
			break;
		t->py_name_ns = when;
		return name_set(&t->py_name, e->name);
	case RAW_REC_THREAD_END:
		t->end_ns = when;
		t->has_end = true;
		t->cpu_ns = e->cpu_ns;
		t->has_cpu = true;
		t->cpu_looked = false;
		break;
	case RAW_REC_THREAD_CPU:
		/* No end of its own (a signal ended its process): the last look, samples after. */
		if (!t->has_end && e->cpu_ns >= t->cpu_ns) {
			t->cpu_ns = e->cpu_ns;
			t->has_cpu = t->cpu_looked = true;
		}
		break;
	default:
		break;
	}
	return 0;
}

/*
 * Whether the OS name os says no more than the Python name py: the same, or 3.14+'s copy of
 * it in the kernel, cut to 15 bytes (a few less where a UTF-8 character was cut).
 */
static bool os_name_same(const char *os, const char *py)
{
	size_t n = strlen(os);

	return strcmp(os, py) == 0 || (n >= 12 && n <= 15 && strncmp(os, py, n) == 0);
}

/* A thread with a Python name is called by it; its OS name is kept where it differs. */
static void threads_name_python(struct fin *f)
{
	size_t i;

	for (i = 0; i < f->nthreads; i++) {
		struct thread *t = &f->threads[i];

		if (!t->py_name)
			continue;
		if (t->name && *t->name && !os_name_same(t->name, t->py_name))
			t->os_name = t->name;
		else
			free(t->name);
		t->name = t->py_name;
		t->py_name = NULL;
	}
}

int fin_build_images(struct fin *f)
{
	size_t i, j;
	int ret;

	for (i = 0; i < f->nstreams; i++) {
		struct stream *s = &f->streams[i];
		int64_t im, th;

		if (!s->has_header)
			continue;
		im = image_get(f, &s->hdr);
		if (im < 0)
			return (int)im;
		s->image = (uint32_t)im;
		s->offset_ns = (int64_t)s->hdr.origin_ns - f->start_mono_ns;
		th = thread_get(f, (uint32_t)im, s->hdr.tid);
		if (th < 0)
			return (int)th;
		s->thread = (uint32_t)th;
		if (s->process.seen && !f->images[im].process.seen) {
			f->images[im].process = s->process;
			f->images[im].process.time_ns += s->offset_ns;
			memset(&s->process, 0, sizeof(s->process));
		}
		for (j = 0; j < s->nmods; j++) {
			struct module_event *e = &s->mods[j];
			int64_t m;

			if (e->unload)
				continue;
			m = module_get(f, &e->rm);
			if (m < 0)
				return (int)m;
			e->module = (uint32_t)m;
			ret = add_mapping(&f->images[im], (uint32_t)m, &e->rm,
					  e->time_ns + s->offset_ns);
			if (ret)
				return ret;
		}
		for (j = 0; j < s->ntevents; j++) {
			ret = thread_event_apply(f, s, &s->tevents[j]);
			if (ret)
				return ret;
		}
	}
	/* Unloads after every load is known, whichever stream recorded it. */
	for (i = 0; i < f->nstreams; i++) {
		struct stream *s = &f->streams[i];

		if (!s->has_header)
			continue;
		for (j = 0; j < s->nmods; j++)
			if (s->mods[j].unload)
				apply_unload(f, &f->images[s->image], &s->mods[j],
					     s->mods[j].time_ns + s->offset_ns);
	}
	for (i = 0; i < f->nimages; i++) {
		struct image *im = &f->images[i];

		/* A forked child runs its parent's mappings until it maps its own. */
		if (im->process.seen && im->process.origin == RAW_PROCESS_FORK)
			for (j = 0; j < f->nimages; j++)
				if (j != i && f->images[j].pid == im->process.parent_pid &&
				    !strcmp(f->images[j].host, im->host))
					im->fork_parent = (int64_t)j;
		maps_sort(im->maps, im->nmaps);
		maps_sort(im->data, im->ndata);
	}
	threads_name_python(f);
	return 0;
}
