/* SPDX-License-Identifier: MIT */
/* The metrics a result declares: the rows pfinalize writes into the metrics table. */
#ifndef PCOLLECT_FINALIZER_METRICS_H
#define PCOLLECT_FINALIZER_METRICS_H

#include <stdbool.h>
#include <stddef.h>

struct fin;

/* One metric (docs/schema.md, table metrics). Strings are static or live as long as f. */
struct fin_metric {
	const char *name;	 /* "CPU Time" */
	const char *unit;	 /* "ns", "bytes", "count" */
	const char *aggregation; /* "sum" or "peak" */
	const char *kind;	 /* the sample kind that carries it: "cpu", ... */
	const char *description;
	bool main;		 /* the analysis's main metric: the reports' default sort */
};

/* The metric whose samples are the CPU-time samples of the raw streams. */
#define FIN_METRIC_CPU_NAME "CPU Time"

/*
 * The metrics of result f, in display order, into out (at most max); returns how many.
 * This is the one place metrics are declared: the finalizer declares CPU Time itself, and
 * the declarations the raw streams carry are added here.
 */
size_t fin_metrics_declare(const struct fin *f, struct fin_metric *out, size_t max);

#endif
