/* SPDX-License-Identifier: MIT */
/* The bottom-up view: each hotspot, then the callers that led to it, with each path's time. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "report/report-private.h"

/* Deeper caller chains are cut (a note says so) so recursion cannot exhaust the C stack. */
#define MAX_DEPTH 2048

/* A share of a hotspot's self time, and the tree node reached while walking to the callers. */
struct entry {
	int cur;
	int func;
	int64_t ns;
};

/* A run of entries with the same function. */
struct run {
	size_t start, len;
	int func;
	int64_t ns;
};

struct bottomup {
	struct report *r;
	struct table *t;
	int name, self, selfp, depth;
	struct function_cols fc;
	int64_t min_ns;
	size_t pruned;
	bool cut;
};

static int by_func(const void *pa, const void *pb)
{
	const struct entry *a = pa, *b = pb;

	if (a->func != b->func)
		return a->func < b->func ? -1 : 1;
	return a->cur < b->cur ? -1 : a->cur > b->cur;
}

static int by_time(const void *pa, const void *pb)
{
	const struct run *a = pa, *b = pb;

	if (a->ns != b->ns)
		return a->ns > b->ns ? -1 : 1;
	return a->func < b->func ? -1 : a->func > b->func;
}

/* Sort e by function and cut it into runs, heaviest first. Caller frees *runs. */
static int make_runs(struct entry *e, size_t n, struct run **runs, size_t *nruns)
{
	size_t i, k = 0;

	qsort(e, n, sizeof(*e), by_func);
	*runs = malloc((n + 1) * sizeof(**runs));
	if (!*runs)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		if (!i || e[i].func != e[i - 1].func)
			(*runs)[k++] = (struct run){ i, 0, e[i].func, 0 };
		(*runs)[k - 1].len++;
		(*runs)[k - 1].ns += e[i].ns;
	}
	qsort(*runs, k, sizeof(**runs), by_time);
	*nruns = k;
	return 0;
}

static int emit(struct bottomup *b, struct entry *e, size_t n, const struct run *run,
		int depth)
{
	const struct cct_node *nodes = b->r->tree.nodes;
	struct entry *up;
	struct run *runs = NULL;
	size_t i, m = 0, nruns;
	size_t row;
	int rc = 0;

	row = table_add_row(b->t, depth);
	table_set_text_ref(b->t, row, b->name, b->r->m.functions[run->func].name);
	table_set_time(b->t, row, b->self, run->ns);
	table_set_pct(b->t, row, b->selfp, report_pct(b->r, run->ns));
	report_set_function_cols(b->r, b->t, row, &b->fc, run->func);
	table_set_int(b->t, row, b->depth, depth);
	if (depth >= MAX_DEPTH) {
		b->cut = true;
		return 0;
	}
	/* One step up: each share moves to its caller; shares that reached the root end here. */
	up = malloc((n + 1) * sizeof(*up));
	if (!up)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		int p = nodes[e[i].cur].parent;

		if (p > 0)
			up[m++] = (struct entry){ p, nodes[p].func, e[i].ns };
	}
	rc = make_runs(up, m, &runs, &nruns);
	for (i = 0; !rc && i < nruns; i++) {
		if (runs[i].ns < b->min_ns) {
			b->pruned++;
			continue;
		}
		rc = emit(b, up + runs[i].start, runs[i].len, &runs[i], depth + 1);
	}
	free(runs);
	free(up);
	return rc;
}

int view_bottomup(struct report *r, struct table *t)
{
	const struct cct_node *nodes = r->tree.nodes;
	struct bottomup b = { .r = r, .t = t };
	struct entry *e;
	struct run *runs = NULL;
	size_t i, n = 0, nruns = 0, shown = 0;
	int rc;

	b.name = table_add_col(t, "Function Stack", TABLE_TEXT, TABLE_TREE | TABLE_SHRINK);
	b.self = table_add_col(t, "CPU Time:Self", TABLE_TIME, 0);
	b.selfp = table_add_col(t, "CPU Time:Self %", TABLE_PCT, 0);
	report_add_function_cols(t, &b.fc);
	b.depth = table_add_col(t, "Depth", TABLE_INT, TABLE_MACHINE);
	b.min_ns = (int64_t)((double)r->total_ns * r->o->threshold / 100.0);
	if (r->o->sort_desc && strcmp(r->o->sort_desc, "CPU Time:Self") &&
	    strcmp(r->o->sort_desc, "CPU Time:Self %"))
		return report_usage_error("the bottom-up view sorts by 'CPU Time:Self' only, "
					  "not '%s'", r->o->sort_desc);
	e = malloc(r->tree.n * sizeof(*e));
	if (!e)
		return -ENOMEM;
	for (i = 1; i < r->tree.n; i++)
		if (nodes[i].self_ns)
			e[n++] = (struct entry){ (int)i, nodes[i].func, nodes[i].self_ns };
	rc = make_runs(e, n, &runs, &nruns);
	for (i = 0; !rc && i < nruns; i++) {
		if (runs[i].ns < b.min_ns || (r->o->limit > 0 && shown >= (size_t)r->o->limit)) {
			b.pruned++;
			continue;
		}
		shown++;
		rc = emit(&b, e + runs[i].start, runs[i].len, &runs[i], 0);
	}
	free(runs);
	free(e);
	if (!r->nrecs)
		table_add_note(t, "no samples match the filters");
	else if (b.pruned)
		table_add_note(t, "%zu functions or call paths below %.3g%% of the total not shown "
			       "(-threshold 0 shows all)", b.pruned, r->o->threshold);
	if (b.cut)
		table_add_note(t, "call paths deeper than %d callers are cut", MAX_DEPTH);
	return rc;
}
