/* SPDX-License-Identifier: MIT */
/* The HTML report: one page with its data as JSON, its script and styles inline. */
#ifndef PCOLLECT_REPORT_EXPORT_HTML_H
#define PCOLLECT_REPORT_EXPORT_HTML_H

#include "report/counters.h"
#include "report/export-private.h"

/* The page's script and styles (report/html/, embedded at build time: html-assets.c). */
extern const char report_html_js[];
extern const char report_html_css[];
extern const char report_html_mpi_js[];
extern const char report_html_views_js[];

/* Bounds that keep the page small whatever the profile (docs/preport.md). */
#define HTML_MAX_NODES        300000    /* call tree nodes; smaller ones go first */
#define HTML_SOURCE_BYTES     (2 << 20) /* source text embedded */
#define HTML_SOURCE_FUNCTIONS 300       /* functions whose source is embedded */
#define HTML_SOURCE_LINES     400       /* lines of one function */
#define HTML_TIMELINE_BINS    500       /* per thread */
#define HTML_TIMELINE_THREADS 64        /* the heaviest threads */
#define HTML_MEMORY_POINTS    2000      /* per series of memory over time */
#define HTML_MEMORY_PROCESSES 16        /* the processes of the largest live heap */
#define HTML_RANKS            1024      /* ranks of a parallel job, the lowest */
#define HTML_RANK_FUNCTIONS   20        /* the heaviest functions' values per rank */
#define HTML_RANK_LANES       64        /* timeline lanes of the lowest ranks */

/* A function of the page (both results' for a difference). */
struct html_fn {
	int name, module, file; /* ids in html.names, modules, files (file -1: unknown) */
	int line;               /* of its definition, 0 when unknown */
	int kind;               /* 0 native, 1 Python, 2 a group (-group-by) */
	int side, func;         /* where it was first seen: result and model function */
};

struct html_node {
	int parent, fn;
	int first_child, next_sibling;
};

/* A source line with a value: its file (id in html.files), line, and cct loc of result 1. */
struct html_line {
	int file, line, loc;
};

/* A thread's values in slices of time. */
struct html_lane {
	int thread;
	int64_t total; /* of the first metric: the heaviest threads get a lane */
	int64_t *bins; /* nmetrics * HTML_TIMELINE_BINS */
};

struct html {
	struct report *r;
	size_t nr;
	int metrics[2][REPORT_MAX_METRICS]; /* per side: the model's index of each metric, or -1 */
	size_t nmetrics;
	struct outbuf *b;
	struct export_names names, modules, files;
	struct export_ids fids; /* (name, module, file) -> function */
	struct html_fn *fn;
	size_t nfn, fncap;
	int *nodefn[2]; /* per node of each result's tree: its function */
	struct html_node *node;
	size_t nnodes, nodecap;
	int64_t *self; /* per node: nr * nmetrics values */
	size_t selfcap;
	struct hash_index childmap;
	int64_t *hot; /* per function: self then total, nr * nmetrics each */
	size_t hotcap;
	struct cct_walk lw; /* per loc of result 1 */
	struct html_line *lines;
	size_t nlines, linecap;
	struct html_lane *lanes; /* per thread (+ 1), heaviest first; NULL: no timeline */
	size_t nlanes;
	int64_t tl_start, tl_span;  /* ns */
	size_t tl_bins;             /* slices of time used, up to HTML_TIMELINE_BINS */
	struct counter_series *mem; /* memory over time, heaviest process first */
	size_t nmem;
	size_t mem_shown;       /* series written (up to HTML_MEMORY_PROCESSES processes) */
	size_t mem_more;        /* processes left out */
	int64_t mem_lo, mem_hi; /* ns: the span drawn */
};

/* The page's function for a node of side's tree (made when new); -ENOMEM. */
int html_fn_of(struct html *h, int side, int node);
/* Add side's tree to the page's tree (projected onto functions). */
int html_project(struct html *h, int side);
/* Self and total per function of side (after html_project()). */
int html_hotspots(struct html *h, int side);
/* Self and total per source line of result 1. */
int html_lines(struct html *h);
/* Memory over time from result 1's counters (none: nothing); -ENOMEM. */
int html_memory(struct html *h);
void html_put_memory(struct html *h);
void html_memory_release(struct html *h);
/* A parallel job's MPI table, functions per rank and lanes by rank ("mpi": null: none). */
int html_put_mpi(struct html *h, const int64_t *scale);
/* A JSON string, safe inside the page's script element. */
void html_put_str(struct outbuf *b, const char *s);

#endif
