/* SPDX-License-Identifier: MIT */
/* The registry of known metrics (common/metric.h): their names, units and meaning. */
#include <string.h>

#include "common/metric.h"
#include "common/raw-memory.h"
#include "common/raw-stream.h"

_Static_assert((int)METRIC_UNIT_NS == RAW_UNIT_NS && (int)METRIC_UNIT_BYTES == RAW_UNIT_BYTES &&
		       (int)METRIC_UNIT_COUNT == RAW_UNIT_COUNT,
	       "metric units are numbered as the raw format numbers them");
_Static_assert((int)METRIC_AGG_SUM == RAW_AGG_SUM && (int)METRIC_AGG_PEAK == RAW_AGG_PEAK,
	       "metric aggregations are numbered as the raw format numbers them");

static const struct metric_def defs[METRIC_NKNOWN] = {
	[METRIC_CPU_TIME] = { "CPU Time", METRIC_UNIT_NS, METRIC_AGG_SUM, "cpu",
			      "CPU time of the sampled threads: sample weight x sampling interval",
			      RAW_METRIC_CPU_TIME },
	[METRIC_SPIN_TIME] = { "Spin Time", METRIC_UNIT_NS, METRIC_AGG_SUM, "cpu",
			       "the part of CPU Time spent in an OpenMP runtime's spin-wait code "
			       "(barriers, locks)",
			       -1 },
	[METRIC_WAIT_TIME] = { "Wait Time", METRIC_UNIT_NS, METRIC_AGG_SUM, "wait",
			       "time threads spent blocked in waits (locks, conditions, joins, "
			       "sleeps, I/O), measured at each call's return",
			       RAW_METRIC_WAIT_TIME },
	[METRIC_WAIT_COUNT] = { "Wait Count", METRIC_UNIT_COUNT, METRIC_AGG_SUM, "wait",
				"blocking calls: waits of any length", RAW_METRIC_WAIT_COUNT },
	[METRIC_MPI_TIME] = { "MPI Time", METRIC_UNIT_NS, METRIC_AGG_SUM, "mpi",
			      "wall time inside MPI calls, measured around each call (-trace-mpi); "
			      "where the MPI busy-polls it is CPU Time too",
			      -1 },
	[METRIC_MPI_CALLS] = { "MPI Calls", METRIC_UNIT_COUNT, METRIC_AGG_SUM, "mpi",
			       "MPI calls made (-trace-mpi)", -1 },
	[METRIC_MPI_SENT] = { "Bytes Sent", METRIC_UNIT_BYTES, METRIC_AGG_SUM, "mpi",
			      "bytes the MPI calls sent: counts x datatype sizes of the send "
			      "buffers",
			      -1 },
	[METRIC_MPI_RECV] = { "Bytes Received", METRIC_UNIT_BYTES, METRIC_AGG_SUM, "mpi",
			      "bytes the MPI calls received, as the receive statuses say", -1 },
	[METRIC_MEM_ALLOCATED] = { "Allocated Bytes", METRIC_UNIT_BYTES, METRIC_AGG_SUM, "alloc",
				   "bytes allocated (malloc, new, mmap... each realloc too), as "
				   "asked for",
				   RAW_METRIC_MEM_ALLOCATED },
	[METRIC_MEM_ALLOCS] = { "Allocations", METRIC_UNIT_COUNT, METRIC_AGG_SUM, "alloc",
				"allocations made", RAW_METRIC_MEM_ALLOCS },
	[METRIC_MEM_FREED] = { "Freed Bytes", METRIC_UNIT_BYTES, METRIC_AGG_SUM, "alloc",
			       "bytes of these allocations freed, by any thread",
			       RAW_METRIC_MEM_FREED },
	[METRIC_MEM_LEAKED] = { "Leaked Bytes", METRIC_UNIT_BYTES, METRIC_AGG_SUM, "alloc",
				"bytes of these allocations still live when the process ended: "
				"leaked",
				RAW_METRIC_MEM_LEAKED },
	[METRIC_MEM_PEAK] = { "Peak Bytes", METRIC_UNIT_BYTES, METRIC_AGG_PEAK, "alloc",
			      "bytes of these allocations live at the moment of the process's peak",
			      RAW_METRIC_MEM_PEAK },
	[METRIC_MEM_TEMPORARY] = { "Temporary Allocations", METRIC_UNIT_COUNT, METRIC_AGG_SUM,
				   "alloc",
				   "allocations freed with no other allocation in between on their "
				   "thread",
				   RAW_METRIC_MEM_TEMPORARY },
	[METRIC_TASK_WAIT_TIME] = { "Task Wait Time", METRIC_UNIT_NS, METRIC_AGG_SUM, "wait",
				    "wall time asyncio tasks spent suspended, at the await they "
				    "were suspended in (the thread ran other tasks meanwhile)",
				    -1 },
};

const struct metric_def *metric_def(enum metric_id id)
{
	return &defs[id];
}

const char *metric_name(enum metric_id id)
{
	return defs[id].name;
}

int metric_find(const char *name)
{
	int i;

	for (i = 0; i < METRIC_NKNOWN; i++)
		if (!strcmp(defs[i].name, name))
			return i;
	return -1;
}

const char *metric_unit_name(enum metric_unit unit)
{
	switch (unit) {
	case METRIC_UNIT_NS:
		return "ns";
	case METRIC_UNIT_BYTES:
		return "bytes";
	case METRIC_UNIT_COUNT:
		return "count";
	}
	return NULL;
}

const char *metric_aggregation_name(enum metric_aggregation aggregation)
{
	switch (aggregation) {
	case METRIC_AGG_SUM:
		return "sum";
	case METRIC_AGG_PEAK:
		return "peak";
	}
	return NULL;
}
