/* SPDX-License-Identifier: MIT */
/* From raw stacks to the tables: locating ips in modules, frames, functions, the calling-context
   tree and the per-(thread, node) aggregates. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "finalizer/finalize-private.h"

#define NO_STACK UINT64_MAX

/* ---- stacks -> (module, address) ---------------------------------------------------------- */

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

int fin_locate_stacks(struct fin *f)
{
	size_t i, j;
	int ret = 0;

	for (i = 0; i < f->nstreams && !ret; i++) {
		struct stream *s = &f->streams[i];
		struct image *im;
		struct id_query q;

		if (!s->has_header)
			continue;
		im = &f->images[s->image];
		ret = id_map_build(&q.map, s);
		for (j = 0; j < s->nsamples && !ret; j++) {
			struct sample_rec *r = &s->samples[j];
			int64_t idx = id_map_find(&q, r->stack);
			int64_t t = r->time_ns + s->offset_ns;

			if (t < im->start_ns)
				im->start_ns = t;
			if (t > im->end_ns)
				im->end_ns = t;
			if (idx < 0) {
				s->samples_bad_stack++;
				r->stack = NO_STACK;
				continue;
			}
			r->stack = (uint64_t)idx;
			s->stacks[idx].samples++;
			s->stacks[idx].weight += r->weight;
			if (s->stacks[idx].loc == SIZE_MAX)
				ret = stack_locate(f, s, &s->stacks[idx], t);
		}
		free(q.map.direct);
		hash_index_release(&q.map.hash);
	}
	return ret;
}

/* ---- frames and functions ------------------------------------------------------------------ */

struct function_key {
	const struct fin *f;
	uint32_t module;
	const char *name; /* interned: compared by pointer */
	int64_t file;
	bool python;	  /* Python functions are also told apart by their first line */
	uint32_t line;
};

static bool function_eq(const void *ctx, uint32_t idx)
{
	const struct function_key *k = ctx;
	const struct function *fn = &k->f->functions[idx];

	return fn->module == k->module && fn->name == k->name && fn->file == k->file &&
	       fn->python == k->python && (!k->python || fn->line == k->line);
}

static int64_t file_id(struct fin *f, const char *path)
{
	int64_t id;

	if (!path)
		return 0;
	id = str_pool_intern(&f->files, path);
	return id < 0 ? id : id + 1;
}

/* The function (module, name, definition file), added when new. Index or -ENOMEM. */
static int64_t function_get(struct fin *f, uint32_t module, const struct sym_frame *sf)
{
	struct function_key k = { f, module, NULL, 0, false, 0 };
	const char *mangled;
	int64_t idx, file;
	uint64_t h;

	k.name = str_pool_get(&f->strings, sf->name);
	mangled = str_pool_get(&f->strings, sf->mangled);
	file = file_id(f, sf->decl_file);
	if (!k.name || (sf->mangled && !mangled) || file < 0)
		return -ENOMEM;
	k.file = file;
	h = hash_combine(hash_combine(hash_mix(module), (uint64_t)(uintptr_t)k.name),
			 (uint64_t)file);
	idx = hash_index_find(&f->function_index, h, function_eq, &k);
	if (idx >= 0)
		return idx;
	if (array_reserve(&f->functions, &f->functions_cap, f->nfunctions + 1,
			  sizeof(*f->functions)) ||
	    hash_index_add(&f->function_index, h, (uint32_t)f->nfunctions))
		return -ENOMEM;
	f->functions[f->nfunctions] = (struct function){
		.module = module,
		.name = k.name,
		.mangled = mangled,
		.file = file,
		.line = sf->decl_line,
		.resolved = sf->resolved,
		.eval = pymerge_is_eval(k.name),
	};
	return (int64_t)f->nfunctions++;
}

/* The Python function (name, file, first line), added when new. Index or -ENOMEM. */
static int64_t python_function_get(struct fin *f, const struct pyframe_info *pi)
{
	struct function_key k = { f, NO_MODULE, NULL, 0, true, (uint32_t)pi->firstlineno };
	int64_t idx, file;
	uint64_t h;

	k.name = str_pool_get(&f->strings, pi->name);
	file = file_id(f, pi->file);
	if (!k.name || file < 0)
		return -ENOMEM;
	k.file = file;
	h = hash_combine(hash_combine(hash_combine(hash_mix(NO_MODULE),
						   (uint64_t)(uintptr_t)k.name),
				      (uint64_t)file), k.line);
	idx = hash_index_find(&f->function_index, h, function_eq, &k);
	if (idx >= 0)
		return idx;
	if (array_reserve(&f->functions, &f->functions_cap, f->nfunctions + 1,
			  sizeof(*f->functions)) ||
	    hash_index_add(&f->function_index, h, (uint32_t)f->nfunctions))
		return -ENOMEM;
	f->functions[f->nfunctions] = (struct function){
		.module = NO_MODULE,
		.name = k.name,
		.file = file,
		.line = k.line,
		.resolved = pi->known,
		.python = true,
	};
	return (int64_t)f->nfunctions++;
}

static int frame_add(struct fin *f, uint32_t function, uint32_t module, uint64_t addr,
		     uint32_t depth, int64_t file, uint32_t line)
{
	if (array_reserve(&f->frames, &f->frames_cap, f->nframes + 1, sizeof(*f->frames)))
		return -ENOMEM;
	f->frames[f->nframes++] = (struct frame){
		.function = function,
		.module = module,
		.address = addr,
		.inline_depth = depth,
		.file = file,
		.line = line,
	};
	return 0;
}

/*
 * Within a module, equal strings are mostly the same pointer (the module interns them), so
 * the module's frames map to functions and file ids by pointer first: hashing a pointer is
 * cheaper than hashing the text. A miss falls back to the content (function_get, file_id).
 */
struct ptr_entry {
	const void *a, *b; /* name and definition file, or a source file and NULL */
	int64_t value;	   /* function index or source file id */
};

struct ptr_cache {
	struct ptr_entry *v;
	size_t n, cap;
	struct hash_index index;
};

struct ptr_key {
	const struct ptr_cache *c;
	const void *a, *b;
};

static bool ptr_eq(const void *ctx, uint32_t idx)
{
	const struct ptr_key *k = ctx;

	return k->c->v[idx].a == k->a && k->c->v[idx].b == k->b;
}

static uint64_t ptr_hash(const void *a, const void *b)
{
	return hash_combine(hash_mix((uint64_t)(uintptr_t)a), (uint64_t)(uintptr_t)b);
}

static int64_t ptr_cache_find(const struct ptr_cache *c, const void *a, const void *b)
{
	struct ptr_key k = { c, a, b };
	int64_t i = hash_index_find(&c->index, ptr_hash(a, b), ptr_eq, &k);

	return i < 0 ? -1 : c->v[i].value;
}

static int ptr_cache_add(struct ptr_cache *c, const void *a, const void *b, int64_t value)
{
	if (array_reserve(&c->v, &c->cap, c->n + 1, sizeof(*c->v)) ||
	    hash_index_add(&c->index, ptr_hash(a, b), (uint32_t)c->n))
		return -ENOMEM;
	c->v[c->n++] = (struct ptr_entry){ a, b, value };
	return 0;
}

static void ptr_cache_reset(struct ptr_cache *c)
{
	free(c->v);
	hash_index_release(&c->index);
	memset(c, 0, sizeof(*c));
	hash_index_init(&c->index);
}

static int64_t cached_function(struct fin *f, struct ptr_cache *c, uint32_t module,
			       const struct sym_frame *sf)
{
	int64_t fn = ptr_cache_find(c, sf->name, sf->decl_file);

	if (fn >= 0)
		return fn;
	fn = function_get(f, module, sf);
	if (fn >= 0 && ptr_cache_add(c, sf->name, sf->decl_file, fn))
		return -ENOMEM;
	return fn;
}

static int64_t cached_file(struct fin *f, struct ptr_cache *c, const char *path)
{
	int64_t id;

	if (!path)
		return 0;
	id = ptr_cache_find(c, path, NULL);
	if (id >= 0)
		return id;
	id = file_id(f, path);
	if (id >= 0 && ptr_cache_add(c, path, NULL, id))
		return -ENOMEM;
	return id;
}

static int unknown_frames_create(struct fin *f);
static int python_frames_create(struct fin *f);

int fin_build_frames(struct fin *f)
{
	struct ptr_cache fns, files;
	size_t i, a;
	uint32_t k;
	int ret = 0;

	f->module_frames = calloc(f->nmodules ? f->nmodules : 1, sizeof(*f->module_frames));
	if (!f->module_frames)
		return -ENOMEM;
	memset(&fns, 0, sizeof(fns));
	memset(&files, 0, sizeof(files));
	ptr_cache_reset(&fns);
	ptr_cache_reset(&files);
	for (i = 0; i < f->nmodules && !ret; i++) {
		struct module *m = &f->modules[i];

		f->module_frames[i] = malloc((m->naddrs ? m->naddrs : 1) * sizeof(uint32_t));
		if (!f->module_frames[i]) {
			ret = -ENOMEM;
			break;
		}
		/* Functions are per module: so is the cache. */
		ptr_cache_reset(&fns);
		for (a = 0; a < m->naddrs && !ret; a++) {
			f->module_frames[i][a] = (uint32_t)f->nframes;
			for (k = 0; k < m->count[a]; k++) {
				const struct sym_frame *sf = &m->frames[m->first[a] + k];
				int64_t fn = cached_function(f, &fns, (uint32_t)i, sf);
				int64_t file = cached_file(f, &files, sf->file);

				if (fn < 0 || file < 0 ||
				    frame_add(f, (uint32_t)fn, (uint32_t)i, m->addrs[a], k, file,
					      sf->line)) {
					ret = -ENOMEM;
					break;
				}
				/* Whatever runs the eval loop is the interpreter (libpython, or
				   an executable with the interpreter linked in). */
				if (k == 0 && f->functions[fn].eval)
					m->interpreter = true;
			}
		}
	}
	free(fns.v);
	hash_index_release(&fns.index);
	free(files.v);
	hash_index_release(&files.index);
	ret = ret ? ret : python_frames_create(f);
	return ret ? ret : unknown_frames_create(f);
}

/* ---- Python frames ------------------------------------------------------------------------ */

struct pyframe_key {
	const struct fin *f;
	uint32_t function, line;
	uint64_t offset;
};

static bool pyframe_eq(const void *ctx, uint32_t idx)
{
	const struct pyframe_key *k = ctx;
	const struct frame *fr = &k->f->frames[idx];

	return fr->function == k->function && fr->address == k->offset && fr->line == k->line;
}

/* The frame of one Python frame record of stream s. Index or -ENOMEM. */
static int64_t python_frame(struct fin *f, const struct stream *s, const struct raw_py_frame *p)
{
	struct pyframe_info pi;
	struct pyframe_key k = { f, 0, 0, p->offset };
	int64_t fn, file, idx;
	uint64_t h;

	pystream_frame_info(&s->py, p, &pi);
	fn = python_function_get(f, &pi);
	file = file_id(f, pi.file);
	if (fn < 0 || file < 0)
		return -ENOMEM;
	k.function = (uint32_t)fn;
	k.line = pi.line > 0 ? (uint32_t)pi.line : 0;
	h = hash_combine(hash_combine(hash_mix(k.function), k.offset), k.line);
	idx = hash_index_find(&f->python_frame_index, h, pyframe_eq, &k);
	if (idx >= 0)
		return idx;
	if (frame_add(f, k.function, NO_MODULE, k.offset, 0, file, k.line) ||
	    hash_index_add(&f->python_frame_index, h, (uint32_t)(f->nframes - 1)))
		return -ENOMEM;
	return (int64_t)(f->nframes - 1);
}

/* Within one stream, a (code, offset) met again maps to the same frame without a lookup. */
struct pyseen_key {
	const struct stream *s;
	const struct raw_py_frame *p;
};

static bool pyseen_eq(const void *ctx, uint32_t idx)
{
	const struct pyseen_key *k = ctx;
	const struct raw_py_frame *q = &k->s->py.frames[idx];

	return q->code_id == k->p->code_id && q->offset == k->p->offset &&
	       (q->flags & RAW_PY_FRAME_BAD_OFFSET) == (k->p->flags & RAW_PY_FRAME_BAD_OFFSET);
}

/*
 * The frames and functions of every Python frame of the sampled mixed stacks, made before
 * the tree (which then only reads them): s->py_frame_ids maps each to its frame.
 */
static int python_frames_create(struct fin *f)
{
	struct hash_index seen;
	size_t i, j;
	uint32_t k;
	int ret = 0;

	for (i = 0; i < f->nstreams && !ret; i++) {
		struct stream *s = &f->streams[i];

		if (!s->has_header || !s->py.nframes)
			continue;
		s->py_frame_ids = malloc(s->py.nframes * sizeof(*s->py_frame_ids));
		if (!s->py_frame_ids)
			return -ENOMEM;
		hash_index_init(&seen);
		for (j = 0; j < s->nstacks && !ret; j++) {
			const struct stack_rec *st = &s->stacks[j];

			if (st->loc == SIZE_MAX)
				continue;
			for (k = 0; k < st->npy; k++) {
				const struct raw_py_frame *p = &s->py.frames[st->py_off + k];
				struct pyseen_key sk = { s, p };
				uint64_t h = hash_combine(hash_combine(hash_mix(p->code_id),
								       p->offset),
							  p->flags & RAW_PY_FRAME_BAD_OFFSET);
				int64_t at = hash_index_find(&seen, h, pyseen_eq, &sk), fr;

				if (at >= 0) {
					s->py_frame_ids[st->py_off + k] = s->py_frame_ids[at];
					continue;
				}
				fr = python_frame(f, s, p);
				if (fr < 0 || hash_index_add(&seen, h, (uint32_t)(st->py_off + k))) {
					ret = -ENOMEM;
					break;
				}
				s->py_frame_ids[st->py_off + k] = (uint32_t)fr;
			}
		}
		hash_index_release(&seen);
	}
	return ret;
}

/* The frame of an address outside every known module: function "[unknown]". */
struct unknown_key {
	const struct fin *f;
	uint64_t addr;
};

static bool unknown_eq(const void *ctx, uint32_t idx)
{
	const struct unknown_key *k = ctx;

	return k->f->frames[idx].address == k->addr;
}

static int64_t unknown_frame(struct fin *f, uint64_t addr)
{
	static const struct sym_frame unknown = { .name = "[unknown]" };
	static const struct sym_frame damaged = { .name = FIN_DAMAGED_STACK_NAME };
	struct unknown_key k = { f, addr };
	uint64_t h = hash_mix(addr);
	int64_t idx = hash_index_find(&f->unknown_index, h, unknown_eq, &k), fn;

	if (idx >= 0)
		return idx;
	if (f->frames_final)
		return -EINVAL; /* cannot happen: unknown_frames_create() made them all */
	fn = function_get(f, NO_MODULE, addr == FIN_DAMAGED_STACK_ADDR ? &damaged : &unknown);
	if (fn < 0 || frame_add(f, (uint32_t)fn, NO_MODULE, addr, 0, 0, 0) ||
	    hash_index_add(&f->unknown_index, h, (uint32_t)(f->nframes - 1)))
		return -ENOMEM;
	return (int64_t)(f->nframes - 1);
}

/*
 * The frames of addresses outside every module, made here in the order the tree meets them
 * (streams, sampled stacks, outermost frame first): after this, building the tree adds no
 * frame or function, so those tables can be written while it is built.
 */
static int unknown_frames_create(struct fin *f)
{
	size_t i, j;
	uint32_t k;

	for (i = 0; i < f->nstreams; i++) {
		const struct stream *s = &f->streams[i];

		for (j = 0; s->has_header && j < s->nstacks; j++) {
			const struct stack_rec *st = &s->stacks[j];
			int64_t fr = 0;

			if (st->loc == SIZE_MAX)
				continue;
			if (!st->depth)
				fr = unknown_frame(f, 0);
			for (k = st->depth; k-- > 0 && fr >= 0;)
				if (s->locs[st->loc + k].module == NO_MODULE)
					fr = unknown_frame(f, s->locs[st->loc + k].addr);
			if (fr < 0)
				return (int)fr;
		}
	}
	f->frames_final = true;
	return 0;
}

/* ---- the calling-context tree ---------------------------------------------------------------- */

struct node_key {
	const struct fin *f;
	uint32_t parent, frame;
};

static bool node_eq(const void *ctx, uint32_t idx)
{
	const struct node_key *k = ctx;
	const struct node *n = &k->f->nodes[idx];

	return n->parent == k->parent && n->frame == k->frame;
}

static int64_t node_get(struct fin *f, uint32_t parent, uint32_t frame)
{
	struct node_key k = { f, parent, frame };
	uint64_t h = hash_combine(hash_mix(parent), frame);
	int64_t idx = hash_index_find(&f->node_index, h, node_eq, &k);

	if (idx >= 0)
		return idx;
	if (array_reserve(&f->nodes, &f->nodes_cap, f->nnodes + 1, sizeof(*f->nodes)) ||
	    hash_index_add(&f->node_index, h, (uint32_t)f->nnodes))
		return -ENOMEM;
	f->nodes[f->nnodes] = (struct node){
		.parent = parent,
		.frame = frame,
		.depth = parent == UINT32_MAX ? 0 : f->nodes[parent].depth + 1,
	};
	return (int64_t)f->nnodes++;
}

/* The first frame and frame count of native frame k of a located stack. */
static int native_frames(struct fin *f, const struct stream *s, const struct stack_rec *st,
			 uint32_t k, uint32_t *first, uint32_t *count)
{
	const struct loc *l = &s->locs[st->loc + k];

	if (l->module == NO_MODULE) {
		int64_t fr = unknown_frame(f, l->addr);

		if (fr < 0)
			return (int)fr;
		*first = (uint32_t)fr;
		*count = 1;
	} else {
		const struct module *m = &f->modules[l->module];
		int64_t ai = module_addr_index(m, l->addr);

		if (ai < 0)
			return -EINVAL; /* cannot happen: every address was wanted */
		*first = f->module_frames[l->module][ai];
		*count = m->count[ai];
	}
	return 0;
}

/*
 * A mixed stack: every _PyEval_EvalFrameDefault frame is followed (inwards) by the Python
 * frames it ran, every frame is kept (PYMERGE_ALL); the report hides the interpreter's.
 */
static int stack_node_python(struct fin *f, struct stream *s, struct stack_rec *st)
{
	/* 48 KiB: the tree is built on the caller's (main) thread */
	uint32_t native[RAW_MAX_DEPTH], pyflags[RAW_PY_MAX_FRAMES];
	struct pymerge_item items[RAW_MAX_DEPTH + RAW_PY_MAX_FRAMES];
	uint32_t parent = UINT32_MAX, k, d, first, count;
	size_t n, i;
	int64_t nd;
	int ret;

	for (k = 0; k < st->depth; k++) {
		const struct loc *l = &s->locs[st->loc + k];

		if ((ret = native_frames(f, s, st, k, &first, &count)))
			return ret;
		native[k] = 0;
		/* The real function at the address (inline depth 0) runs the eval loop. */
		if (f->functions[f->frames[first].function].eval)
			native[k] |= PYMERGE_NATIVE_EVAL;
		if (l->module != NO_MODULE && f->modules[l->module].interpreter)
			native[k] |= PYMERGE_NATIVE_INTERP;
	}
	for (k = 0; k < st->npy; k++)
		pyflags[k] = s->py.frames[st->py_off + k].flags;
	n = pymerge_stack(native, st->depth, pyflags, st->npy, PYMERGE_ALL, items,
			  RAW_MAX_DEPTH + RAW_PY_MAX_FRAMES, NULL);
	/* Innermost first: the tree grows from the outermost. */
	for (i = n; i-- > 0;) {
		if (items[i].python) {
			first = s->py_frame_ids[st->py_off + items[i].index];
			count = 1;
		} else if ((ret = native_frames(f, s, st, items[i].index, &first, &count))) {
			return ret;
		}
		for (d = 0; d < count; d++) {
			nd = node_get(f, parent, first + d);
			if (nd < 0)
				return (int)nd;
			parent = (uint32_t)nd;
		}
	}
	st->node = parent;
	return 0;
}

static int stack_node(struct fin *f, struct stream *s, struct stack_rec *st)
{
	uint32_t parent = UINT32_MAX, k, d;
	int64_t n;

	if (st->npy)
		return stack_node_python(f, s, st);
	if (!st->depth) {
		int64_t fr = unknown_frame(f, 0);

		if (fr < 0)
			return (int)fr;
		n = node_get(f, UINT32_MAX, (uint32_t)fr);
		if (n < 0)
			return (int)n;
		st->node = (uint32_t)n;
		return 0;
	}
	/* Raw stacks are innermost first; the tree grows from the outermost frame. */
	for (k = st->depth; k-- > 0;) {
		uint32_t first, count;
		int ret = native_frames(f, s, st, k, &first, &count);

		if (ret)
			return ret;
		for (d = 0; d < count; d++) {
			n = node_get(f, parent, first + d);
			if (n < 0)
				return (int)n;
			parent = (uint32_t)n;
		}
	}
	st->node = parent;
	return 0;
}

struct agg_key {
	const struct fin *f;
	uint32_t thread, node;
};

static bool agg_eq(const void *ctx, uint32_t idx)
{
	const struct agg_key *k = ctx;
	const struct agg *a = &k->f->aggs[idx];

	return a->thread == k->thread && a->node == k->node;
}

static int64_t agg_get(struct fin *f, uint32_t thread, uint32_t node)
{
	struct agg_key k = { f, thread, node };
	uint64_t h = hash_combine(hash_mix(thread), node);
	int64_t idx = hash_index_find(&f->agg_index, h, agg_eq, &k);

	if (idx >= 0)
		return idx;
	if (array_reserve(&f->aggs, &f->aggs_cap, f->naggs + 1, sizeof(*f->aggs)) ||
	    hash_index_add(&f->agg_index, h, (uint32_t)f->naggs))
		return -ENOMEM;
	memset(&f->aggs[f->naggs], 0, sizeof(*f->aggs));
	f->aggs[f->naggs].thread = thread;
	f->aggs[f->naggs].node = node;
	return (int64_t)f->naggs++;
}

/* Stacks already placed in the tree, by their located frames: threads share most stacks. */
struct placed {
	const struct loc *locs;
	uint32_t depth;
	uint32_t node;
};

struct placed_set {
	struct placed *v;
	size_t n, cap;
	struct hash_index index;
};

struct placed_key {
	const struct placed_set *set;
	const struct loc *locs;
	uint32_t depth;
};

static bool placed_eq(const void *ctx, uint32_t idx)
{
	const struct placed_key *k = ctx;
	const struct placed *p = &k->set->v[idx];
	uint32_t i;

	if (p->depth != k->depth)
		return false;
	for (i = 0; i < k->depth; i++)
		if (p->locs[i].module != k->locs[i].module || p->locs[i].addr != k->locs[i].addr)
			return false;
	return true;
}

static uint64_t locs_hash(const struct loc *locs, uint32_t depth)
{
	uint64_t h = hash_mix(depth);
	uint32_t i;

	for (i = 0; i < depth; i++)
		h = hash_combine(hash_combine(h, locs[i].module), locs[i].addr);
	return h;
}

/* The leaf of st: found among the stacks placed already, else placed now. */
static int stack_place(struct fin *f, struct placed_set *set, struct stream *s,
		       struct stack_rec *st)
{
	const struct loc *locs = s->locs + st->loc;
	struct placed_key k = { set, locs, st->depth };
	uint64_t h = locs_hash(locs, st->depth);
	int64_t i;
	int ret;

	/* Mixed stacks differ by their Python frames too: placed one by one. */
	if (st->npy)
		return stack_node(f, s, st);
	i = hash_index_find(&set->index, h, placed_eq, &k);
	if (i >= 0) {
		st->node = set->v[i].node;
		return 0;
	}
	ret = stack_node(f, s, st);
	if (ret)
		return ret;
	if (array_reserve(&set->v, &set->cap, set->n + 1, sizeof(*set->v)) ||
	    hash_index_add(&set->index, h, (uint32_t)set->n))
		return -ENOMEM;
	set->v[set->n++] = (struct placed){ locs, st->depth, st->node };
	return 0;
}

int fin_build_tree(struct fin *f)
{
	struct placed_set set = { 0 };
	size_t i, j;
	int ret = 0;

	/* Samples were counted per stack when located: aggregate stacks, not samples. */
	for (i = 0; i < f->nstreams; i++) {
		struct stream *s = &f->streams[i];
		struct thread *t;
		uint64_t interval;

		if (!s->has_header)
			continue;
		t = &f->threads[s->thread];
		interval = s->hdr.interval_ns ? s->hdr.interval_ns : f->interval_ns;
		for (j = 0; j < s->nstacks; j++) {
			struct stack_rec *st = &s->stacks[j];
			const struct frame *leaf;
			int64_t ai;
			struct agg *a;

			if (st->loc == SIZE_MAX)
				continue; /* never sampled */
			ret = stack_place(f, &set, s, st);
			if (ret)
				goto out;
			ai = agg_get(f, s->thread, st->node);
			if (ai < 0) {
				ret = (int)ai;
				goto out;
			}
			a = &f->aggs[ai];
			a->count += st->samples;
			a->weight += st->weight;
			a->time_ns += st->weight * interval;
			t->samples += st->samples;
			t->weight += st->weight;
			t->time_ns += st->weight * interval;
			if (st->npy)
				f->samples_python += st->samples;
			f->samples_total += st->samples;
			f->weight_total += st->weight;
			leaf = &f->frames[f->nodes[st->node].frame];
			if (f->functions[leaf->function].resolved)
				f->samples_func += st->samples;
			if (leaf->file)
				f->samples_line += st->samples;
			if (leaf->module != NO_MODULE)
				f->modules[leaf->module].leaf_samples += st->samples;
		}
	}
out:
	free(set.v);
	hash_index_release(&set.index);
	return ret;
}
