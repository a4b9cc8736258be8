/* SPDX-License-Identifier: MIT */
/* Self and total per key over the tree, each value counted once per key on its path. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
#include "common/sat.h"
#include "report/bigmem.h"
#include "report/cct.h"

int cct_walk_init(struct cct_walk *w, const struct cct *t, const int *key, size_t nkeys)
{
	size_t i, n = t->n;

	memset(w, 0, sizeof(*w));
	w->t = t;
	w->nkeys = nkeys;
	w->nm = t->nm;
	w->link = big_malloc((n + 1) * sizeof(*w->link));
	w->self = big_calloc((nkeys + 1) * w->nm, sizeof(*w->self));
	w->total = big_calloc((nkeys + 1) * w->nm, sizeof(*w->total));
	w->touched = big_malloc((nkeys + 1) * sizeof(*w->touched));
	w->is_touched = big_calloc(nkeys + 1, sizeof(*w->is_touched));
	w->stamp = big_calloc(nkeys + 1, sizeof(*w->stamp));
	if (!w->link || !w->self || !w->total || !w->touched || !w->is_touched || !w->stamp) {
		cct_walk_release(w);
		return -ENOMEM;
	}
	/* Parent and key side by side: the walks up touch one cache line per node. */
	for (i = 0; i < n; i++)
		w->link[i] = (struct cct_walk_link){ t->nodes[i].parent, i ? key[i] : -1 };
	return 0;
}

static inline void touch(struct cct_walk *w, int k)
{
	if (!w->is_touched[k]) {
		w->is_touched[k] = true;
		w->touched[w->ntouched++] = k;
	}
}

static inline void add_vec(int64_t *dst, const int64_t *v, size_t nm)
{
	size_t j;

	for (j = 0; j < nm; j++)
		dst[j] = sat_add_i64(dst[j], v[j]);
}

/* One leaf's values: self to its own key, total once to each distinct key on its path. */
static void walk_up(struct cct_walk *w, int leaf, const int64_t *v)
{
	size_t nm = w->nm;
	int u, k;

	if (++w->round == 0) { /* wrapped: forget old stamps */
		memset(w->stamp, 0, w->nkeys * sizeof(*w->stamp));
		w->round = 1;
	}
	if ((k = w->link[leaf].key) >= 0) {
		touch(w, k);
		add_vec(&w->self[(size_t)k * nm], v, nm);
	}
	for (u = leaf; u > 0; u = w->link[u].parent) {
		k = w->link[u].key;
		if (k < 0 || w->stamp[k] == w->round)
			continue;
		w->stamp[k] = w->round;
		touch(w, k);
		add_vec(&w->total[(size_t)k * nm], v, nm);
	}
}

/*
 * The tree as compact arrays for pass_tree(): children (kids[kid_off[u]] to
 * kids[kid_off[u + 1]]) in a few MB instead of the nodes' tens, so that a pass stays in the
 * cache. Built at the first pass.
 */
static int tree_scratch(struct cct_walk *w)
{
	const struct cct *t = w->t;
	size_t n = t->n, i;
	int maxdepth = 0;

	if (w->sub)
		return 0;
	w->sub = big_malloc(n * w->nm * sizeof(*w->sub));
	w->live = big_malloc(n * sizeof(*w->live));
	w->kid_off = big_calloc(n + 2, sizeof(*w->kid_off));
	w->kids = big_malloc(n * sizeof(*w->kids));
	w->active = big_calloc(w->nkeys + 1, sizeof(*w->active));
	if (!w->sub || !w->live || !w->kid_off || !w->kids || !w->active)
		return -ENOMEM;
	for (i = 1; i < n; i++) {
		w->kid_off[w->link[i].parent + 2]++;
		if (t->nodes[i].depth > maxdepth)
			maxdepth = t->nodes[i].depth;
	}
	for (i = 2; i <= n + 1; i++)
		w->kid_off[i] += w->kid_off[i - 1];
	for (i = 1; i < n; i++)
		w->kids[w->kid_off[w->link[i].parent + 1]++] = (int)i;
	w->visit = malloc(((size_t)maxdepth + 2) * sizeof(*w->visit));
	return w->visit ? 0 : -ENOMEM;
}

/*
 * What walk_up() computes for every leaf, in one pass over the tree: a key's total is the sum
 * of the subtree totals of its outermost nodes (no ancestor with the same key), so each value
 * counts once per key however deep the recursion.
 */
static int pass_tree(struct cct_walk *w, const int *leaves, size_t nleaves, const int64_t *vals)
{
	size_t n = w->t->n, nm = w->nm, sp, i;
	int rc;

	if ((rc = tree_scratch(w)))
		return rc;
	memcpy(w->sub, vals, n * nm * sizeof(*w->sub));
	memset(w->live, 0, n * sizeof(*w->live));
	for (i = 0; i < nleaves; i++)
		w->live[leaves[i]] = true;
	/* Children come after their parents: one backward sweep sums the subtrees. */
	for (i = n; i-- > 1;) {
		int p = w->link[i].parent;

		if (!w->live[i])
			continue;
		w->live[p] = true;
		add_vec(&w->sub[(size_t)p * nm], &w->sub[i * nm], nm);
	}
	/* Depth first through the subtrees that hold a value. */
	w->visit[0] = (struct cct_walk_visit){ 0, w->kid_off[0] };
	for (sp = 1; sp;) {
		struct cct_walk_visit *v = &w->visit[sp - 1];
		int c, k;

		if (v->next < w->kid_off[v->node + 1]) {
			c = w->kids[v->next++];
			if (!w->live[c])
				continue;
			if ((k = w->link[c].key) >= 0) {
				touch(w, k);
				add_vec(&w->self[(size_t)k * nm], &vals[(size_t)c * nm], nm);
				if (!w->active[k]++)
					add_vec(&w->total[(size_t)k * nm], &w->sub[(size_t)c * nm],
						nm);
			}
			w->visit[sp++] = (struct cct_walk_visit){ c, w->kid_off[c] };
		} else {
			if (v->node && (k = w->link[v->node].key) >= 0)
				w->active[k]--;
			sp--;
		}
	}
	return 0;
}

static int int_cmp(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return x < y ? -1 : x > y;
}

/* The touched keys in ascending order, whichever way the pass found them. */
static void sort_touched(struct cct_walk *w)
{
	size_t k, n = 0;

	if (w->ntouched * 32 < w->nkeys) {
		qsort(w->touched, w->ntouched, sizeof(*w->touched), int_cmp);
		return;
	}
	for (k = 0; k < w->nkeys; k++)
		if (w->is_touched[k])
			w->touched[n++] = (int)k;
}

int cct_walk_add(struct cct_walk *w, const int *leaves, size_t nleaves, const int64_t *vals)
{
	const struct cct *t = w->t;
	size_t steps = 0, j;
	int rc = 0;

	if (!vals)
		vals = t->self;
	/* A walk up from each leaf costs the sum of their depths; a pass, a few steps a node. */
	for (j = 0; j < nleaves && steps <= 4 * t->n; j++)
		steps += (size_t)t->nodes[leaves[j]].depth;
	if (steps > 4 * t->n)
		rc = pass_tree(w, leaves, nleaves, vals);
	else
		for (j = 0; j < nleaves; j++)
			walk_up(w, leaves[j], &vals[(size_t)leaves[j] * w->nm]);
	if (!rc)
		sort_touched(w);
	return rc;
}

void cct_walk_reset(struct cct_walk *w)
{
	size_t i, nm = w->nm;

	for (i = 0; i < w->ntouched; i++) {
		int k = w->touched[i];

		memset(&w->self[(size_t)k * nm], 0, nm * sizeof(*w->self));
		memset(&w->total[(size_t)k * nm], 0, nm * sizeof(*w->total));
		w->is_touched[k] = false;
	}
	w->ntouched = 0;
}

void cct_walk_release(struct cct_walk *w)
{
	FREE_ALL(w->link, w->self, w->total, w->touched, w->is_touched, w->stamp, w->sub, w->live,
		 w->active, w->kid_off, w->kids, w->visit);
	memset(w, 0, sizeof(*w));
}
