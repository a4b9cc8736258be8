/* SPDX-License-Identifier: MIT */
/* The metrics the tools know: one registry for the agent, pfinalize and preport. */
#ifndef PCOLLECT_COMMON_METRIC_H
#define PCOLLECT_COMMON_METRIC_H

#include <stdint.h>

/*
 * Every metric a result can hold, in the order reports show them (docs/schema.md, table
 * metrics): CPU Time and its part Spin Time, the waits, MPI's, then memory-consumption's. The
 * agent declares its metrics in the raw streams by these names, pfinalize writes these rows
 * (a stream may declare others: they get the stream's definition), preport finds a metric of
 * a result by its id (model_metric()).
 */
enum metric_id {
	METRIC_CPU_TIME,
	METRIC_SPIN_TIME,
	METRIC_WAIT_TIME,
	METRIC_WAIT_COUNT,
	METRIC_MPI_TIME,
	METRIC_MPI_CALLS,
	METRIC_MPI_SENT,
	METRIC_MPI_RECV,
	METRIC_MEM_ALLOCATED,
	METRIC_MEM_ALLOCS,
	METRIC_MEM_FREED,
	METRIC_MEM_LEAKED,
	METRIC_MEM_PEAK,
	METRIC_MEM_TEMPORARY,
	METRIC_TASK_WAIT_TIME,
	METRIC_NKNOWN,
};

/* Units and aggregations, numbered as the raw stream's METRIC record numbers them. */
enum metric_unit {
	METRIC_UNIT_NS = 0,
	METRIC_UNIT_BYTES = 1,
	METRIC_UNIT_COUNT = 2,
};

enum metric_aggregation {
	METRIC_AGG_SUM = 0,  /* values add up */
	METRIC_AGG_PEAK = 1, /* the largest value counts */
};

struct metric_def {
	const char *name; /* "CPU Time": what the metrics table and the reports call it */
	enum metric_unit unit;
	enum metric_aggregation aggregation;
	const char *kind;        /* the records that carry it: "cpu", "wait", "mpi", "alloc" */
	const char *description; /* a sentence for metrics.description */
	int64_t raw_id;          /* its number in a raw stream's METRIC record; -1: none (the
				    finalizer derives it) */
};

/* The definition of a known metric. id must be below METRIC_NKNOWN. */
const struct metric_def *metric_def(enum metric_id id);

/* Its name: metric_def(id)->name. */
const char *metric_name(enum metric_id id);

/* The id of the known metric called name, or -1. */
int metric_find(const char *name);

/* "ns", "bytes", "count": a unit as the metrics table stores it; NULL for another value. */
const char *metric_unit_name(enum metric_unit unit);

/* "sum" or "peak", as the metrics table stores it; NULL for another value. */
const char *metric_aggregation_name(enum metric_aggregation aggregation);

#endif
