/* SPDX-License-Identifier: MIT */
/* Process images (a pid between two execs), their threads and their module maps (image-map.c). */
#ifndef PCOLLECT_FINALIZER_IMAGE_H
#define PCOLLECT_FINALIZER_IMAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "finalizer/stream.h"

/* A mapped range of a module in one process image. */
struct mapping {
	uint64_t lo, hi;
	uint64_t base; /* load bias */
	uint32_t module;
	int64_t load_ns, unload_ns; /* collection time; INT64_MAX while loaded */
	uint64_t max_hi;            /* the largest hi of this and the mappings before it */
};

/* A metric a process image declared (RAW_REC_METRIC id) and the result's metric for it. */
struct image_metric {
	uint64_t id;
	uint32_t metric; /* index into fin.metrics; UINT32_MAX: not kept (a conflict) */
};

/* One process image: a pid between two execs. */
struct image {
	int32_t pid;
	uint32_t generation;
	int32_t rank;
	char host[65];
	struct mapping *maps; /* sorted by lo */
	size_t nmaps, maps_cap;
	struct mapping *data; /* the segments that hold no code, sorted by lo: sync objects */
	size_t ndata, data_cap;
	struct image_metric *metric_ids; /* the image's METRIC ids -> fin.metrics */
	size_t nmetric_ids, metric_ids_cap;
	struct process_rec process;
	int64_t start_ns, end_ns; /* collection time, from its streams */
	int64_t fork_parent;      /* image this one forked from, -1: none (its maps apply too) */
	int64_t db_id;
};

struct thread {
	uint32_t image;
	int32_t tid;
	char *name;    /* last OS name seen (comm); the Python name once threads_name_python() */
	char *os_name; /* that OS name where a Python name replaced it and differs, else NULL */
	char *py_name; /* its threading.Thread's name, last seen (RAW_REC_PY_THREAD_NAME) */
	int64_t py_name_ns; /* when that name was read */
	int64_t start_ns, end_ns;
	bool has_start, has_end;
	bool has_cpu;    /* cpu_ns known: from THREAD_END or the last THREAD_CPU */
	bool cpu_looked; /* no THREAD_END: cpu_ns is the agent's last look and the samples after */
	uint64_t cpu_ns;
	uint64_t samples, weight, time_ns;
	uint64_t wait_ns, waits, waits_short; /* its waits (saturating), for the summary */
	uint64_t spin_ns; /* its Spin Time: in both its CPU time and its OpenMP waits */
	/* The thread that created it and the tree node of its stack there (RAW_REC_ORIGIN). */
	bool has_parent;
	uint32_t parent_thread, parent_node;
	int64_t db_id;
};

/* The mapping of addr in image at time t (collection time), or NULL. */
const struct mapping *image_find(const struct image *im, uint64_t addr, int64_t t);
/* The same among the segments without code (data, bss): where a sync object lies. */
const struct mapping *image_find_data(const struct image *im, uint64_t addr, int64_t t);

#endif
