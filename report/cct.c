/* SPDX-License-Identifier: MIT */
/* Build the report's calling-context tree from the database's stack tree. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
#include "common/raw-python.h"
#include "common/sat.h"
#include "report/bigmem.h"
#include "report/cct.h"

/*
 * Frames of the C runtime and the thread library that stand between the kernel and the
 * user's code, and the signal trampoline a sample may be taken through.
 */
static const char *const runtime_functions[] = {
	"_start",
	"__libc_start_main",
	"__libc_start_main_impl",
	"__libc_start_main_alias_2",
	"__libc_start_call_main",
	"_dl_start",
	"_dl_start_user",
	"clone",
	"clone3",
	"__clone",
	"__clone3",
	"__clone_internal",
	"start_thread",
	"__restore_rt",
	"__sigreturn",
	NULL,
};

bool cct_function_is_runtime(const struct model *m, int func)
{
	const struct model_function *f = &m->functions[func];
	const char *const *p;

	for (p = runtime_functions; *p; p++)
		if (!strcmp(f->name, *p))
			return true;
	/* The agent's own frames: its symbols carry the pcollect_ prefix, its library the name. */
	if (!strncmp(f->name, "pcollect_", 9))
		return true;
	return f->module >= 0 && (!strncmp(m->modules[f->module].name, "libpcollect", 11) ||
				  !strncmp(m->modules[f->module].name, "pcollect-agent", 14));
}

/* Room for cap nodes in every per-node array. */
static int nodes_grow(struct cct *t, size_t cap)
{
	struct cct_node *nodes = big_realloc(t->nodes, cap * sizeof(*nodes));
	int64_t *self = nodes ? big_realloc(t->self, cap * t->nm * sizeof(*self)) : NULL;
	int64_t *count = self ? big_realloc(t->count, cap * t->nm * sizeof(*count)) : NULL;
	unsigned char *nkids = count ? big_realloc(t->nkids, cap) : NULL;

	if (nodes)
		t->nodes = nodes;
	if (self)
		t->self = self;
	if (count)
		t->count = count;
	if (nkids)
		t->nkids = nkids;
	if (!nkids)
		return -ENOMEM;
	t->cap = cap;
	return 0;
}

static int node_new(struct cct *t, int parent, int func, int loc)
{
	struct cct_node *n;

	if (t->n == t->cap && nodes_grow(t, t->cap ? 2 * t->cap : 4096))
		return -1;
	memset(&t->self[t->n * t->nm], 0, t->nm * sizeof(*t->self));
	memset(&t->count[t->n * t->nm], 0, t->nm * sizeof(*t->count));
	t->nkids[t->n] = 0;
	n = &t->nodes[t->n];
	n->parent = parent;
	n->func = func;
	n->loc = loc;
	n->depth = parent >= 0 ? t->nodes[parent].depth + 1 : 0;
	n->first_child = n->next_sibling = -1;
	return (int)t->n++;
}

/* Parents with more children than this find them through the index, not the list. */
#define CHILD_SCAN_MAX 8

static size_t child_slot(const struct cct *t, int parent, int func, int loc)
{
	uint64_t h = hash_mix((uint64_t)(uint32_t)parent << 32 | (uint32_t)func);

	if (loc >= 0)
		h = hash_mix(h ^ (uint32_t)loc);
	return (size_t)h & (t->nslots - 1);
}

static void child_put(struct cct *t, int node)
{
	const struct cct_node *c = &t->nodes[node];
	size_t k = child_slot(t, c->parent, c->func, c->loc);

	while (t->slots[k] >= 0)
		k = (k + 1) & (t->nslots - 1);
	t->slots[k] = node;
	t->nindexed++;
}

/* Grow the index of wide parents' children to hold n nodes at most half full. */
static int children_index(struct cct *t, size_t n)
{
	size_t size = 1024, i;
	int *old = t->slots;
	size_t nold = t->nslots;

	while (size < 2 * n)
		size *= 2;
	t->slots = big_malloc(size * sizeof(*t->slots));
	if (!t->slots) {
		t->slots = old;
		return -1;
	}
	memset(t->slots, 0xff, size * sizeof(*t->slots));
	t->nslots = size;
	t->nindexed = 0;
	for (i = 0; i < nold; i++)
		if (old[i] >= 0)
			child_put(t, old[i]);
	free(old);
	return 0;
}

/*
 * The child of parent for func (at loc), created when missing; -1 on ENOMEM. Most nodes
 * have few children: a short list walk finds them with fewer cache misses than a hash
 * lookup. Past CHILD_SCAN_MAX children, a parent's children also go into an index of
 * (parent, function, position), where one probe finds them.
 */
static int node_child(struct cct *t, int parent, int func, int loc)
{
	struct cct_node *p = &t->nodes[parent];
	int c, node;

	if (t->nkids[parent] <= CHILD_SCAN_MAX) {
		for (c = p->first_child; c >= 0; c = t->nodes[c].next_sibling)
			if (t->nodes[c].func == func && t->nodes[c].loc == loc)
				return c;
	} else {
		size_t k = child_slot(t, parent, func, loc);

		for (; (c = t->slots[k]) >= 0; k = (k + 1) & (t->nslots - 1))
			if (t->nodes[c].parent == parent && t->nodes[c].func == func &&
			    t->nodes[c].loc == loc)
				return c;
	}
	node = node_new(t, parent, func, loc);
	if (node < 0)
		return -1;
	p = &t->nodes[parent];
	t->nodes[node].next_sibling = p->first_child;
	p->first_child = node;
	if (t->nkids[parent] > CHILD_SCAN_MAX) {
		/* Already wide: its children are in the index. */
		if (2 * (t->nindexed + 1) > t->nslots && children_index(t, t->nindexed + 1))
			return -1;
		child_put(t, node);
	} else if (++t->nkids[parent] == CHILD_SCAN_MAX + 1) {
		/* The parent turns wide: index all its children. */
		if (2 * (t->nindexed + CHILD_SCAN_MAX + 1) > t->nslots &&
		    children_index(t, t->nindexed + CHILD_SCAN_MAX + 1))
			return -1;
		for (c = p->first_child; c >= 0; c = t->nodes[c].next_sibling)
			child_put(t, c);
	}
	return node;
}

static int loc_of(struct cct *t, int file, int line)
{
	uint64_t key = (uint64_t)(uint32_t)file << 32 | (uint32_t)line;
	bool added;
	int v = KEY_INDEX_SLOT(&t->locmap, key, t->locs, t->nlocs, t->loccap, &added);

	if (v < 0)
		return -1;
	if (added) {
		t->locs[v].file = file;
		t->locs[v].line = line;
	}
	return v;
}

/*
 * Python stacks (see cct.h), per stack: whether the mode strips its frame (strip), whether a
 * Python frame is at or above it (up), and at or below it in some stack (down). NULL arrays:
 * the result has no Python frames, or every frame is kept.
 */
struct pyview {
	unsigned char *strip, *up, *down, *absorb;
};

static void pyview_release(struct pyview *v)
{
	FREE_ALL(v->strip, v->up, v->down, v->absorb);
	memset(v, 0, sizeof(*v));
}

/*
 * The C runtime: what the interpreter calls for its own work (malloc, memcpy, TLS lookups,
 * clock_gettime) is interpreter work too. Called from an extension's code it stays shown.
 */
bool cct_module_is_c_runtime(const char *name)
{
	static const char *const prefixes[] = {
		"libc.so",  "ld-linux", "ld64.so",     "libm.so", "libpthread.so",
		"libdl.so", "librt.so", "libgcc_s.so", "[vdso]",  NULL,
	};
	const char *const *p;

	for (p = prefixes; *p; p++)
		if (!strncmp(name, *p, strlen(*p)))
			return true;
	return false;
}

static int pyview_build(struct pyview *v, const struct model *m, unsigned flags)
{
	unsigned char *kind;
	bool any = false;
	size_t i;

	memset(v, 0, sizeof(*v));
	if (flags & CCT_ALL_FRAMES)
		return 0;
	for (i = 0; i < m->nfunctions && !any; i++)
		any = m->functions[i].python;
	if (!any)
		return 0;
	v->strip = big_calloc(m->nstacks + 1, 1);
	v->up = big_calloc(m->nstacks + 1, 1);
	v->down = big_calloc(m->nstacks + 1, 1);
	v->absorb = big_calloc(m->nstacks + 1, 1);
	kind = calloc(m->nfunctions + 1, 1);
	if (!v->strip || !v->up || !v->down || !v->absorb || !kind) {
		free(kind);
		pyview_release(v);
		return -ENOMEM;
	}
	/* Per function: 1 stripped wherever it is, 2 stripped when its caller is. */
	for (i = 0; i < m->nfunctions; i++) {
		const struct model_function *f = &m->functions[i];

		/* [gc] stays with them: the collection that Python line started */
		if (flags & CCT_PYTHON_ONLY)
			kind[i] = !f->python &&
				  !(f->module < 0 && f->name && !strcmp(f->name, RAW_PY_GC_NAME));
		else if (f->module >= 0 && !f->method)
			kind[i] = m->modules[f->module].interpreter                     ? 1
				  : cct_module_is_c_runtime(m->modules[f->module].name) ? 2
											: 0;
	}
	for (i = 0; i < m->nstacks; i++) {
		int s = m->stack_order[i], p = m->stacks[s].parent;
		int fn = m->frames[m->stacks[s].frame].function;

		v->up[s] = (p >= 0 && v->up[p]) || m->functions[fn].python;
		v->down[s] = m->functions[fn].python;
		v->strip[s] = kind[fn] == 1 || (kind[fn] == 2 && p >= 0 && v->strip[p]);
		if (p >= 0 && !(flags & CCT_PYTHON_ONLY)) {
			const struct model_function *f = &m->functions[fn];
			const struct model_function *up =
				&m->functions[m->frames[m->stacks[p].frame].function];

			/*
			 * A stripped module's nameless functions (func@0x...) under a method of
			 * that module are its work: cProfile's tottime of the method, the name
			 * Python calls (the breakdown: -call-stack-mode all).
			 */
			v->absorb[s] = f->module >= 0 && !f->method && !f->python &&
				       (f->range || !f->resolved) && f->module == up->module &&
				       (up->method || v->absorb[p]);
		}
	}
	free(kind);
	/* Children after their parents in stack_order: backwards, each tells its parent. */
	for (i = m->nstacks; i-- > 0;) {
		int s = m->stack_order[i], p = m->stacks[s].parent;

		if (p >= 0 && v->down[s])
			v->down[p] = 1;
	}
	return 0;
}

int cct_build(struct cct *t, const struct model *m, unsigned flags, const bool *from)
{
	unsigned char *cut = NULL; /* per stack, with from: a from function is on it */
	struct pyview py;
	size_t i;

	memset(t, 0, sizeof(*t));
	t->m = m;
	t->flags = flags;
	t->nm = m->nmetrics ? m->nmetrics : 1;
	t->inner = big_malloc((m->nstacks + 1) * sizeof(int));
	t->leaf = big_malloc((m->nstacks + 1) * sizeof(int));
	t->hidden = calloc(m->nfunctions + 1, sizeof(bool));
	t->frame_loc = big_malloc((m->nframes + 1) * sizeof(int));
	if (pyview_build(&py, m, flags) || (from && !(cut = big_calloc(m->nstacks + 1, 1))))
		goto nomem;
	/* At most one node per stack, plus the root: allocated once, touched as used. */
	if (!t->inner || !t->leaf || !t->hidden || !t->frame_loc ||
	    nodes_grow(t, m->nstacks + 1024) || node_new(t, -1, -1, -1) < 0 || children_index(t, 0))
		goto nomem;
	if (!(flags & CCT_ALL_FRAMES))
		for (i = 0; i < m->nfunctions; i++)
			t->hidden[i] = cct_function_is_runtime(m, (int)i);
	for (i = 0; i < m->nframes; i++) {
		const struct model_frame *fr = &m->frames[i];

		t->frame_loc[i] = -1;
		if ((flags & CCT_LINES) && (t->frame_loc[i] = loc_of(t, fr->file, fr->line)) < 0)
			goto nomem;
	}
	for (i = 0; i < m->nstacks; i++) {
		int s = m->stack_order[i];
		const struct model_stack *st = &m->stacks[s];
		const struct model_frame *fr = &m->frames[st->frame];
		int parent = st->parent >= 0 ? t->inner[st->parent] : 0;
		bool merge = !(flags & CCT_INLINE) && fr->inline_depth > 0;
		int node;

		if (cut) {
			bool above = st->parent >= 0 && cut[st->parent];

			cut[s] = above || from[fr->function];
			if (cut[s] && !above)
				parent = 0; /* the outermost from frame: its callers are left out */
		}
		if (py.absorb && py.absorb[s])
			merge = true;
		if (py.strip && py.strip[s]) {
			if (st->parent >= 0 && py.up[st->parent]) {
				merge = true;
			} else if (py.down[s]) {
				t->inner[s] = parent;
				t->leaf[s] = -1;
				continue;
			}
		}
		if (merge && st->parent >= 0) {
			t->inner[s] = t->inner[st->parent];
			t->leaf[s] = t->leaf[st->parent];
			if (t->leaf[s] < 0)
				t->leaf[s] = -2 - st->parent; /* resolved through the parent */
			continue;
		}
		if (t->hidden[fr->function]) {
			t->inner[s] = parent;
			t->leaf[s] = -1;
			continue;
		}
		node = node_child(t, parent, fr->function, t->frame_loc[st->frame]);
		if (node < 0)
			goto nomem;
		t->inner[s] = t->leaf[s] = node;
	}
	pyview_release(&py);
	free(cut);
	return 0;
nomem:
	pyview_release(&py);
	free(cut);
	cct_release(t);
	return -ENOMEM;
}

int cct_leaf(struct cct *t, int stack)
{
	const struct model *m = t->m;
	int s = stack, node;

	/* Merged inlined frames point at the frame they were merged into. */
	while (t->leaf[s] <= -2)
		s = -2 - t->leaf[s];
	if (t->leaf[s] >= 0)
		return t->leaf[stack] = t->leaf[s];
	/* A hidden frame where the sample was taken: it keeps its time. */
	node = node_child(t, m->stacks[s].parent >= 0 ? t->inner[m->stacks[s].parent] : 0,
			  m->frames[m->stacks[s].frame].function, t->frame_loc[m->stacks[s].frame]);
	if (node < 0)
		return -1;
	t->leaf[s] = node;
	return t->leaf[stack] = node;
}

bool cct_has_self(const struct cct *t, int node)
{
	const int64_t *v = cct_self(t, node);
	size_t k;

	for (k = 0; k < t->nm; k++)
		if (v[k])
			return true;
	return false;
}

int cct_sum(struct cct *t)
{
	size_t i, k, nm = t->nm;
	int64_t *total = big_realloc(t->total, (t->n + 1) * nm * sizeof(*total));

	if (!total)
		return -ENOMEM;
	t->total = total;
	memcpy(total, t->self, t->n * nm * sizeof(*total));
	for (i = t->n; i-- > 1;) {
		int64_t *p = &total[(size_t)t->nodes[i].parent * nm];

		for (k = 0; k < nm; k++)
			p[k] = sat_add_i64(p[k], total[i * nm + k]);
	}
	return 0;
}

void cct_release(struct cct *t)
{
	FREE_ALL(t->nodes, t->self, t->count, t->total, t->nkids, t->inner, t->leaf, t->hidden,
		 t->frame_loc, t->locs, t->slots, t->groups, t->dtop, t->dnode, t->dstack);
	hash_index_release(&t->locmap);
	hash_index_release(&t->groupmap);
	memset(t, 0, sizeof(*t));
}

/* A tree with only a root, sharing src's model, flags and source positions. */
static int tree_like(struct cct *dst, const struct cct *src)
{
	memset(dst, 0, sizeof(*dst));
	dst->m = src->m;
	dst->flags = src->flags;
	dst->nm = src->nm;
	hash_index_init(&dst->locmap);
	hash_index_init(&dst->groupmap);
	if (src->nlocs) {
		dst->locs = malloc(src->nlocs * sizeof(*dst->locs));
		if (!dst->locs)
			goto nomem;
		memcpy(dst->locs, src->locs, src->nlocs * sizeof(*dst->locs));
		dst->nlocs = dst->loccap = src->nlocs;
	}
	if (nodes_grow(dst, src->n + 1024) || node_new(dst, -1, -1, -1) < 0 ||
	    children_index(dst, 0))
		goto nomem;
	return 0;
nomem:
	cct_release(dst);
	return -ENOMEM;
}

int cct_derive_init(struct cct *dst, const struct cct *src)
{
	size_t i;
	int rc = tree_like(dst, src);

	if (rc)
		return rc;
	dst->dtop = big_malloc((src->n + 1) * sizeof(int));
	dst->dnode = big_malloc((src->n + 1) * sizeof(int));
	if (!dst->dtop || !dst->dnode) {
		cct_release(dst);
		return -ENOMEM;
	}
	for (i = 0; i < src->n; i++)
		dst->dtop[i] = -1;
	return 0;
}

/* Keys of cct.groupmap: a group's kind and subject. */
#define GROUP_KEY(kind, item) ((uint64_t)(kind) << 32 | (uint32_t)((item) + 1))

int cct_derive_group(struct cct *dst, int parent, enum cct_group_kind kind, int item)
{
	int g = key_index_get(&dst->groupmap, GROUP_KEY(kind, item)), node;

	if (g < 0) {
		if (array_reserve(&dst->groups, &dst->groupcap, dst->ngroups + 1,
				  sizeof(*dst->groups)))
			return -ENOMEM;
		g = (int)dst->ngroups++;
		dst->groups[g] = (struct cct_group){ kind, item };
		if (key_index_add(&dst->groupmap, GROUP_KEY(kind, item), g))
			return -ENOMEM;
	}
	node = node_child(dst, parent, -2 - g, -1);
	return node < 0 ? -ENOMEM : node;
}

/* With collapse: the node on the path from base up to (not past) a group node with func. */
static int outer_recursion(const struct cct *dst, int base, int func)
{
	int a;

	for (a = base; a > 0 && dst->nodes[a].func >= 0; a = dst->nodes[a].parent)
		if (dst->nodes[a].func == func)
			return a;
	return -1;
}

int cct_derive_node(struct cct *dst, const struct cct *src, int top, int node, bool collapse)
{
	size_t sp = 0;
	int u, base;

	/* Up to the nearest node already mapped under top, then down again, mapping each. */
	for (u = node; u > 0 && dst->dtop[u] != top; u = src->nodes[u].parent) {
		if (array_reserve(&dst->dstack, &dst->dstackcap, sp + 1, sizeof(*dst->dstack)))
			return -ENOMEM;
		dst->dstack[sp++] = u;
	}
	base = u > 0 ? dst->dnode[u] : top;
	while (sp) {
		const struct cct_node *n = &src->nodes[dst->dstack[--sp]];
		int to = collapse ? outer_recursion(dst, base, n->func) : -1;

		if (to < 0 && (to = node_child(dst, base, n->func, n->loc)) < 0)
			return -ENOMEM;
		dst->dtop[dst->dstack[sp]] = top;
		dst->dnode[dst->dstack[sp]] = to;
		base = to;
	}
	return base;
}

int cct_invert(struct cct *dst, const struct cct *t)
{
	size_t x, k;
	int rc = tree_like(dst, t);

	for (x = 1; !rc && x < t->n; x++) {
		int node = 0, u;

		if (t->nodes[x].func < 0 || !cct_has_self(t, (int)x))
			continue;
		for (u = (int)x; u > 0 && t->nodes[u].func >= 0; u = t->nodes[u].parent)
			if ((node = node_child(dst, node, t->nodes[u].func, t->nodes[u].loc)) < 0)
				break;
		if (node < 0) {
			rc = -ENOMEM;
			break;
		}
		for (k = 0; k < t->nm; k++)
			cct_add(dst, node, (int)k, t->self[x * t->nm + k], t->count[x * t->nm + k]);
	}
	if (!rc)
		rc = cct_sum(dst);
	if (rc)
		cct_release(dst);
	return rc;
}
