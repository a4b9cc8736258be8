/* SPDX-License-Identifier: MIT */
/* The top-down view: the calling-context tree from the outermost frames in. */
#include <errno.h>
#include <stdlib.h>

#include "report/report-private.h"

int view_topdown(struct report *r, struct table *t)
{
	const struct cct_node *nodes = r->tree.nodes;
	int name, total, totalp, self, selfp, depth, by_self;
	struct function_cols fc;
	int64_t min_ns = (int64_t)((double)r->total_ns * r->o->threshold / 100.0);
	size_t sp = 0, cap = 1024, rows = 0, pruned = 0, row;
	int *stack = malloc(cap * sizeof(int));
	int rc = 0;

	if (!stack)
		return -ENOMEM;
	name = table_add_col(t, "Function Stack", TABLE_TEXT, TABLE_TREE | TABLE_SHRINK);
	total = table_add_col(t, "CPU Time:Total", TABLE_TIME, 0);
	totalp = table_add_col(t, "CPU Time:Total %", TABLE_PCT, 0);
	self = table_add_col(t, "CPU Time:Self", TABLE_TIME, 0);
	selfp = table_add_col(t, "CPU Time:Self %", TABLE_PCT, 0);
	report_add_function_cols(t, &fc);
	depth = table_add_col(t, "Depth", TABLE_INT, TABLE_MACHINE);
	by_self = report_tree_sort(r, t, false);
	if (by_self < 0) {
		free(stack);
		return by_self;
	}

	row = table_add_row(t, 0);
	table_set_text(t, row, name, "Total");
	table_set_time(t, row, total, r->total_ns);
	table_set_pct(t, row, totalp, report_pct(r, r->total_ns));
	table_set_time(t, row, self, nodes[0].self_ns);
	table_set_pct(t, row, selfp, report_pct(r, nodes[0].self_ns));
	table_set_int(t, row, depth, 0);
	stack[sp++] = 0;
	while (sp) {
		int u = stack[--sp], *kids;
		size_t nkids, i;

		if (u) {
			const struct cct_node *n = &nodes[u];

			if (!n->total_ns || n->total_ns < min_ns) {
				pruned += n->total_ns > 0;
				continue;
			}
			if (r->o->limit > 0 && rows >= (size_t)r->o->limit)
				break;
			row = table_add_row(t, n->depth);
			rows++;
			table_set_text_ref(t, row, name, r->m.functions[n->func].name);
			table_set_time(t, row, total, n->total_ns);
			table_set_pct(t, row, totalp, report_pct(r, n->total_ns));
			table_set_time(t, row, self, n->self_ns);
			table_set_pct(t, row, selfp, report_pct(r, n->self_ns));
			report_set_function_cols(r, t, row, &fc, n->func);
			table_set_int(t, row, depth, n->depth);
		}
		if ((rc = report_sorted_children(r, u, by_self, &kids, &nkids)))
			break;
		if (sp + nkids > cap) {
			int *s;

			cap = 2 * (sp + nkids);
			s = realloc(stack, cap * sizeof(int));
			if (!s) {
				free(kids);
				rc = -ENOMEM;
				break;
			}
			stack = s;
		}
		for (i = nkids; i-- > 0;)
			stack[sp++] = kids[i];
		free(kids);
	}
	free(stack);
	if (!r->nrecs)
		table_add_note(t, "no samples match the filters");
	else if (pruned)
		table_add_note(t, "%zu call paths below %.3g%% of the total not shown "
			       "(-threshold 0 shows all)", pruned, r->o->threshold);
	return rc;
}
