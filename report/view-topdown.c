/* SPDX-License-Identifier: MIT */
/* The top-down view: the calling-context tree from the outermost frames in. */
#include <errno.h>
#include <stdlib.h>

#include "common/grow.h"
#include "report/report-private.h"

int view_topdown(struct report *r, struct table *t)
{
	const struct cct *tree = &r->tree;
	const struct cct_node *nodes = tree->nodes;
	struct metric_cols mc;
	struct function_cols fc;
	int name, depth, group = -1;
	size_t sp = 0, cap = 1024, rows = 0, pruned = 0, row;
	int *stack = malloc(cap * sizeof(int));
	char label[512];
	int rc = 0;

	if (!stack)
		return -ENOMEM;
	name = table_add_col(t, "Function Stack", TABLE_TEXT, TABLE_TREE | TABLE_NAME);
	report_add_metric_cols(r, t, &mc, MC_TOTAL | MC_SELF | MC_TOTAL_FIRST);
	report_add_function_cols(t, &fc);
	if (r->nlevels)
		group = table_add_col(t, "Group", TABLE_TEXT, TABLE_MACHINE);
	depth = table_add_col(t, "Depth", TABLE_INT, TABLE_MACHINE);

	row = table_add_row(t, 0);
	table_set_text(t, row, name, "Total");
	report_set_metric_cols(r, t, row, &mc, cct_self(tree, 0), r->total);
	table_set_int(t, row, depth, 0);
	stack[sp++] = 0;
	while (sp) {
		int u = stack[--sp], *kids;
		size_t nkids, i;

		if (u) {
			const struct cct_node *n = &nodes[u];
			const int64_t *total = cct_total(tree, u);

			if (!report_passes(r, total)) {
				pruned += report_any_shown(r, total);
				continue;
			}
			if (r->o->limit > 0 && rows >= (size_t)r->o->limit)
				break;
			row = table_add_row(t, n->depth);
			rows++;
			if (n->func >= 0) {
				table_set_text_ref(t, row, name, report_function_name(r, n->func));
				report_set_function_cols(r, t, row, &fc, n->func);
			} else {
				table_set_text(t, row, name,
					       report_group_label(r, tree, u, label,
								  sizeof(label)));
				table_set_text_ref(t, row, group, report_group_kind(tree, u));
			}
			report_set_metric_cols(r, t, row, &mc, cct_self(tree, u), total);
			table_set_int(t, row, depth, n->depth);
		}
		if ((rc = report_sorted_children(r, tree, u, &kids, &nkids)))
			break;
		if (GROW(stack, sp + nkids, cap)) {
			free(kids);
			rc = -ENOMEM;
			break;
		}
		for (i = nkids; i-- > 0;)
			stack[sp++] = kids[i];
		free(kids);
	}
	free(stack);
	if (!r->nrecs)
		table_add_note(t, "no samples match the filters");
	else
		report_note_pruned(r, t, pruned, "call paths");
	return rc;
}
