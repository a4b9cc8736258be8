/* SPDX-License-Identifier: MIT */
/* preport's entry point: a result's database in, a view as text, CSV or JSON out. */
#ifndef PCOLLECT_REPORT_REPORT_H
#define PCOLLECT_REPORT_REPORT_H

#include <stdbool.h>
#include <stddef.h>

enum report_format {
	REPORT_TEXT,
	REPORT_CSV,
	REPORT_JSON,
	REPORT_EXPORT, /* a file for another tool or the HTML report: report_opts.export_format */
};

struct report_opts {
	const char *const *results; /* -r, one or two result directories */
	size_t nresults;
	const char *view;           /* summary, hotspots, top-down, ... (NULL: summary; an
				       export takes none) */
	const char *group_by;       /* "function", "thread,function", ...; NULL: the view's own */
	const char *const *filters; /* "module=libm.so.6", "thread!=1234", ... */
	size_t nfilters;
	long limit;                   /* rows; 0: no limit */
	const char *sort_desc;        /* column or metric name, or NULL for the view's default */
	double threshold;             /* percent of the total below which tree nodes are pruned */
	const char *threshold_metric; /* the metric -threshold judges by; NULL: any shown */
	const char *const *metrics;   /* -metric: the metrics to show, in order; none: all */
	size_t nmetrics;
	bool collapse_recursion; /* -recursion-mode collapse */
	bool short_names;        /* -name-style short: C++ parameter lists dropped */
	bool inline_on;          /* -inline-mode on */
	bool stitch;             /* -stitch: created threads under their creating stacks */
	bool all_frames;         /* -call-stack-mode all */
	bool python_only;        /* -call-stack-mode python-only */
	enum report_format format;
	const char *export_format; /* REPORT_EXPORT: pstats, callgrind, folded, ... (exports.c) */
	char csv_delimiter;
	bool csv_raw; /* -csv-raw: CSV cells as they are, control characters and formulas too */
	const char *output;             /* -report-output FILE, or NULL for stdout */
	const char *time_filter;        /* "A:B" in seconds from the start, either side optional */
	int time_buckets;               /* -time-buckets: the timeline view's buckets; 0: default */
	const char *function;           /* -function NAME (caller-callee) */
	const char *show_from;          /* -show-from NAME[@FILE]: stacks cut above it */
	const char *source_object;      /* "function=NAME" or "file=PATH" (source) */
	const char *const *source_dirs; /* -source-search-dir */
	size_t nsource_dirs;
	int width; /* text width, columns; 0: the terminal's, unlimited when
		      the output is not a terminal */
	bool quiet;
	double fail_if_slower; /* -fail-if-slower PCT; negative: no gate */
	double fail_alpha;     /* -fail-alpha: the gate's significance level (default 0.05) */
	const char *junit;     /* -junit FILE: the gate's verdicts as JUnit XML */
};

/* The view names, NULL-terminated, for -help and suggestions. */
extern const char *const report_views[];
/* The -format names: text, csv, json, then the exports; NULL-terminated. */
extern const char *const report_formats[];

/*
 * Produce the report. A result without result.db is finalized first. Messages go through
 * log_error(), each failure told once (docs/errors.md). Returns 0, -ERR_USAGE for a usage
 * error (unknown column, filter, function, a directory that is not a result) or a negative
 * errno for a runtime failure.
 */
int report_run(const struct report_opts *o);

/*
 * preport's command line (report/main.c): parse argv, report, return the exit status. tool
 * names the program in messages: "preport", or "pcollect" for pcollect -report.
 */
int report_main(int argc, char **argv, const char *tool);

#endif
