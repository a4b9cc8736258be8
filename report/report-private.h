/* SPDX-License-Identifier: MIT */
/* What the views share: one opened result, its tree, its filtered samples and its metrics. */
#ifndef PCOLLECT_REPORT_REPORT_PRIVATE_H
#define PCOLLECT_REPORT_REPORT_PRIVATE_H

#include <stdint.h>

#include "report/cct.h"
#include "report/model.h"
#include "report/report.h"
#include "report/table.h"

/* Metrics a report shows at most (a result declares a handful). */
#define REPORT_MAX_METRICS 32
/* Levels of -group-by in tree views (process, thread, module, rank, wait-kind,
   sync-object, node, region). */
#define REPORT_MAX_LEVELS 11

/*
 * A sample kept by the filters, mapped onto the tree. Its thread, metric, context (grouping
 * by context attributes comes there), count and value are the model's sample's: the record
 * only points at it, so the records of a million samples stay small.
 */
struct record {
	int sample; /* index into model.samples */
	int node;
};

struct report;

/* One view: its name, how it runs on one result and on two, and what it accepts. */
enum report_view_flags {
	VIEW_LINES = 1 << 0,         /* one tree node per function and source line */
	VIEW_TREE = 1 << 1,          /* -group-by thread, process, module as tree levels;
					-recursion-mode */
	VIEW_RECURSION = 1 << 8,     /* -recursion-mode only */
	VIEW_FLAT_GROUPS = 1 << 2,   /* -group-by as the keys of flat rows (hotspots) */
	VIEW_FUNCTION = 1 << 3,      /* takes -function */
	VIEW_SOURCE_OBJECT = 1 << 4, /* takes -source-object */
	VIEW_SORT_TOTAL = 1 << 5,    /* sorted by total; a metric named alone means its total */
	VIEW_SELF_ONLY = 1 << 6,     /* sorted by a metric's self only */
	VIEW_NO_SORT = 1 << 7,       /* rows in an order of their own: -sort-desc refused */
	VIEW_TIME = 1 << 9,          /* rows per time bucket: takes -time-buckets */
	VIEW_FRAME_LINES = 1 << 10,  /* reads the frames' lines (the summary's call sites) */
};

/*
 * empty.c: tell why an opened result holds no samples (damaged or refused streams, samples
 * all lost, what the collector noted, a run shorter than an interval, a crash before the first
 * sample), as the error of a report that cannot be made.
 */
void report_explain_empty(const struct report *r);

struct report_view {
	const char *name;
	int (*run)(struct report *r, struct table *t);
	int (*diff)(struct report *a, struct report *b, struct table *t); /* NULL: none */
	/* Text rendering of its own (NULL: table_render_text); width 0 is unlimited. */
	int (*text)(struct report *r, const struct table *t, FILE *f, int width);
	unsigned flags;
};

/* The side of a metric a tree is sorted and judged by. */
enum report_side {
	REPORT_SELF,
	REPORT_TOTAL,
};

struct report {
	const struct report_opts *o;
	const struct report_view *view;
	const char *dir;
	struct model m;
	struct cct tree;
	struct record *recs;
	size_t nrecs;
	int64_t *total; /* per metric: over the kept samples */
	int64_t *count; /* per metric: the events kept */
	int64_t *min;   /* per metric: the -threshold share of total (INT64_MAX: not judged) */
	int shown[REPORT_MAX_METRICS]; /* the metrics shown: -metric order, else display order */
	size_t nshown;
	int sort_metric; /* the metric trees are sorted by (-sort-desc, else the main one) */
	enum report_side sort_side;
	bool sort_given;         /* -sort-desc named a metric (or a metric's column) */
	const char *sort_column; /* flat tables: the column -sort-desc names, NULL: default */
	bool *skipped;           /* per metric: left out by -time-filter (peak metrics) */
	const char **fnames;     /* per function: the name shown (-name-style) */
	enum cct_group_kind levels[REPORT_MAX_LEVELS]; /* -group-by of tree views */
	size_t nlevels;
	int *stack_task; /* per stack: report_sample_task()'s answer, made at its first call */
	/* The result was made here by this user: the paths it names may be read (view-source.c). */
	bool own_paths;
};

/* The model's sample a record stands for. */
static inline const struct model_sample *report_sample(const struct report *r,
						       const struct record *rec)
{
	return &r->m.samples[rec->sample];
}

/* Open result dir (finalizing it when needed), load it, filter, build the tree. */
int report_open(struct report *r, const struct report_opts *o, const char *dir,
		const struct report_view *view);
void report_close(struct report *r);

/*
 * -metric, -sort-desc and -threshold (metric-choice.c): which metrics a view shows
 * (r->shown), sorts by (r->sort_metric, r->sort_side) and judges by (r->min). 0, a usage
 * error or -ENOMEM.
 */
int report_pick_metrics(struct report *r);

/*
 * The tree views' -group-by (levels.c): process, thread, module, rank, node, wait-kind,
 * sync-object and region as the top levels of the tree, into r->levels. 0 or a usage error.
 */
int report_tree_levels(struct report *r);
/* Tree views: the tree again, under r->levels and with recursion collapsed. 0 or -ENOMEM. */
int report_derive_tree(struct report *r);

/*
 * -report-output must not name a file of a result it reads (item 10 of issue 10), nor be a
 * link, a FIFO or anything else that is not a regular file (output.c): a usage error.
 */
int report_check_output(const struct report_opts *o);
/* Whether -r's value is a pattern of runs: it has a wildcard and names no existing path. */
bool report_is_pattern(const char *dir);
/*
 * Where a report is written: stdout, or a new file beside -report-output renamed over it by
 * report_output_close() when whole (no link followed, no FIFO waited on: docs/security.md).
 */
struct report_out {
	FILE *f;
	const char *path; /* -report-output, NULL for stdout */
	char tmp[4096];   /* the file being written */
};
/*
 * Open o's output into out: 0, or a negative errno told with log_error(). The file gets the
 * mode of the results it reports (result_file_mode(): 0600, or 0640 when every result is
 * group-readable), whatever the umask.
 */
int report_output_open(const struct report_opts *o, struct report_out *out);
/*
 * Close out after a write that gave rc: flushed, and the file renamed into place when all
 * went well, else removed. Returns rc, or the first error of the close.
 */
int report_output_close(struct report_out *out, int rc);
/*
 * t rendered in -format to -report-output (else stdout), a terminal's width unless -width:
 * 0 or a negative errno, told with log_error().
 */
int report_write(const struct report_opts *o, struct report *r, const struct table *t);

/*
 * -fail-if-slower (gate.c): judge the runs of b against those of a (the total and each
 * function above -threshold of the first shown metric), the verdicts as notes of t and in
 * -junit's file; *slower when one is slower by more than the percentage. 0 or a negative
 * errno, told.
 */
int report_gate(const struct report *a, const struct report *b, struct table *t, bool *slower);
/* report_run()'s answer when the gate found the new runs slower: exit 1, nothing to tell. */
#define REPORT_SLOWER (-ERR_USAGE - 1)

/* -time-filter's "A:B", seconds from the start, either side optional, into ns. 0 or a usage
   error. */
int report_parse_time_filter(const char *s, int64_t *from, int64_t *to);

/* log_error() the message and return -ERR_USAGE: preport exits with status 2. */
int report_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Percent of the report's total of metric. */
double report_pct(const struct report *r, int metric, int64_t v);

/*
 * The functions a name the user typed names (names.c): the exact name, else every function
 * whose qualified name ends with it ("relax" finds "physics::Grid<double>::relax(int)",
 * "step" finds "Simulation.step"). With single, names that match functions of different
 * full names are a usage error listing them; no match is one naming the nearest. what
 * names the option in messages ("-function"). *out is allocated, caller frees.
 */
int report_find_functions(const struct report *r, const char *name, bool single, const char *what,
			  int **out, size_t *n);

/* True when name names a function of r (as report_find_functions() matches), quietly. */
bool report_has_function(const struct report *r, const char *name);

/* The name a view shows for func (-name-style full or short). */
static inline const char *report_function_name(const struct report *r, int func)
{
	return r->fnames[func];
}

/* The wait kind (model.wait_kinds) and sync object (model.sync_objects) of a sample, -1 for
   a sample without a wait. */
int report_sample_wait_kind(const struct report *r, const struct model_sample *s);
int report_sample_sync_object(const struct report *r, const struct model_sample *s);
/* The rank (-1 outside a parallel job) and node (model.nodes) of a sample's process. */
int report_sample_rank(const struct report *r, const struct model_sample *s);
int report_sample_node(const struct report *r, const struct model_sample *s);
/* The run of a sample's process (runs merged: -r PATTERN): -1 when none. */
int report_sample_run(const struct report *r, const struct model_sample *s);
/* The region (model.regions) of a sample, -1 for none. */
int report_sample_region(const struct report *r, const struct model_sample *s);
/* The asyncio task of a sample: the function of the innermost "[task NAME]" frame of its stack
   (docs/python.md, asyncio), -1 for none. The first call maps every stack. */
int report_sample_task(const struct report *r, const struct model_sample *s);

/* Short labels. */
const char *report_module_name(const struct report *r, int func);
const char *report_file_path(const struct report *r, int file);
const char *report_basename(const char *path);

/*
 * A thread's name as every view shows it: "worker-1", its Python name with the OS name
 * where that differs ("CustomThreadName-3 [python3]"), "[thread]" without a name; th may be
 * NULL. The label adds its TID: "worker-1 (TID 1234)".
 */
const char *report_thread_name(const struct model_thread *th, char *buf, size_t size);
const char *report_thread_label(const struct model_thread *th, char *buf, size_t size);

/* The label of a group node of tree ("app (TID 1234)"), in buf. */
const char *report_group_label(const struct report *r, const struct cct *tree, int node, char *buf,
			       size_t size);
/* The kind of a group node as the "Group" column shows it: thread, process, module,
   rank, wait-kind, sync-object, node. */
const char *report_group_kind(const struct cct *tree, int node);

/*
 * The source file at path, opened for reading: where the debug information says, else in
 * each -source-search-dir (and pfinalize's), trying path with its leading directories removed
 * one by one. NULL when not found.
 */
FILE *report_open_source(const struct report *r, const char *path);

/* The table type of a metric's values: time, bytes or a count. */
enum table_type report_metric_type(const struct model_metric *mt);

/*
 * Columns of the shown metrics, "<Metric>:Self", "<Metric>:Self %", "<Metric>:Total",
 * "<Metric>:Total %" (which ones: flags), metric after metric.
 */
enum metric_col_flags {
	MC_SELF = 1 << 0,
	MC_TOTAL = 1 << 1,
	MC_TOTAL_FIRST = 1 << 2, /* Total before Self */
};

struct metric_cols {
	int self[REPORT_MAX_METRICS], selfp[REPORT_MAX_METRICS];
	int total[REPORT_MAX_METRICS], totalp[REPORT_MAX_METRICS];
};

void report_add_metric_cols(const struct report *r, struct table *t, struct metric_cols *c,
			    unsigned flags);
/* Fill them from per-metric values (model.nmetrics each; NULL leaves that side empty). */
void report_set_metric_cols(const struct report *r, struct table *t, size_t row,
			    const struct metric_cols *c, const int64_t *self, const int64_t *total);

/* True when per-metric values v pass -threshold (any shown metric, or the one named). */
bool report_passes(const struct report *r, const int64_t *v);
/* True when v (per metric) has a value in a shown metric. */
bool report_any_shown(const struct report *r, const int64_t *v);
/* The note for rows left out by -threshold ("... below 1% of the total ..."). */
void report_note_pruned(const struct report *r, struct table *t, size_t n, const char *what);

/* Apply -sort-desc (or default_col) and -limit to a flat table. */
int report_sort_limit(const struct report *r, struct table *t, const char *default_col);

/*
 * For qsort_r() of indexes (ints): heaviest first by v[index * stride + col], ties in index
 * order. The one order of tree nodes, functions and edges by a metric.
 */
struct report_heavier {
	const int64_t *v;
	size_t stride, col;
};
int report_heavier_cmp(const void *pa, const void *pb, void *arg);

/*
 * Children of node in tree, sorted by the sort metric (self or total), heaviest first; ties
 * in node order.
 */
int report_sorted_children(const struct report *r, const struct cct *tree, int node, int **out,
			   size_t *n);

/* Columns describing a function: Module, Source File, Source Line. */
struct function_cols {
	int module, file, line;
};
void report_add_function_cols(struct table *t, struct function_cols *c);
void report_set_function_cols(const struct report *r, struct table *t, size_t row,
			      const struct function_cols *c, int func);

/* The views (one table, views.c, names each with its handlers). */
int view_summary(struct report *r, struct table *t);
int view_summary_text(struct report *r, const struct table *t, FILE *f, int width);
int view_hotspots(struct report *r, struct table *t);
int view_topdown(struct report *r, struct table *t);
int view_bottomup(struct report *r, struct table *t);
int view_callers(struct report *r, struct table *t);
int view_callstacks(struct report *r, struct table *t);
int view_source(struct report *r, struct table *t);
int view_mpi(struct report *r, struct table *t);

/*
 * The summary's MPI figures (view-mpi.c), over the samples the filters keep: MPI Time and
 * its share of the ranks' elapsed time (MPI Time / (ranks x Elapsed Time)); each rank's
 * compute, its CPU Time outside MPI calls (samples with no MPI function on their stack, so a
 * busy-polling MPI's CPU counts as MPI); the imbalance (max - mean) / max of the compute;
 * the slowest rank (most compute) and the fastest; the call sites (MPI function, calling
 * function) with the most MPI Time.
 */
#define REPORT_MPI_SITES 5
struct report_mpi_site {
	const char *function; /* "MPI_Barrier" */
	int caller;           /* index into model.functions, -1 when unknown */
	int64_t ns;
};
struct report_mpi_summary {
	int64_t mpi_ns, elapsed_ns, mean_ns;
	int nranks;           /* ranks with samples (processes without a rank count as one) */
	double share;         /* of the ranks' elapsed time */
	bool has_compute;     /* the result has CPU Time */
	double imbalance;     /* 0 when balanced, towards 1 */
	int slowest, fastest; /* ranks, -1: none */
	int64_t slowest_ns, fastest_ns;
	struct report_mpi_site sites[REPORT_MPI_SITES];
	size_t nsites;
};
/* 0 with out filled, 1 when the result has no MPI Time, -ENOMEM. */
int report_mpi_summary(struct report *r, struct report_mpi_summary *out);
int view_timeline(struct report *r, struct table *t);
/* A memory-consumption result's timeline: live heap and RSS per process and time bucket. */
int view_timeline_memory(struct report *r, struct table *t);
#define REPORT_TIME_BUCKETS 20 /* the timeline view's buckets without -time-buckets */
int view_hotspots_diff(struct report *a, struct report *b, struct table *t);
int view_topdown_diff(struct report *a, struct report *b, struct table *t);
int view_bottomup_diff(struct report *a, struct report *b, struct table *t);
int view_callers_diff(struct report *a, struct report *b, struct table *t);

/* The view called name, or NULL. */
const struct report_view *report_view_find(const char *name);

/* -format pstats, callgrind, folded, speedscope, chrome, html (exports.c). */
int report_export(const struct report_opts *o);

#endif
