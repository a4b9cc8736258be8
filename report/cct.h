/* SPDX-License-Identifier: MIT */
/* The calling-context tree a report shows: stacks merged by function (and source line). */
#ifndef PCOLLECT_REPORT_CCT_H
#define PCOLLECT_REPORT_CCT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "report/keymap.h"
#include "report/model.h"

enum cct_flags {
	CCT_INLINE = 1 << 0,	 /* inlined functions are nodes of their own (-inline-mode on) */
	CCT_ALL_FRAMES = 1 << 1, /* keep start-up, thread and signal frames (-call-stack-mode all) */
	CCT_LINES = 1 << 2,	 /* one node per function and source line, not per function */
	CCT_PYTHON_ONLY = 1 << 3, /* only Python frames where a stack has some
				     (-call-stack-mode python-only) */
};

/* A source position: index into model.files and a line. */
struct cct_loc {
	int file;
	int line;
};

struct cct_node {
	int parent; /* -1 at the root */
	int func;   /* index into model.functions; -1 at the root */
	int loc;    /* index into cct.locs with CCT_LINES, else -1 */
	int depth;  /* 0 at the root */
	int first_child, next_sibling; /* children, newest first */
	int64_t self_ns, total_ns;
};

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
 *     count in the Python line that ran them; above every Python frame of its stack
 *     (Py_RunMain, the outermost eval loop) it is skipped like a hidden frame. Stacks
 *     without Python frames keep all of theirs.
 */
struct cct {
	const struct model *m;
	unsigned flags;
	struct cct_node *nodes;
	size_t n, cap;
	int64_t *self_count; /* per node: samples counted in self_ns */
	unsigned char *nkids; /* per node: children, counted up to 9 (wide: in slots) */
	int *inner;	/* per stack: the node its callees hang under */
	int *leaf;	/* per stack: the node of samples taken there; -1 until cct_leaf() */
	bool *hidden;	/* per function */
	int *frame_loc; /* per frame: index into locs (CCT_LINES only) */
	struct cct_loc *locs;
	size_t nlocs, loccap;
	int *slots;	/* children of wide nodes: open addressing, -1 empty */
	size_t nslots;	/* a power of two, at least twice nindexed */
	size_t nindexed;
	struct keymap locmap;
};

/* Build the tree of every stack of m. Returns 0 or -ENOMEM. */
int cct_build(struct cct *t, const struct model *m, unsigned flags);
void cct_release(struct cct *t);

/* The node that samples taken at stack (index into model.stacks) count in, or -1. */
int cct_leaf(struct cct *t, int stack);

/* Add a sample's time to the self time of node. */
static inline void cct_add(struct cct *t, int node, int64_t ns, int64_t count)
{
	t->nodes[node].self_ns += ns;
	t->self_count[node] += count;
}

/* After every cct_add(): sum the totals up the tree. */
void cct_sum(struct cct *t);

/* True for functions that -call-stack-mode user-only hides (see cct_build). */
bool cct_function_is_runtime(const struct model *m, int func);

#endif
