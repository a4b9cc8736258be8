/* SPDX-License-Identifier: MIT */
/* The calling-context tree a report shows: stacks merged by function (and source line). */
#ifndef PCOLLECT_REPORT_CCT_H
#define PCOLLECT_REPORT_CCT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/sat.h"
#include "report/key-index.h"
#include "report/model.h"

enum cct_flags {
	CCT_INLINE = 1 << 0, /* inlined functions are nodes of their own (-inline-mode on) */
	CCT_ALL_FRAMES =
		1 << 1,     /* keep start-up, thread and signal frames (-call-stack-mode all) */
	CCT_LINES = 1 << 2, /* one node per function and source line, not per function */
	CCT_PYTHON_ONLY = 1 << 3, /* only Python frames where a stack has some
				     (-call-stack-mode python-only) */
};

/* A source position: index into model.files and a line. */
struct cct_loc {
	int file;
	int line;
};

/* What a group node stands for (-group-by in tree views). */
enum cct_group_kind {
	CCT_GROUP_PROCESS,
	CCT_GROUP_THREAD,
	CCT_GROUP_MODULE,
	CCT_GROUP_RANK,
	CCT_GROUP_WAIT_KIND,
	CCT_GROUP_SYNC_OBJECT,
	CCT_GROUP_NODE,
	CCT_GROUP_REGION,
	CCT_GROUP_TASK,
	CCT_GROUP_RUN,
};

struct cct_group {
	enum cct_group_kind kind;
	int item; /* index into model.processes, threads, modules, wait_kinds, sync_objects,
		     nodes, regions or runs, or the rank; a task's, the function of its frame
		     (model.functions); -1: unknown (or no wait, no region, no task) */
};

struct cct_node {
	int parent; /* -1 at the root */
	int func;   /* index into model.functions; -1 at the root; cct_group_of() for groups */
	int loc;    /* index into cct.locs with CCT_LINES, else -1 */
	int depth;  /* 0 at the root */
	int first_child, next_sibling; /* children, newest first */
};

/* Group node g has func -2 - g: every node with func < 0 but the root is a group. */
static inline int cct_group_of(const struct cct_node *n)
{
	return n->func <= -2 ? -2 - n->func : -1;
}

/*
 * Node 0 is the root (no function). A child is always created after its parent, so index
 * order is a topological order. A stack's frames map onto the tree as follows:
 *   - an inlined frame (inline_depth > 0) without CCT_INLINE is merged into the function it
 *     was inlined into: it maps to the same node as its parent frame;
 *   - a hidden frame (start-up, thread entry, signal trampoline, the agent) without
 *     CCT_ALL_FRAMES is skipped on the way to deeper frames, but a sample whose innermost
 *     frame is hidden still counts in that function, so no time disappears;
 *   - Python (without CCT_ALL_FRAMES): a frame of the interpreter (its module has
 *     modules.role 'interpreter', or it is in the C runtime, libc, ld.so, libm, and called
 *     by such a frame; with CCT_PYTHON_ONLY, any native frame) under a Python frame is merged
 *     into its caller, as an inlined frame is, so the eval loop and the interpreter's helpers
 *     count in the Python line that ran them (but a method, functions.kind 'method', such
 *     as builtins.sorted, stays: the C function the line called, as cProfile shows it); above every
 * Python frame of its stack (Py_RunMain, the outermost eval loop) it is skipped like a hidden
 * frame. Stacks without Python frames keep all of theirs.
 *
 * Values are kept per node and metric (nm = model.nmetrics of them): self[node * nm + k].
 */
struct cct {
	const struct model *m;
	unsigned flags;
	size_t nm; /* metrics per node */
	struct cct_node *nodes;
	size_t n, cap;
	int64_t *self;  /* per node and metric: the values of the samples counted at the node */
	int64_t *count; /* per node and metric: the events counted in self */
	int64_t *total; /* per node and metric, after cct_sum(): self plus the children's totals */
	unsigned char *nkids; /* per node: children, counted up to 9 (wide: in slots) */
	int *inner;           /* per stack: the node its callees hang under */
	int *leaf;            /* per stack: the node of samples taken there; -1 until cct_leaf() */
	bool *hidden;         /* per function */
	int *frame_loc;       /* per frame: index into locs (CCT_LINES only) */
	struct cct_loc *locs;
	size_t nlocs, loccap;
	int *slots;    /* children of wide nodes: open addressing, -1 empty */
	size_t nslots; /* a power of two, at least twice nindexed */
	size_t nindexed;
	struct hash_index locmap;
	struct cct_group *groups; /* group nodes' subjects (cct_derive only) */
	size_t ngroups, groupcap;
	struct hash_index groupmap; /* cct_derive: a group's (kind, item) -> index into groups */
	/*
	 * cct_derive, per node of the source: the group node it was last mapped under and the
	 * node it was mapped to there. Only the last: mapped again under that group node, a
	 * node is mapped to the same node (what a node maps to follows from its path alone).
	 */
	int *dtop, *dnode;
	int *dstack; /* cct_derive: the source path being mapped */
	size_t dstackcap;
};

/*
 * Build the tree of every stack of m. from (NULL: none), per function: a stack through one of
 * them starts at its outermost such frame, what called it left out (-show-from). Returns 0
 * or -ENOMEM.
 */
int cct_build(struct cct *t, const struct model *m, unsigned flags, const bool *from);
void cct_release(struct cct *t);

/* The node that samples taken at stack (index into model.stacks) count in, or -1. */
int cct_leaf(struct cct *t, int stack);

/* Add a sample's value (of metric) to the self of node. */
static inline void cct_add(struct cct *t, int node, int metric, int64_t value, int64_t count)
{
	size_t at = (size_t)node * t->nm + (size_t)metric;

	/* Values come from the database, which anyone may have forged (common/sat.h). */
	t->self[at] = sat_add_i64(t->self[at], value);
	t->count[at] = sat_add_i64(t->count[at], count);
}

static inline const int64_t *cct_self(const struct cct *t, int node)
{
	return &t->self[(size_t)node * t->nm];
}

static inline const int64_t *cct_total(const struct cct *t, int node)
{
	return &t->total[(size_t)node * t->nm];
}

/* True when node has a value of any metric counted at it. */
bool cct_has_self(const struct cct *t, int node);

/* After every cct_add(): sum the totals up the tree. Returns 0 or -ENOMEM. */
int cct_sum(struct cct *t);

/*
 * True for a module of the C runtime (libc, ld.so, libm, libpthread, the vdso...): what
 * the interpreter calls for its own work, and where a program's blocking calls block.
 */
bool cct_module_is_c_runtime(const char *name);

/* True for functions that -call-stack-mode user-only hides (see cct_build). */
bool cct_function_is_runtime(const struct model *m, int func);

/*
 * A tree derived from another for the tree views: nodes placed under group nodes (-group-by
 * thread, process, module as the top levels) and, with collapse, recursion folded (a frame
 * whose function is already on its path is merged into that outer frame, its callees with
 * it). cct_derive_init() starts dst empty (only the root) with src's model, flags and
 * source positions; then, per sample, cct_derive_group() finds or makes the group node
 * under parent (0 at the top), cct_derive_node() maps a node of src to dst under that group
 * node, and cct_add() counts the sample there. Returns 0, -ENOMEM, or a node index (>= 0).
 */
int cct_derive_init(struct cct *dst, const struct cct *src);
int cct_derive_group(struct cct *dst, int parent, enum cct_group_kind kind, int item);
int cct_derive_node(struct cct *dst, const struct cct *src, int top, int node, bool collapse);

/*
 * The callers' tree of t (bottom-up): under the root, one node per function that has a self
 * value, under it the function's callers, and so on up to the outermost frames; a node's self
 * is the self of t's nodes whose path, read upwards, is the path from the root to it. Group
 * nodes of t are left out. Totals are summed. Returns 0 or -ENOMEM.
 */
int cct_invert(struct cct *dst, const struct cct *t);

/*
 * Sums per key over a tree, counting a value once per key on each path, as perf's cumulative
 * entries do: every node has a key (-1: counted nowhere). A key's self sums the values at its
 * nodes; its total sums the values at and below its nodes, each value once however often the
 * key recurs on the value's path (a recursive function, a source line of a recursive
 * function). Every view that reports self and total per function, line, edge or group
 * uses this one rule.
 */
struct cct_walk {
	const struct cct *t;
	size_t nkeys, nm;
	int64_t *self, *total; /* per key and metric (nkeys * nm): the sums of the passes */
	int *touched;          /* keys a pass gave a value to, ascending */
	size_t ntouched;
	/* private */
	struct cct_walk_link {
		int parent, key;
	} * link; /* per node */
	bool *is_touched;
	uint32_t *stamp, round;
	int64_t *sub;
	bool *live;
	int *active, *kid_off, *kids;
	struct cct_walk_visit {
		int node, next;
	} * visit;
};

/* Prepare a walk of t with key[node] for every node (copied). Returns 0 or -ENOMEM. */
int cct_walk_init(struct cct_walk *w, const struct cct *t, const int *key, size_t nkeys);

/*
 * Add vals[node * nm + k] (NULL: the tree's self values) of every node to the sums; leaves
 * lists the nodes whose values are not all zero (each once). The walk picks the cheaper of
 * a walk up from each leaf and one pass over the tree. Returns 0 or -ENOMEM.
 */
int cct_walk_add(struct cct_walk *w, const int *leaves, size_t nleaves, const int64_t *vals);

/* Zero the sums of the touched keys, for the next cct_walk_add(). */
void cct_walk_reset(struct cct_walk *w);
void cct_walk_release(struct cct_walk *w);

#endif
