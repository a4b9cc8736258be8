/* SPDX-License-Identifier: MIT */
/* The metrics a result declares (docs/schema.md): CPU Time, and those the streams declare. */
#define LOG_DOMAIN "metrics"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "finalizer/finalize-private.h"
#include "common/raw-memory.h"
#include "finalizer/metrics.h"

/*
 * The metrics the finalizer defines, in the order reports show them: CPU Time and its part
 * Spin Time, then the waits, MPI's and memory-consumption's. A stream declaring one of these
 * names gets this definition.
 */
static const struct fin_metric known[] = {
	{ FIN_METRIC_CPU_NAME, "ns", "sum", "cpu",
	  "CPU time of the sampled threads: sample weight x sampling interval", true, 1 },
	{ FIN_METRIC_SPIN_NAME, "ns", "sum", "cpu",
	  "the part of CPU Time spent in an OpenMP runtime's spin-wait code (barriers, locks)",
	  false, 2 },
	{ FIN_METRIC_WAIT_TIME_NAME, "ns", "sum", "wait",
	  "time threads spent blocked in waits (locks, conditions, joins, sleeps, I/O), "
	  "measured at each call's return",
	  false, 3 },
	{ FIN_METRIC_WAIT_COUNT_NAME, "count", "sum", "wait", "blocking calls: waits of any length",
	  false, 4 },
	{ FIN_METRIC_MPI_TIME_NAME, "ns", "sum", "mpi",
	  "wall time inside MPI calls, measured around each call (-trace-mpi); where the MPI "
	  "busy-polls it is CPU Time too",
	  false, 5 },
	{ FIN_METRIC_MPI_CALLS_NAME, "count", "sum", "mpi", "MPI calls made (-trace-mpi)", false,
	  6 },
	{ FIN_METRIC_MPI_SENT_NAME, "bytes", "sum", "mpi",
	  "bytes the MPI calls sent: counts x datatype sizes of the send buffers", false, 7 },
	{ FIN_METRIC_MPI_RECV_NAME, "bytes", "sum", "mpi",
	  "bytes the MPI calls received, as the receive statuses say", false, 8 },
	/* memory-consumption (common/raw-memory.h), per allocating stack */
	{ RAW_METRIC_MEM_ALLOCATED_NAME, "bytes", "sum", "alloc",
	  "bytes allocated (malloc, new, mmap... each realloc too), as asked for", false, 9 },
	{ RAW_METRIC_MEM_ALLOCS_NAME, "count", "sum", "alloc", "allocations made", false, 10 },
	{ RAW_METRIC_MEM_FREED_NAME, "bytes", "sum", "alloc",
	  "bytes of these allocations freed, by any thread", false, 11 },
	{ RAW_METRIC_MEM_LEAKED_NAME, "bytes", "sum", "alloc",
	  "bytes of these allocations still live when the process ended: leaked", false, 12 },
	{ RAW_METRIC_MEM_PEAK_NAME, "bytes", "peak", "alloc",
	  "bytes of these allocations live at the moment of the process's peak", false, 13 },
	{ RAW_METRIC_MEM_TEMPORARY_NAME, "count", "sum", "alloc",
	  "allocations freed with no other allocation in between on their thread", false, 14 },
};
#define NKNOWN (sizeof(known) / sizeof(known[0]))

static const struct fin_metric *known_metric(const char *name)
{
	size_t i;

	for (i = 0; i < NKNOWN; i++)
		if (!strcmp(known[i].name, name))
			return &known[i];
	return NULL;
}

void fin_metrics_release(struct fin *f)
{
	size_t i;

	for (i = 0; i < f->nmetrics; i++) {
		free(f->metrics[i].name);
		free(f->metrics[i].unit);
		free(f->metrics[i].aggregation);
		free(f->metrics[i].kind);
		free(f->metrics[i].description);
	}
	free(f->metrics);
	f->metrics = NULL;
	f->nmetrics = f->metrics_cap = 0;
}

int64_t fin_metrics_find(const struct fin *f, const char *name)
{
	size_t i;

	for (i = 0; i < f->nmetrics; i++)
		if (!strcmp(f->metrics[i].name, name))
			return (int64_t)i;
	return -1;
}

int64_t fin_metrics_add(struct fin *f, const char *name, const char *unit, const char *aggregation,
			const char *kind, const char *description)
{
	const struct fin_metric *k = known_metric(name);
	struct fin_metric_def *d;
	int64_t i = fin_metrics_find(f, name);

	if (k) {
		if (strcmp(k->unit, unit) || strcmp(k->aggregation, aggregation)) {
			log_warn("metric '%s' declared in '%s' and '%s': its values are left out "
				 "(pfinalize knows it in '%s', '%s')",
				 name, unit, aggregation, k->unit, k->aggregation);
			return UINT32_MAX;
		}
		unit = k->unit;
		aggregation = k->aggregation;
		kind = k->kind;
		description = k->description;
	}
	if (i >= 0) {
		d = &f->metrics[i];
		if (strcmp(d->unit, unit) || strcmp(d->aggregation, aggregation)) {
			log_warn("metric '%s' declared in '%s' and '%s' by one process and in '%s' "
				 "and '%s' by another: the second's values are left out",
				 name, d->unit, d->aggregation, unit, aggregation);
			return UINT32_MAX;
		}
		return i;
	}
	if (f->nmetrics >= UINT32_MAX - 1 || GROW(f->metrics, f->nmetrics + 1, f->metrics_cap))
		return -ENOMEM;
	d = &f->metrics[f->nmetrics];
	memset(d, 0, sizeof(*d));
	d->name = strdup(name);
	d->unit = strdup(unit);
	d->aggregation = strdup(aggregation);
	d->kind = strdup(kind);
	d->description = description ? strdup(description) : NULL;
	d->main = k && k->main;
	if (!d->name || !d->unit || !d->aggregation || !d->kind ||
	    (description && !d->description)) {
		free(d->name);
		free(d->unit);
		free(d->aggregation);
		free(d->kind);
		free(d->description);
		return -ENOMEM;
	}
	log_debug("metric '%s' (%s, %s, %s)", name, unit, aggregation, kind);
	return (int64_t)f->nmetrics++;
}

int64_t fin_metrics_standard(struct fin *f, const char *name)
{
	const struct fin_metric *k = known_metric(name);

	if (!k)
		BUG("metric '%s' is not one pfinalize defines", name);
	return fin_metrics_add(f, k->name, k->unit, k->aggregation, k->kind, k->description);
}

size_t fin_metrics_declare(const struct fin *f, struct fin_metric *out, size_t max)
{
	size_t n = 0, i, j;
	int order = (int)NKNOWN;

	for (i = 0; i < f->nmetrics && n < max; i++) {
		const struct fin_metric_def *d = &f->metrics[i];
		const struct fin_metric *k = known_metric(d->name);

		out[n++] = (struct fin_metric){
			.name = d->name,
			.unit = d->unit,
			.aggregation = d->aggregation,
			.kind = d->kind,
			.description = d->description,
			.main = d->main,
			.display_order = k ? k->display_order : ++order,
		};
	}
	/* The known ones absent from the result leave no gap: 1, 2, ... in that order. */
	for (i = 0; i < n; i++) {
		int rank = 1;

		for (j = 0; j < n; j++)
			rank += out[j].display_order < out[i].display_order;
		out[i].display_order = rank;
	}
	return n;
}
