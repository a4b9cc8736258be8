/* SPDX-License-Identifier: MIT */
/* The summary view's rows, shared by its sections (view-summary.c, view-summary-waits.c,
   view-summary-memory.c). */
#ifndef PCOLLECT_REPORT_SUMMARY_PRIVATE_H
#define PCOLLECT_REPORT_SUMMARY_PRIVATE_H

#include <stdbool.h>
#include <stdint.h>

#include "report/report-private.h"

struct summary {
	struct report *r;
	struct table *t;
	int section, metric, value, unit, pct;
	int cpu; /* the CPU Time metric, -1 when the result has none */
};

/* A row of section: metric, value and unit (NULL: none); returns its index. */
size_t summary_row_add(struct summary *s, const char *section, const char *metric,
		       const char *value, const char *unit);
size_t summary_row_int(struct summary *s, const char *section, const char *metric, int64_t v,
		       const char *unit);
/* ns as seconds, three decimals. */
void summary_row_time(struct summary *s, const char *section, const char *metric, int64_t ns);
/* A value of metric k in its unit; with pct, its share of the report's total of k. */
void summary_row_value(struct summary *s, const char *section, const char *name, int k, int64_t v,
		       bool pct);

/*
 * view-summary-waits.c: the sections of results with waits (Thread Time, Top Waiting Call
 * Sites, Top Waiting Objects) and of OpenMP programs (a section per parallel region).
 * 0 or -ENOMEM.
 */
int summary_waits(struct summary *s);
int summary_openmp(struct summary *s);
/*
 * view-summary-memory.c: the sections of memory-consumption results (Memory, Top Allocating
 * Call Sites, Top Leaking Call Sites). 0 or -ENOMEM.
 */
int summary_memory(struct summary *s);
/* view-summary-regions.c: the Regions section, when the program named regions. 0 or -ENOMEM. */
int summary_regions(struct summary *s);

#endif
