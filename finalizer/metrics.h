/* SPDX-License-Identifier: MIT */
/* The metrics a result declares: the rows pfinalize writes into the metrics table. */
#ifndef PCOLLECT_FINALIZER_METRICS_H
#define PCOLLECT_FINALIZER_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/metric.h"

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

/*
 * The metrics of result f, in their index order (the order they were added: CPU Time
 * first), into out (at most max); returns how many. Their display_order puts CPU Time and
 * Spin Time first, then Wait Time and Wait Count, then the others as they came.
 */
size_t fin_metrics_declare(const struct fin *f, struct fin_metric *out, size_t max);

/*
 * The metric called name of f, added when new: from the registry's definition when it knows
 * the name (common/metric.h: those keep their definition whatever a stream declares), else
 * from the arguments. Returns its index; UINT32_MAX when
 * the name is known with another unit or aggregation (its values cannot be added: a warning
 * names it once); -ENOMEM.
 */
int64_t fin_metrics_add(struct fin *f, const char *name, const char *unit, const char *aggregation,
			const char *kind, const char *description);
/* fin_metrics_add() of a metric of the registry. */
int64_t fin_metrics_standard(struct fin *f, enum metric_id id);
/* Free f's metrics (f->metrics and their strings); f has none after. */
void fin_metrics_release(struct fin *f);
/* The index of the metric called name, or -1. */
int64_t fin_metrics_find(const struct fin *f, const char *name);

#endif
