/* SPDX-License-Identifier: MIT */
/* -format firefox: what its reading of the result and its writing of the JSON share. */
#ifndef PCOLLECT_REPORT_EXPORT_FIREFOX_H
#define PCOLLECT_REPORT_EXPORT_FIREFOX_H

#include "report/export-private.h"

/*
 * The processed profile format as the profiler's src/types/profile.ts of version 70 declares
 * it (docs/preport.md says why that one): shared stack, frame, function, resource and source
 * tables and a string array; a thread per sampled thread with its samples and markers. A CPU
 * sample is a sample at its time, of its stack, weighing its CPU time in ms ("tracing-ms");
 * a timed wait (Wait Time), an MPI call (MPI Time) and a stretch of a region are interval
 * markers with their stack as the cause. The profiler upgrades a file of an older version as
 * it loads it, so the version pinned here keeps loading.
 */
#define FF_PROCESSED_VERSION 70
#define FF_GECKO_VERSION     36 /* meta.version: the Gecko format of the same profiler */

/* meta.categories, by index; 0 is the default one (the first grey). */
enum { CAT_OTHER, CAT_NATIVE, CAT_PYTHON, CAT_WAIT, CAT_MPI, CAT_REGION };

/* In the order markers that start together are written: a region before what it holds. */
enum marker_kind { MK_REGION, MK_WAIT, MK_MPI };

struct firefox_sample {
	int64_t time, value; /* ns */
	int node;
};

struct firefox_marker {
	int64_t start, end; /* ns */
	enum marker_kind kind;
	int name;    /* string id */
	int node;    /* the stack it was taken at; -1: none (a region) */
	int context; /* index into model.contexts, -1: none */
	int64_t sent, received;
};

/* What a thread holds, and where its regions stand while its events are read. */
struct firefox_track {
	int thread; /* index into model.threads, -1 unknown */
	struct firefox_sample *s;
	size_t ns, scap;
	struct firefox_marker *mk;
	size_t nm, mcap;
	int region; /* the region of its last event, -1: none */
	int *open;  /* marker index of each open region level */
	size_t nopen, opencap;
	int64_t last_end; /* where its last event ended */
	int64_t mpi_time; /* the time of its last MPI call, and that marker */
	size_t mpi;
	bool has_mpi;
	int64_t bytes_time, bytes[2]; /* bytes met before their call's MPI Time */
};

struct firefox {
	struct export_job *x;
	struct report *r;
	struct outbuf *b;
	struct export_kept kept;
	int cpu, wait, mpi, sent, received; /* metric indexes, -1 when not written */
	int64_t from;
	struct firefox_track *tracks;
	size_t ntracks, trackcap;
	int *track_of; /* per model thread + 1: index into tracks, -1 none yet */
	int **levels;  /* per region: its levels' string ids ("solve", "solve/large"), lazily */
	int *nlevels;
	struct export_names strs;
	struct export_ids frames, funcs, resources, sources, libs;
	int *stack_of;   /* per tree node: its stack index, -1 when unused */
	int *frame_of;   /* per tree node: its frame index */
	int *stack_node; /* per stack: its tree node */
	size_t nstacks;
	int *func_name, *func_res, *func_src; /* per func id: string, resource, source (-1) */
	int *res_name, *src_name;             /* per resource and source: its string */
	const struct firefox_track *cur;      /* the thread being written */
	bool *pid_shared;                     /* per process: another process written has its pid */
	int64_t *proc_start, *proc_end;       /* per process, over its threads: ns, -1 unknown,
						 INT64_MAX: a thread did not end */
};

/* Write the profile f holds (read by export_firefox()) as the JSON of the pinned version. */
void firefox_write_profile(struct firefox *f);

#endif
