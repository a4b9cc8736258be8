/* SPDX-License-Identifier: MIT */
/* Unit tests of preport's tree: the inclusive/exclusive walk, derived and inverted trees. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/cct.h"
#include "tests/unit/unit.h"

#define NFUNC 7
#define NM    2

/* A model of random stacks over NFUNC functions (recursion included): frame i is function i. */
struct fixture {
	struct model m;
	struct model_function funcs[NFUNC];
	struct model_frame frames[NFUNC];
	struct model_stack *stacks;
	int *order;
	size_t nstacks;
};

static unsigned rnd_state = 2463534242u;

static unsigned rnd(unsigned n)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 17;
	rnd_state ^= rnd_state << 5;
	return rnd_state % n;
}

/* The stack node (parent, frame), made when missing. */
static int stack_of(struct fixture *f, int parent, int frame)
{
	size_t i;

	for (i = 0; i < f->nstacks; i++)
		if (f->stacks[i].parent == parent && f->stacks[i].frame == frame)
			return (int)i;
	f->stacks[f->nstacks] = (struct model_stack){ parent, frame };
	f->order[f->nstacks] = (int)f->nstacks;
	return (int)f->nstacks++;
}

static void fixture_make(struct fixture *f, size_t npaths, int maxdepth)
{
	static char names[NFUNC][8];
	static struct model_metric metrics[NM] = {
		{ .name = "A", .unit = MODEL_UNIT_NS },
		{ .name = "B", .unit = MODEL_UNIT_BYTES },
	};
	size_t p;
	int i;

	memset(f, 0, sizeof(*f));
	f->stacks = calloc(npaths * (size_t)maxdepth + 1, sizeof(*f->stacks));
	f->order = calloc(npaths * (size_t)maxdepth + 1, sizeof(*f->order));
	for (i = 0; i < NFUNC; i++) {
		snprintf(names[i], sizeof(names[i]), "f%d", i);
		f->funcs[i] = (struct model_function){
			.name = names[i], .module = -1, .file = -1, .resolved = true
		};
		f->frames[i] = (struct model_frame){ .function = i, .module = -1, .file = -1 };
	}
	for (p = 0; p < npaths; p++) {
		int depth = 1 + (int)rnd((unsigned)maxdepth), s = -1, d;

		for (d = 0; d < depth; d++)
			s = stack_of(f, s, (int)rnd(NFUNC));
	}
	f->m.functions = f->funcs;
	f->m.nfunctions = NFUNC;
	f->m.frames = f->frames;
	f->m.nframes = NFUNC;
	f->m.stacks = f->stacks;
	f->m.nstacks = f->nstacks;
	f->m.stack_order = f->order;
	f->m.metrics = metrics;
	f->m.nmetrics = NM;
}

static void fixture_free(struct fixture *f)
{
	free(f->stacks);
	free(f->order);
}

/* A tree of the fixture with random values at random stacks. */
static void tree_make(struct cct *t, struct fixture *f, size_t nsamples)
{
	size_t i;

	CU_ASSERT_EQUAL_FATAL(cct_build(t, &f->m, CCT_ALL_FRAMES, NULL), 0);
	for (i = 0; i < nsamples; i++) {
		int node = cct_leaf(t, (int)rnd((unsigned)f->nstacks));

		CU_ASSERT_FATAL(node > 0);
		cct_add(t, node, (int)rnd(NM), 1 + rnd(1000), 1);
	}
	CU_ASSERT_EQUAL_FATAL(cct_sum(t), 0);
}

/* Self and total per key by the rule itself: every value once per distinct key on its path. */
static void brute(const struct cct *t, const int *key, size_t nkeys, int64_t *self, int64_t *total)
{
	size_t x, k;
	int u;

	memset(self, 0, nkeys * NM * sizeof(*self));
	memset(total, 0, nkeys * NM * sizeof(*total));
	for (x = 1; x < t->n; x++) {
		bool seen[64] = { false };

		for (k = 0; k < NM; k++)
			if (key[x] >= 0)
				self[key[x] * NM + k] += cct_self(t, (int)x)[k];
		for (u = (int)x; u > 0; u = t->nodes[u].parent) {
			if (key[u] < 0 || seen[key[u]])
				continue;
			seen[key[u]] = true;
			for (k = 0; k < NM; k++)
				total[key[u] * NM + k] += cct_self(t, (int)x)[k];
		}
	}
}

/* The walk agrees with the rule, by both of its ways: a walk up per leaf and a tree pass. */
static void test_report_cct_walk_matches_rule(void)
{
	int round;

	for (round = 0; round < 20; round++) {
		struct fixture f;
		struct cct t;
		struct cct_walk w;
		int64_t self[64 * NM], total[64 * NM];
		int *key, *leaves;
		size_t n = 0, i, nkeys = round % 2 ? NFUNC : 3;
		int pass;

		fixture_make(&f, 50 + rnd(200), 3 + round);
		tree_make(&t, &f, 2000);
		key = malloc(t.n * sizeof(*key));
		leaves = malloc(t.n * sizeof(*leaves));
		CU_ASSERT_PTR_NOT_NULL_FATAL(key);
		CU_ASSERT_PTR_NOT_NULL_FATAL(leaves);
		/* Keys: the function, or (odd rounds off) functions folded onto 3 keys, some none.
		 */
		key[0] = -1;
		for (i = 1; i < t.n; i++) {
			key[i] = nkeys == NFUNC ? t.nodes[i].func : t.nodes[i].func % 4 - 1;
			if (cct_has_self(&t, (int)i))
				leaves[n++] = (int)i;
		}
		brute(&t, key, nkeys, self, total);
		for (pass = 0; pass < 2; pass++) {
			size_t k, bad = 0;

			CU_ASSERT_EQUAL_FATAL(cct_walk_init(&w, &t, key, nkeys), 0);
			if (pass == 0) { /* all leaves at once: deep trees take the tree pass */
				CU_ASSERT_EQUAL(cct_walk_add(&w, leaves, n, NULL), 0);
			} else { /* leaf by leaf: walks up */
				for (i = 0; i < n; i++)
					CU_ASSERT_EQUAL(cct_walk_add(&w, &leaves[i], 1, NULL), 0);
			}
			for (k = 0; k < nkeys * NM; k++)
				bad += w.self[k] != self[k] || w.total[k] != total[k];
			CU_ASSERT_EQUAL(bad, 0);
			for (k = 1; k < w.ntouched; k++)
				CU_ASSERT(w.touched[k - 1] < w.touched[k]);
			cct_walk_reset(&w);
			for (k = 0; k < nkeys * NM; k++)
				bad += w.self[k] || w.total[k];
			CU_ASSERT_EQUAL(bad, 0);
			cct_walk_release(&w);
		}
		free(key);
		free(leaves);
		cct_release(&t);
		fixture_free(&f);
	}
}

/* Collapsing recursion moves every value to the outermost frame of its function. */
static void test_report_cct_collapse_recursion(void)
{
	struct fixture f;
	struct cct t, d;
	size_t i, x;
	int round;

	for (round = 0; round < 10; round++) {
		fixture_make(&f, 100, 12);
		tree_make(&t, &f, 1000);
		CU_ASSERT_EQUAL_FATAL(cct_derive_init(&d, &t), 0);
		for (x = 1; x < t.n; x++) {
			int node;

			if (!cct_has_self(&t, (int)x))
				continue;
			node = cct_derive_node(&d, &t, 0, (int)x, true);
			CU_ASSERT_FATAL(node > 0);
			CU_ASSERT_EQUAL(d.nodes[node].func, t.nodes[x].func);
			for (i = 0; i < NM; i++)
				cct_add(&d, node, (int)i, cct_self(&t, (int)x)[i], 0);
		}
		CU_ASSERT_EQUAL_FATAL(cct_sum(&d), 0);
		/* No function twice on a path, and the same total. */
		for (x = 1; x < d.n; x++) {
			int u;

			for (u = d.nodes[x].parent; u > 0; u = d.nodes[u].parent)
				CU_ASSERT_NOT_EQUAL(d.nodes[u].func, d.nodes[x].func);
		}
		for (i = 0; i < NM; i++)
			CU_ASSERT_EQUAL(cct_total(&d, 0)[i], cct_total(&t, 0)[i]);
		cct_release(&d);
		cct_release(&t);
		fixture_free(&f);
	}
}

/* Group nodes put the same function path under each group; the inverted tree sums up. */
static void test_report_cct_groups_and_callers(void)
{
	struct fixture f;
	struct cct t, d, inv;
	size_t x, k;
	int g[2], node, c;
	int64_t sum[NM] = { 0 };

	fixture_make(&f, 60, 8);
	tree_make(&t, &f, 500);
	CU_ASSERT_EQUAL_FATAL(cct_derive_init(&d, &t), 0);
	g[0] = cct_derive_group(&d, 0, CCT_GROUP_THREAD, 7);
	g[1] = cct_derive_group(&d, 0, CCT_GROUP_THREAD, -1);
	CU_ASSERT(g[0] > 0 && g[1] > 0 && g[0] != g[1]);
	CU_ASSERT_EQUAL(cct_derive_group(&d, 0, CCT_GROUP_THREAD, 7), g[0]);
	CU_ASSERT_EQUAL(d.groups[cct_group_of(&d.nodes[g[0]])].item, 7);
	for (x = 1; x < t.n; x++) {
		if (!cct_has_self(&t, (int)x))
			continue;
		for (c = 0; c < 2; c++) {
			node = cct_derive_node(&d, &t, g[c], (int)x, false);
			CU_ASSERT_FATAL(node > 0);
			CU_ASSERT_EQUAL(d.nodes[node].depth, t.nodes[x].depth + 1);
			for (k = 0; k < NM; k++)
				cct_add(&d, node, (int)k, cct_self(&t, (int)x)[k], 0);
		}
	}
	CU_ASSERT_EQUAL_FATAL(cct_sum(&d), 0);
	for (k = 0; k < NM; k++) {
		CU_ASSERT_EQUAL(cct_total(&d, g[0])[k], cct_total(&t, 0)[k]);
		CU_ASSERT_EQUAL(cct_total(&d, 0)[k], 2 * cct_total(&t, 0)[k]);
	}
	/* Callers' tree: the first level holds each function's self, summed over its nodes. */
	CU_ASSERT_EQUAL_FATAL(cct_invert(&inv, &t), 0);
	for (c = inv.nodes[0].first_child; c >= 0; c = inv.nodes[c].next_sibling) {
		int64_t want[NM] = { 0 };

		for (x = 1; x < t.n; x++)
			if (t.nodes[x].func == inv.nodes[c].func)
				for (k = 0; k < NM; k++)
					want[k] += cct_self(&t, (int)x)[k];
		for (k = 0; k < NM; k++) {
			CU_ASSERT_EQUAL(cct_total(&inv, c)[k], want[k]);
			sum[k] += cct_total(&inv, c)[k];
		}
	}
	for (k = 0; k < NM; k++)
		CU_ASSERT_EQUAL(sum[k], cct_total(&t, 0)[k]);
	cct_release(&inv);
	cct_release(&d);
	cct_release(&t);
	fixture_free(&f);
}

UNIT_MAIN("report-cct", NULL, NULL,
	  {
		  { "walk_matches_rule", test_report_cct_walk_matches_rule },
		  { "collapse_recursion", test_report_cct_collapse_recursion },
		  { "groups_and_callers", test_report_cct_groups_and_callers },
	  })
