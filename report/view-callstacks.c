/* SPDX-License-Identifier: MIT */
/* The callstacks view: each distinct stack with its time, heaviest first. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "report/report-private.h"

static const struct cct_node *cmp_nodes;

static int heavier(const void *pa, const void *pb)
{
	int a = *(const int *)pa, b = *(const int *)pb;

	if (cmp_nodes[a].self_ns != cmp_nodes[b].self_ns)
		return cmp_nodes[a].self_ns > cmp_nodes[b].self_ns ? -1 : 1;
	return a < b ? -1 : a > b;
}

/* "main;compute;kernel": outermost first, the folded format flame graph tools read. */
static char *folded(const struct report *r, int node)
{
	const struct cct_node *nodes = r->tree.nodes;
	size_t len = 0, pos;
	char *s;
	int u;

	for (u = node; u > 0; u = nodes[u].parent)
		len += strlen(r->m.functions[nodes[u].func].name) + 1;
	s = malloc(len + 1);
	if (!s)
		return NULL;
	pos = len;
	s[len] = '\0';
	for (u = node; u > 0; u = nodes[u].parent) {
		const char *name = r->m.functions[nodes[u].func].name;
		size_t n = strlen(name);

		if (pos < len)
			s[--pos] = ';';
		pos -= n;
		memcpy(s + pos, name, n);
	}
	memmove(s, s + pos, len - pos + 1);
	return s;
}

int view_callstacks(struct report *r, struct table *t)
{
	const struct cct_node *nodes = r->tree.nodes;
	int stack_col, self, selfp, samples, func, module, path;
	int64_t min_ns = (int64_t)((double)r->total_ns * r->o->threshold / 100.0);
	size_t n = 0, i, shown = 0, pruned = 0;
	int *leaves = malloc(r->tree.n * sizeof(int));

	if (!leaves)
		return -ENOMEM;
	stack_col = table_add_col(t, "Stack", TABLE_INT, 0);
	self = table_add_col(t, "CPU Time:Self", TABLE_TIME, 0);
	selfp = table_add_col(t, "CPU Time:Self %", TABLE_PCT, 0);
	samples = table_add_col(t, "Samples", TABLE_INT, 0);
	func = table_add_col(t, "Function", TABLE_TEXT, TABLE_TREE | TABLE_SHRINK);
	module = table_add_col(t, "Module", TABLE_TEXT, TABLE_SHRINK);
	path = table_add_col(t, "Call Stack", TABLE_TEXT, TABLE_MACHINE);
	if (r->o->sort_desc && strcmp(r->o->sort_desc, "CPU Time:Self") &&
	    strcmp(r->o->sort_desc, "CPU Time:Self %")) {
		free(leaves);
		return report_usage_error("the callstacks view sorts by 'CPU Time:Self' only, "
					  "not '%s'", r->o->sort_desc);
	}
	for (i = 1; i < r->tree.n; i++)
		if (nodes[i].self_ns)
			leaves[n++] = (int)i;
	cmp_nodes = nodes;
	qsort(leaves, n, sizeof(int), heavier);
	for (i = 0; i < n; i++) {
		const struct cct_node *leaf = &nodes[leaves[i]];
		size_t row;
		char *fold;
		int u;

		if (leaf->self_ns < min_ns || (r->o->limit > 0 && shown >= (size_t)r->o->limit)) {
			pruned++;
			continue;
		}
		if (shown++)
			table_add_separator(t);
		row = table_add_row(t, 0);
		table_set_int(t, row, stack_col, (int64_t)shown);
		table_set_time(t, row, self, leaf->self_ns);
		table_set_pct(t, row, selfp, report_pct(r, leaf->self_ns));
		table_set_int(t, row, samples, r->tree.self_count[leaves[i]]);
		table_set_text_ref(t, row, func, r->m.functions[leaf->func].name);
		table_set_text_ref(t, row, module, report_module_name(r, leaf->func));
		fold = folded(r, leaves[i]);
		if (!fold) {
			free(leaves);
			return -ENOMEM;
		}
		table_set_text(t, row, path, fold);
		free(fold);
		for (u = leaf->parent; u > 0; u = nodes[u].parent) {
			row = table_add_row(t, 1);
			table_set_row_flags(t, row, TABLE_ROW_TEXT_ONLY);
			table_set_text_ref(t, row, func, r->m.functions[nodes[u].func].name);
			table_set_text_ref(t, row, module, report_module_name(r, nodes[u].func));
		}
	}
	free(leaves);
	if (!r->nrecs)
		table_add_note(t, "no samples match the filters");
	else if (pruned)
		table_add_note(t, "%zu stacks not shown (below %.3g%% of the total or past -limit; "
			       "-threshold 0 shows all)", pruned, r->o->threshold);
	return 0;
}
