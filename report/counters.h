/* SPDX-License-Identifier: MIT */
/* Values over time per process (table counters): memory-consumption's Live Heap and RSS. */
#ifndef PCOLLECT_REPORT_COUNTERS_H
#define PCOLLECT_REPORT_COUNTERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct report;

struct counter_point {
	int64_t t, v; /* ns from the collection's (the job's) start; the value */
};

/* One process's points of one counter, in time order. */
struct counter_series {
	int part;     /* the job's part (node) it comes from; 0 outside a job */
	int64_t proc; /* processes.id in that part */
	int64_t pid;
	char *label; /* "exe (PID n)", with the rank, and the host in a job of several nodes */
	char *name;  /* "Live Heap", "RSS" */
	struct counter_point *pt;
	size_t n, cap;
	int64_t peak; /* its process's largest Live Heap: the order of the processes */
};

/*
 * Every series of r (each node's in a job) with a point before to, heaviest process first (its
 * series together, by name): its points in [from, to), led by the value it had at from (the
 * last point before from, moved to from). A result without the table has none. Returns 0 or
 * -ENOMEM; *out is freed with counters_release().
 */
int counters_load(struct report *r, int64_t from, int64_t to, struct counter_series **out,
		  size_t *n);
void counters_release(struct counter_series *s, size_t n);

/* Whether two series are one process's (they are adjacent in what counters_load() gives). */
static inline bool counters_same_process(const struct counter_series *a,
					 const struct counter_series *b)
{
	return a->part == b->part && a->proc == b->proc;
}

#endif
