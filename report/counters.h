/* SPDX-License-Identifier: MIT */
/* Values over time per process (table counters): memory-consumption's Live Heap and RSS. */
#ifndef PCOLLECT_REPORT_COUNTERS_H
#define PCOLLECT_REPORT_COUNTERS_H

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
 * Every series of r (each node's in a job) with a point in [from, to), heaviest process
 * first (its series together, by name). A result without the table has none. Returns 0 or
 * -ENOMEM; *out is freed with counters_release().
 */
int counters_load(struct report *r, int64_t from, int64_t to, struct counter_series **out,
		  size_t *n);
void counters_release(struct counter_series *s, size_t n);

/* The value of a series at time t: its last point at or before t; def before the first. */
int64_t counters_at(const struct counter_series *s, int64_t t, int64_t def);

#endif
