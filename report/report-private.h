/* SPDX-License-Identifier: MIT */
/* What the views share: one opened result, its tree and its filtered samples. */
#ifndef PCOLLECT_REPORT_REPORT_PRIVATE_H
#define PCOLLECT_REPORT_REPORT_PRIVATE_H

#include <stdint.h>

#include "report/cct.h"
#include "report/model.h"
#include "report/report.h"
#include "report/table.h"

/* Samples kept by the filters, mapped onto the tree. */
struct record {
	int thread;
	int node;
	int64_t ns;
};

struct report {
	const struct report_opts *o;
	const char *dir;
	struct model m;
	struct cct tree;
	struct record *recs;
	size_t nrecs;
	int64_t total_ns; /* over the kept samples */
	int64_t total_count;
};

/* Open result dir (finalizing it when needed), load it, filter, build the tree. */
int report_open(struct report *r, const struct report_opts *o, const char *dir,
		unsigned cct_flags);
void report_close(struct report *r);

/* log_error() the message and return -ERR_USAGE: preport exits with status 2. */
int report_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Percent of the report's total. */
double report_pct(const struct report *r, int64_t ns);

/* Indexes of the functions called name (exact), or a usage error naming the nearest one. */
int report_find_functions(const struct report *r, const char *name, int **out, size_t *n);

/*
 * The sort metric of tree views from -sort-desc: 0 total (default), 1 self; a usage error
 * for any other column.
 */
int report_tree_sort(const struct report *r, const struct table *t, bool self_default);

/* Apply -sort-desc (or default_col) and -limit to a flat table. */
int report_sort_limit(const struct report *r, struct table *t, const char *default_col);

/* Short labels. */
const char *report_module_name(const struct report *r, int func);
const char *report_file_path(const struct report *r, int file);
const char *report_basename(const char *path);

/* Columns describing a function: Module, Source File, Source Line. */
struct function_cols {
	int module, file, line;
};
void report_add_function_cols(struct table *t, struct function_cols *c);
void report_set_function_cols(const struct report *r, struct table *t, size_t row,
			      const struct function_cols *c, int func);

/* Children of node in the tree, sorted by total (or self) time, heaviest first. */
int report_sorted_children(const struct report *r, int node, bool by_self, int **out,
			   size_t *n);

/* The views: each fills t. */
int view_summary(struct report *r, struct table *t);
int view_summary_text(struct report *r, const struct table *t, FILE *f);
int view_hotspots(struct report *r, struct table *t);
int view_topdown(struct report *r, struct table *t);
int view_bottomup(struct report *r, struct table *t);
int view_callers(struct report *r, struct table *t);
int view_callstacks(struct report *r, struct table *t);
int view_source(struct report *r, struct table *t);
int view_hotspots_diff(struct report *a, struct report *b, struct table *t);
int view_topdown_diff(struct report *a, struct report *b, struct table *t);

#endif
