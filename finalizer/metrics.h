/* SPDX-License-Identifier: MIT */
/* The metrics a result declares: the rows pfinalize writes into the metrics table. */
#ifndef PCOLLECT_FINALIZER_METRICS_H
#define PCOLLECT_FINALIZER_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct fin;

/* One metric (docs/schema.md, table metrics). Strings are static or live as long as f. */
struct fin_metric {
	const char *name;        /* "CPU Time" */
	const char *unit;        /* "ns", "bytes", "count" */
	const char *aggregation; /* "sum" or "peak" */
	const char *kind;        /* the sample kind that carries it: "cpu", "wait", ... */
	const char *description;
	bool main;         /* the analysis's main metric: the reports' default sort */
	int display_order; /* from 1: CPU Time, its parts, the waits, then the others */
};

/* The metric whose samples are the CPU-time samples of the raw streams. */
#define FIN_METRIC_CPU_NAME "CPU Time"
/* The metrics of waits (docs/raw-format.md, WAIT and WAIT_SUM). */
#define FIN_METRIC_WAIT_TIME_NAME  "Wait Time"
#define FIN_METRIC_WAIT_COUNT_NAME "Wait Count"
/* CPU samples in an OpenMP runtime's spin-wait code (finalizer/spin.c): part of CPU Time. */
#define FIN_METRIC_SPIN_NAME "Spin Time"

/*
 * The metrics of result f, in their index order (the order they were added: CPU Time
 * first), into out (at most max); returns how many. Their display_order puts CPU Time and
 * Spin Time first, then Wait Time and Wait Count, then the others as they came.
 */
size_t fin_metrics_declare(const struct fin *f, struct fin_metric *out, size_t max);

/*
 * The metric called name of f, added when new: from the finalizer's own definition when it
 * knows the name (CPU Time, Wait Time, Wait Count, Spin Time: those keep their definition
 * whatever a stream declares), else from the arguments. Returns its index; UINT32_MAX when
 * the name is known with another unit or aggregation (its values cannot be added: a warning
 * names it once); -ENOMEM.
 */
int64_t fin_metrics_add(struct fin *f, const char *name, const char *unit, const char *aggregation,
			const char *kind, const char *description);
/* fin_metrics_add() of a metric the finalizer defines (name one of the above). */
int64_t fin_metrics_standard(struct fin *f, const char *name);
/* The index of the metric called name, or -1. */
int64_t fin_metrics_find(const struct fin *f, const char *name);

#endif
