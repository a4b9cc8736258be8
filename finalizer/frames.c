/* SPDX-License-Identifier: MIT */
/* Frames and functions: the global tables the tree points into, made from the modules' chains,
   the Python frames of mixed stacks and the addresses outside every module. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "finalizer/finalize-private.h"

/* ---- functions ----------------------------------------------------------------------------- */

struct function_key {
	struct fin *f;
	uint32_t module;
	const char *name; /* interned: compared by pointer */
	const char *mangled;
	int64_t file;
	bool python; /* Python functions are also told apart by their first line */
	uint32_t line;
	bool resolved;
	bool range;
	bool given;
	bool method;
};

static bool function_eq(const void *ctx, uint32_t idx)
{
	const struct function_key *k = ctx;
	const struct function *fn = &k->f->functions[idx];

	return fn->module == k->module && fn->name == k->name && fn->file == k->file &&
	       fn->python == k->python && (!k->python || fn->line == k->line);
}

static int function_make(const void *ctx, void *elem)
{
	const struct function_key *k = ctx;

	*(struct function *)elem = (struct function){
		.module = k->module,
		.name = k->name,
		.mangled = k->mangled,
		.file = k->file,
		.line = k->line,
		.resolved = k->resolved,
		.range = k->range,
		.method = k->method,
		.python = k->python,
		.eval = !k->python && pymerge_is_eval(k->name),
		.given = k->given,
	};
	return 0;
}

static int64_t function_get(struct fin *f, const struct function_key *k, uint64_t h)
{
	return HASH_INDEX_GET(&f->function_index, h, function_eq, function_make, k, f->functions,
			      f->nfunctions, f->functions_cap);
}

static int64_t file_id(struct fin *f, const char *path)
{
	int64_t id;

	if (!path)
		return 0;
	id = str_pool_intern(&f->files, path);
	return id < 0 ? id : id + 1;
}

/* The function (module, name, definition file) of a module's frame. Index or -ENOMEM. */
static int64_t native_function(struct fin *f, uint32_t module, const struct sym_frame *sf)
{
	struct function_key k = { .f = f,
				  .module = module,
				  .line = sf->decl_line,
				  .resolved = sf->resolved,
				  .range = sf->range,
				  .method = sf->method };

	k.name = str_pool_get(&f->strings, sf->name);
	k.mangled = str_pool_get(&f->strings, sf->mangled);
	k.file = file_id(f, sf->decl_file);
	if (!k.name || (sf->mangled && !k.mangled) || k.file < 0)
		return -ENOMEM;
	return function_get(f, &k,
			    hash_combine(hash_combine(hash_mix(module),
						      (uint64_t)(uintptr_t)k.name),
					 (uint64_t)k.file));
}

int64_t fin_function_given(struct fin *f, uint32_t module, const char *name, int64_t file,
			   uint32_t line)
{
	struct function_key k = { .f = f,
				  .module = module,
				  .file = file,
				  .line = line,
				  .resolved = true,
				  .given = true };

	k.name = str_pool_get(&f->strings, name);
	if (!k.name)
		return -ENOMEM;
	return function_get(f, &k,
			    hash_combine(hash_combine(hash_mix(module),
						      (uint64_t)(uintptr_t)k.name),
					 (uint64_t)k.file));
}

/* The Python function (name, file, first line). Index or -ENOMEM. */
static int64_t python_function(struct fin *f, const struct pyframe_info *pi)
{
	struct function_key k = { .f = f,
				  .module = NO_MODULE,
				  .python = true,
				  .line = (uint32_t)pi->firstlineno,
				  .resolved = pi->known };

	k.name = str_pool_get(&f->strings, pi->name);
	k.file = file_id(f, pi->file);
	if (!k.name || k.file < 0)
		return -ENOMEM;
	return function_get(f, &k,
			    hash_combine(hash_combine(hash_combine(hash_mix(NO_MODULE),
								   (uint64_t)(uintptr_t)k.name),
						      (uint64_t)k.file),
					 k.line));
}

/* ---- frames of the modules' chains --------------------------------------------------------- */

static int frame_add(struct fin *f, uint32_t function, uint32_t module, uint64_t addr,
		     uint32_t depth, int64_t file, uint32_t line)
{
	if (GROW(f->frames, f->nframes + 1, f->frames_cap))
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
 * cheaper than hashing the text. A miss falls back to the content (native_function,
 * file_id).
 */
struct ptr_entry {
	const void *a, *b; /* name and definition file, or a source file and NULL */
	int64_t value;     /* function index or source file id */
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

static int ptr_make(const void *ctx, void *elem)
{
	const struct ptr_key *k = ctx;

	*(struct ptr_entry *)elem = (struct ptr_entry){ k->a, k->b, -1 };
	return 0;
}

/* The entry of (a, b): its value is -1 when new, for the caller to set. NULL: -ENOMEM. */
static struct ptr_entry *ptr_cache_get(struct ptr_cache *c, const void *a, const void *b)
{
	struct ptr_key k = { c, a, b };
	int64_t i = HASH_INDEX_GET(&c->index,
				   hash_combine(hash_mix((uint64_t)(uintptr_t)a),
						(uint64_t)(uintptr_t)b),
				   ptr_eq, ptr_make, &k, c->v, c->n, c->cap);

	return i < 0 ? NULL : &c->v[i];
}

static void ptr_cache_release(struct ptr_cache *c)
{
	free(c->v);
	hash_index_release(&c->index);
	memset(c, 0, sizeof(*c));
}

static int64_t cached_function(struct fin *f, struct ptr_cache *c, uint32_t module,
			       const struct sym_frame *sf)
{
	struct ptr_entry *e = ptr_cache_get(c, sf->name, sf->decl_file);

	if (!e)
		return -ENOMEM;
	if (e->value < 0)
		e->value = native_function(f, module, sf);
	return e->value;
}

static int64_t cached_file(struct fin *f, struct ptr_cache *c, const char *path)
{
	struct ptr_entry *e;

	if (!path)
		return 0;
	e = ptr_cache_get(c, path, NULL);
	if (!e)
		return -ENOMEM;
	if (e->value < 0)
		e->value = file_id(f, path);
	return e->value;
}

/* The frames of every resolved address of every module, in module and address order. */
static int module_frames_create(struct fin *f)
{
	struct ptr_cache fns = { 0 }, files = { 0 };
	size_t i, a;
	uint32_t k;
	int ret = 0;

	f->module_frames = calloc(f->nmodules ? f->nmodules : 1, sizeof(*f->module_frames));
	if (!f->module_frames)
		return -ENOMEM;
	for (i = 0; i < f->nmodules && !ret; i++) {
		struct module *m = &f->modules[i];

		f->module_frames[i] = malloc((m->naddrs ? m->naddrs : 1) * sizeof(uint32_t));
		if (!f->module_frames[i]) {
			ret = -ENOMEM;
			break;
		}
		/* Functions are per module: so is the cache. */
		ptr_cache_release(&fns);
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
	ptr_cache_release(&fns);
	ptr_cache_release(&files);
	return ret;
}

/* ---- Python frames ------------------------------------------------------------------------ */

struct pyframe_key {
	const struct fin *f;
	uint32_t function, line;
	uint64_t offset;
	int64_t file;
};

static bool pyframe_eq(const void *ctx, uint32_t idx)
{
	const struct pyframe_key *k = ctx;
	const struct frame *fr = &k->f->frames[idx];

	return fr->function == k->function && fr->address == k->offset && fr->line == k->line;
}

static int pyframe_make(const void *ctx, void *elem)
{
	const struct pyframe_key *k = ctx;

	*(struct frame *)elem = (struct frame){
		.function = k->function,
		.module = NO_MODULE,
		.address = k->offset,
		.file = k->file,
		.line = k->line,
	};
	return 0;
}

/* The frame of one Python frame record of stream s. Index or -ENOMEM. */
static int64_t python_frame(struct fin *f, const struct stream *s, const struct raw_py_frame *p)
{
	struct pyframe_info pi;
	struct pyframe_key k = { .f = f, .offset = p->offset };
	int64_t fn;

	pystream_frame_info(&s->py, p, &pi);
	fn = python_function(f, &pi);
	k.file = file_id(f, pi.file);
	if (fn < 0 || k.file < 0)
		return -ENOMEM;
	k.function = (uint32_t)fn;
	k.line = pi.line > 0 ? (uint32_t)pi.line : 0;
	return HASH_INDEX_GET(&f->python_frame_index,
			      hash_combine(hash_combine(hash_mix(k.function), k.offset), k.line),
			      pyframe_eq, pyframe_make, &k, f->frames, f->nframes, f->frames_cap);
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
				uint64_t h =
					hash_combine(hash_combine(hash_mix(p->code_id), p->offset),
						     p->flags & RAW_PY_FRAME_BAD_OFFSET);
				int64_t at = hash_index_find(&seen, h, pyseen_eq, &sk), fr;

				/* The frames of one stream are not copied: only indexed. */
				if (at >= 0) {
					s->py_frame_ids[st->py_off + k] = s->py_frame_ids[at];
					continue;
				}
				fr = python_frame(f, s, p);
				if (fr < 0 ||
				    hash_index_add(&seen, h, (uint32_t)(st->py_off + k))) {
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

/* ---- frames of addresses outside every module ---------------------------------------------- */

struct unknown_key {
	struct fin *f;
	uint64_t addr;
};

static bool unknown_eq(const void *ctx, uint32_t idx)
{
	const struct unknown_key *k = ctx;

	return k->f->frames[idx].address == k->addr;
}

static int unknown_make(const void *ctx, void *elem)
{
	static const struct sym_frame unknown = { .name = "[unknown]" };
	static const struct sym_frame damaged = { .name = FIN_DAMAGED_STACK_NAME };
	static const struct sym_frame truncated = { .name = FIN_TRUNCATED_STACK_NAME };
	static const struct sym_frame own = { .name = FIN_AGENT_STACK_NAME };
	static const struct sym_frame gc = { .name = FIN_GC_NAME };
	const struct unknown_key *k = ctx;
	struct sym_frame callee = { .method = true };
	int64_t fn;

	if (k->addr >= FIN_CALLEE_ADDR && k->addr - FIN_CALLEE_ADDR < k->f->ncallee_names)
		callee.name = k->f->callee_names[k->addr - FIN_CALLEE_ADDR];
	/* a callee the method tables named in some sample: that function, one row for both */
	for (fn = 0; callee.name && fn < (int64_t)k->f->nfunctions; fn++)
		if (k->f->functions[fn].method && k->f->functions[fn].name == callee.name)
			break;
	if (!callee.name || fn == (int64_t)k->f->nfunctions)
		fn = native_function(k->f, NO_MODULE,
				     callee.name                           ? &callee
				     : k->addr == FIN_DAMAGED_STACK_ADDR   ? &damaged
				     : k->addr == FIN_TRUNCATED_STACK_ADDR ? &truncated
				     : k->addr == FIN_AGENT_STACK_ADDR     ? &own
				     : k->addr == FIN_GC_ADDR              ? &gc
									   : &unknown);

	if (fn < 0)
		return (int)fn;
	*(struct frame *)elem = (struct frame){
		.function = (uint32_t)fn,
		.module = NO_MODULE,
		.address = k->addr,
	};
	return 0;
}

/* The frame of an address outside every known module: function "[unknown]". */
static int64_t unknown_frame_get(struct fin *f, uint64_t addr)
{
	struct unknown_key k = { f, addr };

	return HASH_INDEX_GET(&f->unknown_index, hash_mix(addr), unknown_eq, unknown_make, &k,
			      f->frames, f->nframes, f->frames_cap);
}

uint32_t fin_unknown_frame(const struct fin *f, uint64_t addr)
{
	/* Only unknown_eq() reads the key: it does not write through k.f. */
	const struct unknown_key k = { (struct fin *)f, addr };
	int64_t idx = hash_index_find(&f->unknown_index, hash_mix(addr), unknown_eq, &k);

	if (idx < 0)
		BUG("no frame for the address 0x%" PRIx64 " outside every module: "
		    "fin_build_frames() makes one for each address of a sampled stack",
		    addr);
	return (uint32_t)idx;
}

/*
 * The frames of a stream's callees (RAW_REC_PY_CALLEE): one per distinct name over all
 * streams, at FIN_CALLEE_ADDR + its index in f->callee_names.
 */
static int callee_frames_create(struct fin *f, struct stream *s)
{
	struct pystream *ps = &s->py;
	size_t id, k;

	if (!ps->ncallees)
		return 0;
	if (GROW(ps->callee_frame, ps->ncallees, ps->callee_frame_cap))
		return -ENOMEM;
	for (id = 0; id < ps->ncallees; id++) {
		const char *name =
			ps->callees[id] ? str_pool_get(&f->strings, ps->callees[id]) : NULL;
		int64_t fr;

		ps->callee_frame[id] = UINT32_MAX;
		if (!ps->callees[id])
			continue;
		if (!name)
			return -ENOMEM;
		for (k = 0; k < f->ncallee_names && f->callee_names[k] != name; k++)
			;
		if (k == FIN_CALLEE_MAX)
			continue;
		if (k == f->ncallee_names) {
			if (GROW(f->callee_names, k + 1, f->callee_names_cap))
				return -ENOMEM;
			f->callee_names[f->ncallee_names++] = name;
		}
		fr = unknown_frame_get(f, FIN_CALLEE_ADDR + k);
		if (fr < 0)
			return (int)fr;
		ps->callee_frame[id] = (uint32_t)fr;
	}
	return 0;
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
		struct stream *s = &f->streams[i];
		int ret = s->has_header ? callee_frames_create(f, s) : 0;

		if (ret)
			return ret;
		for (j = 0; s->has_header && j < s->nstacks; j++) {
			const struct stack_rec *st = &s->stacks[j];
			int64_t fr = 0;

			if (st->loc == SIZE_MAX)
				continue;
			if (!st->depth)
				fr = unknown_frame_get(f, 0);
			if (st->flags & RAW_STACK_TRUNCATED)
				fr = unknown_frame_get(f, FIN_TRUNCATED_STACK_ADDR);
			if (st->npy && fr >= 0 &&
			    (s->py.frames[st->py_off].flags & RAW_PY_FRAME_GC))
				fr = unknown_frame_get(f, FIN_GC_ADDR);
			for (k = st->depth; k-- > 0 && fr >= 0;)
				if (s->locs[st->loc + k].module == NO_MODULE)
					fr = unknown_frame_get(f, s->locs[st->loc + k].addr);
			if (fr < 0)
				return (int)fr;
		}
	}
	f->frames_final = true;
	return 0;
}

int fin_build_frames(struct fin *f)
{
	int ret = module_frames_create(f);

	ret = ret ? ret : python_frames_create(f);
	ret = ret ? ret : unknown_frames_create(f);
	return ret ? ret : fin_name_runtime_frames(f);
}
