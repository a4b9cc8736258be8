/* SPDX-License-Identifier: MIT */
/* Caller-callee figures of one report: per function and per (caller, callee) edge. */
#ifndef PCOLLECT_REPORT_CALLERS_H
#define PCOLLECT_REPORT_CALLERS_H

#include "report/report-private.h"

struct edge {
	int caller, callee; /* function indexes */
};

struct callers {
	struct report *r;
	struct edge *edges;
	size_t nedges;
	struct cct_walk funcs; /* key: function; self and total per function and metric */
	struct cct_walk ewalk; /* key: edge; self and total per edge and metric */
};

/* Sum r's tree per function and per edge. Returns 0 or -ENOMEM. */
int callers_compute(struct callers *c, struct report *r);
void callers_release(struct callers *c);

/*
 * Edge indexes grouped by caller (or callee), each group heaviest first by the sort metric:
 * (*idx)[(*off)[f] .. (*off)[f + 1]) for function f. Caller frees both.
 */
int callers_index(struct callers *c, bool by_caller, int **idx, size_t **off);

/* The functions to show, heaviest first: -function's matches, or every one with a value. */
int callers_functions(struct callers *c, int **funcs, size_t *n);

#endif
