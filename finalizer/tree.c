/* SPDX-License-Identifier: MIT */
/* The calling-context tree: every sampled stack placed as a path of nodes (one per frame), and
   the per-(thread, node, metric, context) aggregates. Reads the frames and functions. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/sat.h"
#include "finalizer/finalize-private.h"
#include "finalizer/metrics.h"

/* ---- nodes ------------------------------------------------------------------------------- */

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

static int node_make(const void *ctx, void *elem)
{
	const struct node_key *k = ctx;

	*(struct node *)elem = (struct node){
		.parent = k->parent,
		.frame = k->frame,
		.depth = k->parent == UINT32_MAX ? 0 : k->f->nodes[k->parent].depth + 1,
	};
	return 0;
}

/* The child of parent (UINT32_MAX: a root) for frame, added when new. Index or -ENOMEM. */
static int64_t node_get(struct fin *f, uint32_t parent, uint32_t frame)
{
	struct node_key k = { f, parent, frame };

	return HASH_INDEX_GET(&f->node_index, hash_combine(hash_mix(parent), frame), node_eq,
			      node_make, &k, f->nodes, f->nnodes, f->nodes_cap);
}

/* The first frame and frame count of native frame k of a located stack. */
static void native_frames(const struct fin *f, const struct stream *s, const struct stack_rec *st,
			  uint32_t k, uint32_t *first, uint32_t *count)
{
	const struct loc *l = &s->locs[st->loc + k];
	const struct module *m;
	int64_t ai;

	if (l->module == NO_MODULE) {
		*first = fin_unknown_frame(f, l->addr);
		*count = 1;
		return;
	}
	m = &f->modules[l->module];
	ai = module_addr_index(m, l->addr);
	if (ai < 0)
		BUG("address 0x%" PRIx64 " of module '%s' was not resolved: stack_locate() asks "
		    "for every address of a sampled stack",
		    l->addr, m->path);
	*first = f->module_frames[l->module][ai];
	*count = m->count[ai];
}

/*
 * Grow the path from parent by the count frames from first. The last node, or -ENOMEM. A
 * frame of a function pfinalize named (function.given) right below a frame of the same
 * function adds no node: "[OpenMP barrier wait]" is one node however many of the runtime's
 * unnamed functions it took to wait.
 */
static int64_t path_extend(struct fin *f, uint32_t parent, uint32_t first, uint32_t count)
{
	int64_t n = parent;
	uint32_t d;

	for (d = 0; d < count && n >= 0; d++) {
		uint32_t fn = f->frames[first + d].function;

		if (n != UINT32_MAX && f->functions[fn].given &&
		    f->frames[f->nodes[n].frame].function == fn)
			continue;
		n = node_get(f, (uint32_t)n, first + d);
	}
	return n;
}

/* Where st's path starts: a root, or under "[truncated stack]" when the unwinder cut it. */
static int64_t stack_root(struct fin *f, const struct stack_rec *st)
{
	if (!(st->flags & RAW_STACK_TRUNCATED))
		return UINT32_MAX;
	return node_get(f, UINT32_MAX, fin_unknown_frame(f, FIN_TRUNCATED_STACK_ADDR));
}

/*
 * The frame of the C callable the Python frame items[i] stands calling (RAW_PY_FRAME_CALLEE),
 * or UINT32_MAX: none, or one of the native frames it runs (up to the next Python frame) has
 * its name already (the method tables named it).
 */
static uint32_t callee_frame(const struct fin *f, const struct stream *s,
			     const struct stack_rec *st, const struct pymerge_item *items, size_t i)
{
	const struct raw_py_frame *pf = &s->py.frames[st->py_off + items[i].index];
	const char *name;
	uint32_t fr, first, count, c;

	if (!(pf->flags & RAW_PY_FRAME_CALLEE) || pf->callee > s->py.ncallees || !pf->callee ||
	    !s->py.callee_frame)
		return UINT32_MAX;
	fr = s->py.callee_frame[pf->callee - 1];
	if (fr == UINT32_MAX)
		return fr;
	name = f->functions[f->frames[fr].function].name;
	while (i-- > 0 && !items[i].python) {
		native_frames(f, s, st, items[i].index, &first, &count);
		for (c = 0; c < count; c++)
			if (f->functions[f->frames[first + c].function].name == name)
				return UINT32_MAX;
	}
	return fr;
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
	uint32_t k, first, count;
	int64_t nd = stack_root(f, st);
	size_t n, i;

	for (k = 0; k < st->depth; k++) {
		const struct loc *l = &s->locs[st->loc + k];

		native_frames(f, s, st, k, &first, &count);
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
	for (i = n; i-- > 0 && nd >= 0;) {
		if (items[i].python) {
			first = s->py_frame_ids[st->py_off + items[i].index];
			count = 1;
		} else {
			native_frames(f, s, st, items[i].index, &first, &count);
		}
		nd = path_extend(f, (uint32_t)nd, first, count);
		/* the C callable the line calls, between it and the native frames below */
		if (items[i].python && nd >= 0 &&
		    (first = callee_frame(f, s, st, items, i)) != UINT32_MAX)
			nd = node_get(f, (uint32_t)nd, first);
		/* the innermost line started a collection: "[gc]" under it, the collector's
		   native frames under that */
		if (items[i].python && items[i].index == 0 && nd >= 0 &&
		    (s->py.frames[st->py_off].flags & RAW_PY_FRAME_GC))
			nd = node_get(f, (uint32_t)nd, fin_unknown_frame(f, FIN_GC_ADDR));
	}
	if (nd < 0)
		return (int)nd;
	st->node = (uint32_t)nd;
	return 0;
}

static int stack_node(struct fin *f, struct stream *s, struct stack_rec *st)
{
	uint32_t k, first, count;
	int64_t n = stack_root(f, st);

	if (st->npy)
		return stack_node_python(f, s, st);
	if (!st->depth && n >= 0)
		n = node_get(f, (uint32_t)n, fin_unknown_frame(f, 0));
	/* Raw stacks are innermost first; the tree grows from the outermost frame. */
	for (k = st->depth; k-- > 0 && n >= 0;) {
		native_frames(f, s, st, k, &first, &count);
		n = path_extend(f, (uint32_t)n, first, count);
	}
	if (n < 0)
		return (int)n;
	st->node = (uint32_t)n;
	return 0;
}

/* ---- stacks placed once ------------------------------------------------------------------ */

/* Stacks already placed in the tree, by their located frames: threads share most stacks. */
struct placed {
	const struct loc *locs;
	uint32_t depth;
	uint32_t flags; /* RAW_STACK_TRUNCATED: placed under its root */
	uint32_t node;  /* UINT32_MAX until placed */
};

struct placed_set {
	struct placed *v;
	size_t n, cap;
	struct hash_index index;
};

struct placed_key {
	const struct placed_set *set;
	const struct loc *locs;
	uint32_t depth, flags;
};

static bool placed_eq(const void *ctx, uint32_t idx)
{
	const struct placed_key *k = ctx;
	const struct placed *p = &k->set->v[idx];
	uint32_t i;

	if (p->depth != k->depth || p->flags != k->flags)
		return false;
	for (i = 0; i < k->depth; i++)
		if (p->locs[i].module != k->locs[i].module || p->locs[i].addr != k->locs[i].addr)
			return false;
	return true;
}

static int placed_make(const void *ctx, void *elem)
{
	const struct placed_key *k = ctx;

	*(struct placed *)elem = (struct placed){ k->locs, k->depth, k->flags, UINT32_MAX };
	return 0;
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
	struct placed_key k = { set, locs, st->depth, st->flags & RAW_STACK_TRUNCATED };
	int64_t i;
	int ret;

	/* Mixed stacks differ by their Python frames too: placed one by one. */
	if (st->npy)
		return stack_node(f, s, st);
	i = HASH_INDEX_GET(&set->index, locs_hash(locs, st->depth), placed_eq, placed_make, &k,
			   set->v, set->n, set->cap);
	if (i < 0)
		return (int)i;
	if (set->v[i].node == UINT32_MAX) {
		ret = stack_node(f, s, st);
		if (ret)
			return ret;
		set->v[i].node = st->node;
	}
	st->node = set->v[i].node;
	return 0;
}

/* ---- aggregates -------------------------------------------------------------------------- */

struct agg_key {
	const struct fin *f;
	uint32_t thread, node, metric, context;
};

static bool agg_eq(const void *ctx, uint32_t idx)
{
	const struct agg_key *k = ctx;
	const struct agg *a = &k->f->aggs[idx];

	return a->thread == k->thread && a->node == k->node && a->metric == k->metric &&
	       a->context == k->context;
}

static int agg_make(const void *ctx, void *elem)
{
	const struct agg_key *k = ctx;

	*(struct agg *)elem = (struct agg){
		.thread = k->thread, .node = k->node, .metric = k->metric, .context = k->context
	};
	return 0;
}

/* Add count events of value to (thread, node, metric, context). 0 or -ENOMEM. */
static int agg_add(struct fin *f, uint32_t thread, uint32_t node, uint32_t metric, uint32_t context,
		   uint64_t count, int64_t value)
{
	struct agg_key k = { f, thread, node, metric, context };
	uint64_t h = hash_combine(hash_combine(hash_mix(thread), node),
				  (uint64_t)metric << 32 | context);
	int64_t i = HASH_INDEX_GET(&f->agg_index, h, agg_eq, agg_make, &k, f->aggs, f->naggs,
				   f->aggs_cap);
	struct agg *a;

	if (i < 0)
		return (int)i;
	a = &f->aggs[i];
	a->count += count;
	/* Values of damaged or hostile streams must not wrap: they stop at the bounds. */
	if (__builtin_add_overflow(a->value, value, &a->value))
		a->value = value > 0 ? INT64_MAX : INT64_MIN;
	f->metrics[metric].events += count;
	return 0;
}

/* Each sampled stack's CPU Time (and Spin Time when it spins), and the summary's counts. */
static int add_samples(struct fin *f, struct stream *s, struct stack_rec *st)
{
	struct thread *t = &f->threads[s->thread];
	uint64_t interval = s->hdr.interval_ns ? s->hdr.interval_ns : f->interval_ns;
	const struct frame *leaf;
	int64_t spin;
	int ret;

	/* Bounded per stream (FIN_MAX_STREAM_NS); their sums saturate. */
	uint64_t ns = sat_mul_u64(st->weight, interval);

	/* In a stream with regions or parts of others' work its samples go one by one
	   (fin_build_tree): their contexts differ. */
	if (!s->nspans && !s->nworks) {
		ret = agg_add(f, s->thread, st->node, 0, 0, st->samples,
			      ns > INT64_MAX ? INT64_MAX : (int64_t)ns);
		if (ret)
			return ret;
	}
	t->samples += st->samples;
	t->weight = sat_add_u64(t->weight, st->weight);
	t->time_ns = sat_add_u64(t->time_ns, ns);
	if (st->npy)
		f->samples_python += st->samples;
	if (st->flags & RAW_STACK_TRUNCATED)
		f->samples_truncated += st->samples;
	f->samples_total += st->samples;
	f->weight_total = sat_add_u64(f->weight_total, st->weight);
	leaf = &f->frames[f->nodes[st->node].frame];
	if (f->functions[leaf->function].resolved)
		f->samples_func += st->samples;
	else if (f->functions[leaf->function].range)
		f->samples_range += st->samples;
	if (leaf->file)
		f->samples_line += st->samples;
	if (leaf->module != NO_MODULE)
		f->modules[leaf->module].leaf_samples += st->samples;
	if (!fin_node_spins(f, st->node))
		return 0;
	if (!f->spin_metric) {
		spin = fin_metrics_standard(f, METRIC_SPIN_TIME);
		if (spin < 0)
			return (int)spin;
		f->spin_metric = (uint32_t)spin;
	}
	f->spin_samples += st->samples;
	t->spin_ns += st->weight * interval; /* as time_ns, which it is part of */
	if (f->spin_metric == UINT32_MAX || s->nspans || s->nworks)
		return 0;
	return agg_add(f, s->thread, st->node, f->spin_metric, 0, st->samples,
		       ns > INT64_MAX ? INT64_MAX : (int64_t)ns);
}

/* The samples of a stream with regions or parts of others' work, each with its context: CPU
   Time, and Spin Time. */
static int add_samples_in_regions(struct fin *f, struct stream *s)
{
	uint64_t interval = s->hdr.interval_ns ? s->hdr.interval_ns : f->interval_ns;
	size_t i;
	int ret = 0;

	for (i = 0; i < s->nsamples && !ret; i++) {
		const struct sample_rec *r = &s->samples[i];
		uint32_t node;
		uint64_t ns;
		int64_t value;

		if (r->stack == NO_STACK)
			continue;
		node = s->stacks[r->stack].node;
		ns = sat_mul_u64(r->weight, interval);
		value = ns > INT64_MAX ? INT64_MAX : (int64_t)ns;
		ret = agg_add(f, s->thread, node, 0, r->context, 1, value);
		if (!ret && f->spin_metric && f->spin_metric != UINT32_MAX &&
		    fin_node_spins(f, node))
			ret = agg_add(f, s->thread, node, f->spin_metric, r->context, 1, value);
	}
	return ret;
}

int fin_build_tree(struct fin *f)
{
	struct placed_set set = { 0 };
	size_t i, j;
	int ret = 0;

	/* Samples were counted per stack when located: aggregate stacks, not samples. */
	for (i = 0; i < f->nstreams; i++) {
		struct stream *s = &f->streams[i];

		if (!s->has_header)
			continue;
		for (j = 0; j < s->nstacks; j++) {
			struct stack_rec *st = &s->stacks[j];

			if (st->loc == SIZE_MAX)
				continue; /* never sampled, no event there */
			ret = stack_place(f, &set, s, st);
			if (!ret && st->samples)
				ret = add_samples(f, s, st);
			if (ret)
				goto out;
		}
		if ((s->nspans || s->nworks) && (ret = add_samples_in_regions(f, s)))
			goto out;
		/* Events one by one: their metrics and contexts differ on one stack. */
		for (j = 0; j < s->nevents; j++) {
			const struct event_rec *e = &s->events[j];

			if (e->stack == NO_STACK)
				continue;
			ret = agg_add(f, s->thread, s->stacks[e->stack].node, e->metric, e->context,
				      e->count, e->value);
			if (ret)
				goto out;
		}
	}
	/* Each created thread's creator, and its stack there now placed (RAW_REC_ORIGIN). */
	for (i = 0; i < f->nstreams; i++) {
		const struct stream *s = &f->streams[i];
		const struct stream *p = &f->streams[s->origin_stream];
		struct thread *t = &f->threads[s->thread];

		if (!s->has_origin || t->has_parent || p->stacks[s->origin_stack].loc == SIZE_MAX)
			continue;
		t->has_parent = true;
		t->parent_thread = p->thread;
		t->parent_node = p->stacks[s->origin_stack].node;
	}
	for (i = 0; i < f->ncontexts; i++) {
		struct context *c = &f->contexts[i];
		const struct stream *p = &f->streams[c->origin_stream];

		if (!c->origin_found || p->stacks[c->origin_stack].loc == SIZE_MAX) {
			c->origin_found = false;
			continue;
		}
		c->origin_thread = p->thread;
		c->origin_node = p->stacks[c->origin_stack].node;
	}
out:
	free(set.v);
	hash_index_release(&set.index);
	return ret;
}
