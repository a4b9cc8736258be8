/* SPDX-License-Identifier: MIT */
/* -stitch: each created thread's stacks grafted under the stack that created it. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "report/bigmem.h"
#include "report/cct.h"
#include "report/key-index.h"
#include "report/model-private.h"

/*
 * A thread the program created (threads.parent_stack_id) runs work its creator started
 * there: with -stitch its samples' stacks are copies of theirs under that stack, and under
 * the creator's own creating stack, and so on up to a thread nobody created. A sample in a
 * part of work another thread began (an OpenMP region: contexts.origin_stack_id) goes under
 * that stack instead (and that thread's creating stacks above it), without the worker's own
 * root (its thread's entry and the runtime's "[OpenMP worker]", named by pfinalize), so
 * that its part meets the beginning thread's under the runtime's frames they share (libomp's
 * dispatcher). The copies are new stacks
 * of the model (no database id), made once per (prefix, stack): every view and export then
 * sees one tree, the workers' time under the call that started it.
 */

struct stitch {
	struct model *m;
	struct hash_index memo; /* (prefix << 32 | stack) -> the copy */
	size_t cap;             /* room in m->stacks and m->stack_order */
	int *chain;             /* a stack's path, leaf first */
	size_t chain_cap;
};

/* A new stack (parent, frame) appended to the model: its index, or -ENOMEM. */
static int stack_add(struct stitch *st, int parent, int frame)
{
	struct model *m = st->m;

	if (m->nstacks == st->cap) {
		size_t cap = st->cap ? 2 * st->cap : 1024;
		struct model_stack *stacks = big_realloc(m->stacks, cap * sizeof(*stacks));
		int *order;

		if (!stacks)
			return -ENOMEM;
		m->stacks = stacks;
		order = big_realloc(m->stack_order, cap * sizeof(*order));
		if (!order)
			return -ENOMEM;
		m->stack_order = order;
		st->cap = cap;
	}
	m->stacks[m->nstacks] = (struct model_stack){ .parent = parent, .frame = frame };
	/* Its parent is older: the order stays parents first. */
	m->stack_order[m->nstacks] = (int)m->nstacks;
	return (int)m->nstacks++;
}

/* A worker's root frame: its thread's entry, the OpenMP runtime's worker loop. */
static bool worker_root(const struct model *m, int s)
{
	int fn = m->frames[m->stacks[s].frame].function;

	return cct_function_is_runtime(m, fn) || !strcmp(m->functions[fn].name, "[OpenMP worker]");
}

/*
 * The copy of stack s under prefix (a stack index; -1: s itself), its worker's root frames
 * left out with skip_root. Its index, or -ENOMEM. The copy of a stack x right under a stack
 * p is one whichever stack it came with: keyed (p, x).
 */
static int graft(struct stitch *st, int prefix, int s, bool skip_root)
{
	size_t n = 0;
	int at = prefix;

	if (prefix < 0)
		return s;
	for (; s >= 0; s = st->m->stacks[s].parent) {
		if (GROW(st->chain, n + 1, st->chain_cap))
			return -ENOMEM;
		st->chain[n++] = s;
	}
	/* Down to the first frame of the work itself, keeping its leaf. */
	while (skip_root && n > 1 && worker_root(st->m, st->chain[n - 1]))
		n--;
	/* From the root down, each level's copy under the one above. */
	while (n-- > 0) {
		uint64_t key = (uint64_t)(uint32_t)at << 32 | (uint32_t)st->chain[n];
		int k = key_index_get(&st->memo, key);

		if (k < 0) {
			k = stack_add(st, at, st->m->stacks[st->chain[n]].frame);
			if (k < 0 || key_index_add(&st->memo, key, k))
				return -ENOMEM;
		}
		at = k;
	}
	return at;
}

/* The stitched stack under which a part of work that thread began at stack goes. */
static int origin_prefix(struct stitch *st, int *prefix, unsigned char *state, int64_t thread_id,
			 int64_t stack_id, int *out);

/*
 * The stitched stack every sample of thread i goes under, in prefix[i] (-1: none), its
 * creator's first. state: 0 not yet, 1 in progress (a cycle: none), 2 done.
 */
static int thread_prefix(struct stitch *st, int *prefix, unsigned char *state, int i)
{
	const struct model_thread *t = &st->m->threads[i];
	int ret, out;

	if (state[i] == 2)
		return 0;
	prefix[i] = -1;
	if (state[i] == 1)
		return 0;
	state[i] = 1;
	ret = origin_prefix(st, prefix, state, t->parent_thread_id, t->parent_stack_id, &out);
	if (ret)
		return ret;
	prefix[i] = out;
	state[i] = 2;
	return 0;
}

static int origin_prefix(struct stitch *st, int *prefix, unsigned char *state, int64_t thread_id,
			 int64_t stack_id, int *out)
{
	int parent = thread_id >= 0 ? model_index(st->m, MAP_THREADS, thread_id) : -1;
	int stack = stack_id >= 0 ? model_index(st->m, MAP_STACKS, stack_id) : -1;
	int up = -1, ret;

	*out = -1;
	if (stack < 0)
		return 0;
	if (parent >= 0) {
		ret = thread_prefix(st, prefix, state, parent);
		if (ret)
			return ret;
		up = prefix[parent];
	}
	ret = graft(st, up, stack, false);
	if (ret < 0)
		return ret;
	*out = ret;
	return 0;
}

int model_stitch(struct model *m)
{
	struct stitch st = { .m = m, .cap = m->nstacks };
	int *prefix = calloc(m->nthreads + 1, sizeof(*prefix));
	unsigned char *state = calloc(m->nthreads + 1, 1);
	int *work = calloc(m->ncontexts + 1, sizeof(*work)); /* per context: its prefix */
	size_t i;
	int ret = prefix && state && work ? 0 : -ENOMEM;

	hash_index_init(&st.memo);
	for (i = 0; i < m->nthreads && !ret && m->ids; i++)
		ret = thread_prefix(&st, prefix, state, (int)i);
	for (i = 0; i < m->ncontexts && !ret && m->ids; i++)
		ret = origin_prefix(&st, prefix, state, m->contexts[i].origin_thread_id,
				    m->contexts[i].origin_stack_id, &work[i]);
	for (i = 0; i < m->nsamples && !ret && m->ids; i++) {
		struct model_sample *s = &m->samples[i];
		int at = s->context >= 0 ? work[s->context] : -1, k;
		bool part = at >= 0;

		if (at < 0 && s->thread >= 0)
			at = prefix[s->thread];
		if (at < 0)
			continue;
		k = graft(&st, at, s->stack, part);
		if (k < 0)
			ret = k;
		else
			s->stack = k;
	}
	hash_index_release(&st.memo);
	FREE_ALL(prefix, state, work, st.chain);
	return ret;
}
