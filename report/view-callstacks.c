/* SPDX-License-Identifier: MIT */
/* The callstacks view: each distinct stack with its values, heaviest first. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/cmp.h"
#include "report/report-private.h"

struct leaf_order {
	const struct cct *tree;
	size_t k;
	const int *top;  /* per node: its group of the last level, NULL without groups */
	const int *rank; /* per group node: its place among the groups */
};

/* By group (in the groups' order), then heaviest first. */
static int heavier(const void *pa, const void *pb, void *arg)
{
	const struct leaf_order *o = arg;
	int a = *(const int *)pa, b = *(const int *)pb;
	int64_t va = o->tree->self[(size_t)a * o->tree->nm + o->k];
	int64_t vb = o->tree->self[(size_t)b * o->tree->nm + o->k];

	int c = o->top ? CMP(o->rank[o->top[a]], o->rank[o->top[b]]) : 0;

	return CMP_THEN(c, CMP_THEN(CMP(vb, va), CMP(a, b)));
}

/* "main;compute;kernel": outermost first, the folded format flame graph tools read. */
static char *folded(const struct report *r, int node)
{
	const struct cct_node *nodes = r->tree.nodes;
	size_t len = 0, pos;
	char *s;
	int u;

	for (u = node; u > 0 && nodes[u].func >= 0; u = nodes[u].parent)
		len += strlen(report_function_name(r, nodes[u].func)) + 1;
	s = malloc(len + 1);
	if (!s)
		return NULL;
	pos = len;
	s[len] = '\0';
	for (u = node; u > 0 && nodes[u].func >= 0; u = nodes[u].parent) {
		const char *name = report_function_name(r, nodes[u].func);
		size_t n = strlen(name);

		if (pos < len)
			s[--pos] = ';';
		pos -= n;
		memcpy(s + pos, name, n);
	}
	memmove(s, s + pos, len - pos + 1);
	return s;
}

/* The group rows above a leaf whose groups differ from the previous leaf's. */
static void group_rows(struct report *r, struct table *t, int name, int group,
		       const struct metric_cols *mc, int leaf, int prev)
{
	const struct cct_node *nodes = r->tree.nodes;
	int path[REPORT_MAX_LEVELS], d, u;
	char label[512];

	for (u = leaf; u > 0; u = nodes[u].parent)
		if (cct_group_of(&nodes[u]) >= 0 && nodes[u].depth <= (int)r->nlevels)
			path[nodes[u].depth - 1] = u;
	for (d = 0; d < (int)r->nlevels; d++) {
		size_t row;

		/* A level whose group is the previous leaf's needs no row. */
		for (u = prev; u > 0 && nodes[u].depth > d + 1; u = nodes[u].parent)
			;
		if (prev > 0 && u == path[d])
			continue;
		row = table_add_row(t, d);
		table_set_text(t, row, name,
			       report_group_label(r, &r->tree, path[d], label, sizeof(label)));
		table_set_text_ref(t, row, group, report_group_kind(&r->tree, path[d]));
		report_set_metric_cols(r, t, row, mc, cct_total(&r->tree, path[d]), NULL);
		prev = 0;
	}
}

int view_callstacks(struct report *r, struct table *t)
{
	const struct cct *tree = &r->tree;
	const struct cct_node *nodes = tree->nodes;
	struct leaf_order o = { .tree = tree, .k = (size_t)r->sort_metric };
	struct metric_cols mc;
	int stack_col, samples, func, module, path, group = -1, prev = 0;
	size_t n = 0, i, shown = 0, pruned = 0;
	int *leaves = malloc(tree->n * sizeof(int)), *top = NULL, *rank = NULL;
	int base = (int)r->nlevels, rc = 0;

	if (!leaves)
		return -ENOMEM;
	stack_col = table_add_col(t, "Stack", TABLE_INT, 0);
	report_add_metric_cols(r, t, &mc, MC_SELF);
	samples = table_add_col(t, "Samples", TABLE_INT, 0);
	func = table_add_col(t, "Function", TABLE_TEXT, TABLE_TREE | TABLE_NAME);
	module = table_add_col(t, "Module", TABLE_TEXT, TABLE_SHRINK | TABLE_DETAIL);
	path = table_add_col(t, "Call Stack", TABLE_TEXT, TABLE_MACHINE);
	if (r->nlevels)
		group = table_add_col(t, "Group", TABLE_TEXT, TABLE_MACHINE);
	for (i = 1; i < tree->n; i++)
		if (nodes[i].func >= 0 && cct_has_self(tree, (int)i))
			leaves[n++] = (int)i;
	if (r->nlevels) {
		/* Groups in the order of a depth-first walk, children heaviest first. */
		int *kids, *st = malloc((tree->n + 1) * sizeof(int));
		size_t sp = 0, nk, k, next = 0;

		top = malloc(tree->n * sizeof(int));
		rank = calloc(tree->n, sizeof(int));
		if (!st || !top || !rank) {
			free(st);
			rc = -ENOMEM;
			goto out;
		}
		top[0] = 0;
		for (i = 1; i < tree->n; i++)
			top[i] = nodes[i].depth == base ? (int)i : top[nodes[i].parent];
		st[sp++] = 0;
		while (sp && !rc) {
			int u = st[--sp];

			rank[u] = (int)next++;
			if (nodes[u].depth == base)
				continue;
			if ((rc = report_sorted_children(r, tree, u, &kids, &nk)))
				break;
			for (k = nk; k-- > 0;)
				if (cct_group_of(&nodes[kids[k]]) >= 0)
					st[sp++] = kids[k];
			free(kids);
		}
		free(st);
		o.top = top;
		o.rank = rank;
	}
	qsort_r(leaves, n, sizeof(int), heavier, &o);
	for (i = 0; !rc && i < n; i++) {
		const struct cct_node *leaf = &nodes[leaves[i]];
		const int64_t *self = cct_self(tree, leaves[i]);
		size_t row;
		char *fold;
		int u;

		if (!report_passes(r, self) || (r->o->limit > 0 && shown >= (size_t)r->o->limit)) {
			pruned += report_any_shown(r, self);
			continue;
		}
		if (shown++)
			table_add_separator(t);
		if (r->nlevels)
			group_rows(r, t, func, group, &mc, leaves[i], prev);
		prev = leaves[i];
		row = table_add_row(t, base);
		table_set_int(t, row, stack_col, (int64_t)shown);
		report_set_metric_cols(r, t, row, &mc, self, NULL);
		table_set_int(t, row, samples,
			      tree->count[(size_t)leaves[i] * tree->nm + (size_t)r->sort_metric]);
		table_set_text_ref(t, row, func, report_function_name(r, leaf->func));
		table_set_text_ref(t, row, module, report_module_name(r, leaf->func));
		fold = folded(r, leaves[i]);
		if (!fold) {
			rc = -ENOMEM;
			break;
		}
		table_set_text(t, row, path, fold);
		free(fold);
		for (u = leaf->parent; u > 0 && nodes[u].func >= 0; u = nodes[u].parent) {
			row = table_add_row(t, base + 1);
			table_set_row_flags(t, row, TABLE_ROW_TEXT_ONLY);
			table_set_text_ref(t, row, func, report_function_name(r, nodes[u].func));
			table_set_text_ref(t, row, module, report_module_name(r, nodes[u].func));
		}
	}
out:
	free(leaves);
	free(top);
	free(rank);
	if (!rc && !r->nrecs)
		table_add_note(t, "no samples match the filters");
	else if (!rc && pruned)
		table_add_note(t,
			       "%zu stacks not shown (below %.3g%% of the total or past -limit; "
			       "-threshold 0 shows all)",
			       pruned, r->o->threshold);
	return rc;
}
