/* SPDX-License-Identifier: MIT */
/* One raw stream read into memory (stream-load.c): its records, and what was wrong with it. */
#ifndef PCOLLECT_FINALIZER_STREAM_H
#define PCOLLECT_FINALIZER_STREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/raw-stream.h"
#include "common/result-dir.h"
#include "finalizer/python/python.h"

/* A module index (into fin.modules) that names none: an address outside every module. */
#define NO_MODULE UINT32_MAX

/*
 * Samples whose STACK record was lost to damage keep their time and weight under one stack of
 * a single frame at this address (kernel space: no module maps it), shown as the function
 * "[damaged stack]" (FIN_DAMAGED_STACK_NAME).
 */
#define FIN_DAMAGED_STACK_ADDR 0xffffffffffff0000ull
#define FIN_DAMAGED_STACK_ID   UINT64_MAX
#define FIN_DAMAGED_STACK_NAME "[damaged stack]"
/*
 * A stack the unwinder cut at the depth limit (RAW_STACK_TRUNCATED) has its outermost frames
 * missing: it is placed under one root of its own, a frame at this address named
 * "[truncated stack]", so every view shows where the path was cut, not main's children as
 * roots.
 */
#define FIN_TRUNCATED_STACK_ADDR 0xffffffffffff0010ull
#define FIN_TRUNCATED_STACK_NAME "[truncated stack]"
/*
 * A sample the agent took while its own code ran in the thread (RAW_STACK_AGENT): one frame
 * at this address, a root of its own named "[pcollect agent]", so the collector's overhead
 * is shown as ours and never inside the program's functions.
 */
#define FIN_AGENT_STACK_ADDR 0xffffffffffff0020ull
#define FIN_AGENT_STACK_NAME RAW_STACK_AGENT_NAME
/*
 * A Python sample taken while the interpreter's cyclic garbage collector ran on its thread
 * (RAW_PY_FRAME_GC): a frame at this address named "[gc]" stands between the innermost
 * Python line (the one that started the collection) and the native frames below it, the
 * collector's own, named or not.
 */
#define FIN_GC_ADDR 0xffffffffffff0030ull
#define FIN_GC_NAME RAW_PY_GC_NAME
/*
 * The C callables Python frames stand calling (RAW_PY_FRAME_CALLEE, 3.14+): a frame per
 * distinct name (fin.callee_names[k] at FIN_CALLEE_ADDR + k, a function of kind 'method')
 * between the calling line and the native frames below it, unless one of those native
 * frames already has that name (the method tables named it).
 */
#define FIN_CALLEE_ADDR 0xfffffffff0000000ull
#define FIN_CALLEE_MAX  (1u << 24)
/*
 * How much more CPU time a thread's samples may stand for than the thread measured at its end
 * (THREAD_END) before it is damage: none by design (a sample closes an interval the thread
 * used), so the slack covers only rounding: two intervals, two kernel ticks and 1%.
 */
#define FIN_SAMPLED_SLACK_NS(interval_ns, used_ns)                                                 \
	(2 * (interval_ns) + 8000000ull + (used_ns) / 100)
/* The most CPU time one stream may account for; more is damage (and could overflow sums). */
#define FIN_MAX_STREAM_NS (1ll << 53) /* ns: about 104 days */

/* A raw stack as read: ips[off .. off + depth), innermost first. */
struct stack_rec {
	uint64_t id;    /* the stream's id */
	uint32_t flags; /* enum raw_stack_flags */
	uint32_t depth;
	size_t off;               /* into stream.ips */
	size_t loc;               /* into stream.locs once located, SIZE_MAX before */
	uint32_t node;            /* leaf of the calling-context tree, once built */
	uint64_t samples, weight; /* of the samples naming it, counted when located */
	size_t py_off; /* a RAW_REC_PY_STACK's Python frames: stream.py.frames[py_off ..] */
	uint32_t npy;  /* how many (0: a native stack) */
};

/* Where one ip of a stack is: a module and the module-relative address looked up. */
struct loc {
	uint32_t module; /* NO_MODULE: no module mapped there; addr is absolute */
	uint64_t addr;
};

/* A sample_rec.stack naming no stack of its stream. */
#define NO_STACK UINT64_MAX

struct sample_rec {
	int64_t time_ns; /* stream time (since header.origin_ns) */
	uint64_t stack;  /* the stream's stack id; once located the index into stacks,
			    or NO_STACK */
	uint64_t weight;
	uint32_t context; /* index into fin.contexts + 1 (its region); 0: none */
};

/* A RAW_REC_ORIGIN of kind RAW_ORIGIN_WORK or RAW_ORIGIN_TASK as read (origins.c): from time_ns on,
   the thread works for thread tid (0: for none), which began that work at its stack. */
struct work_mark {
	int64_t time_ns; /* stream time */
	uint32_t tid;
	uint64_t stack; /* tid's stream's stack id */
};

/* RAW_REC_REGION_BEGIN/END as read (regions.c). */
struct region_mark {
	int64_t time_ns; /* stream time */
	uint32_t depth;  /* 1 the outermost */
	char *name;      /* owned; NULL for an END */
};

/* From time_ns on (to the next span) the thread is in the regions path. */
struct region_span {
	int64_t time_ns;  /* stream time */
	const char *path; /* "outer/inner", interned in fin.strings; NULL: in no region */
};

struct module_event {
	int64_t time_ns; /* stream time */
	bool unload;
	struct raw_module rm; /* path, build_id and segs owned (unload: path and base only) */
	uint32_t module;      /* index into fin.modules, loads only, set by fin_build_images */
};

struct thread_event {
	uint8_t type; /* RAW_REC_THREAD_START/END/NAME/CPU */
	uint32_t tid;
	int64_t time_ns; /* stream time */
	uint64_t cpu_ns;
	char *name; /* owned */
};

struct lost_rec {
	uint32_t reason;
	uint64_t count, weight;
};

/* RAW_REC_METRIC: a metric the process's samples carry (process streams). */
struct metric_decl {
	uint64_t id;
	char *name; /* owned */
	uint32_t unit, aggregation, kind;
};

/* RAW_REC_VALUE: a metric value attributed to a stack at a time (thread streams). */
struct value_rec {
	int64_t time_ns; /* stream time */
	uint64_t stack;  /* the stream's stack id */
	uint64_t metric;
	int64_t value;
};

/* RAW_REC_WAIT, RAW_REC_WAIT_SUM: blocking calls (thread streams; finalizer/waits.c). */
struct wait_rec {
	int64_t time_ns;   /* stream time: when the wait began (WAIT_SUM: when written) */
	uint64_t stack;    /* the stream's stack id */
	uint32_t kind;     /* enum raw_wait_kind */
	bool summed;       /* a WAIT_SUM: count short waits, not one */
	bool open;         /* a WAIT_OPEN: in progress at seen_ns; total_ns set at the end */
	int64_t seen_ns;   /* a WAIT_OPEN's stream time when it was written */
	uint64_t object;   /* address, fd, pid or 0 (docs/raw-format.md) */
	uint64_t count;    /* waits (1 for a WAIT) */
	uint64_t total_ns; /* their duration */
};

/* RAW_REC_MPI_CALL and RAW_REC_MPI_SUM: MPI calls (thread streams; finalizer/mpi.c). */
struct mpi_rec {
	int64_t time_ns;   /* stream time: when the call began (a sum: when written) */
	uint64_t stack;    /* the stream's stack id */
	uint32_t function; /* enum raw_mpi_function */
	uint32_t comm_size;
	bool summed; /* count short calls of one site, not one call */
	uint64_t count, total_ns, sent, received;
};

/* RAW_REC_OMP_REGION: one instance of an OpenMP parallel region (the stream of the thread
   that began it). */
struct region_rec {
	int64_t time_ns;      /* stream time: when it began */
	uint64_t duration_ns; /* to the end of its implicit barrier */
	uint64_t object;      /* the construct, as its openmp-barrier waits' object */
	uint32_t threads;     /* in its team */
	uint32_t context;     /* index into fin.contexts + 1, once fin_build_events() ran */
};

/* RAW_REC_OBJECT: the name of a sync object (any stream of the image). */
struct object_rec {
	uint32_t kind;
	uint64_t object;
	char *name; /* owned */
};

/*
 * One event of a metric other than the CPU samples' CPU Time: a VALUE record, or what an
 * analysis's records decode to (a wait gives Wait Time and Wait Count). Built from the
 * stream's records by fin_build_events(), located with the samples, aggregated per (thread,
 * node, metric, context) and, when timed, written to the timeline.
 */
struct event_rec {
	int64_t time_ns;  /* stream time */
	uint64_t stack;   /* the stream's stack id; once located the index into stacks, or
			     NO_STACK */
	uint32_t metric;  /* index into fin.metrics */
	uint32_t context; /* index into fin.contexts + 1; 0: none */
	int64_t value;    /* in the metric's unit */
	uint64_t count;   /* events it stands for */
	bool timed;       /* one event at time_ns: a timeline row (a sum of several is not) */
};

/* RAW_REC_MEM_COUNTERS: the live heap and RSS of the process at a time (thread streams). */
struct mem_counters_rec {
	int64_t time_ns; /* stream time */
	uint64_t live, rss;
};

/* RAW_REC_NOTE: what happened to a thread's sampling (process streams). */
struct note_rec {
	uint32_t tid;
	uint32_t kind; /* enum raw_note_kind */
	char *detail;  /* owned */
};

struct process_rec {
	bool seen;
	int32_t pid, ppid, parent_pid;
	int64_t time_ns; /* stream time, then collection time in images */
	uint32_t origin, generation;
	char *exe;          /* owned */
	char *command_line; /* owned, shell-quoted argv */
};

/* One raw stream file and everything read from it. */
struct stream {
	char *path;
	int open_err;          /* negative errno when the file could not be opened */
	unsigned open_version; /* open_err -EPROTONOSUPPORT: the newer version it has */
	struct raw_file_header hdr;
	struct raw_reader_stats stats;
	bool has_header;

	struct stack_rec *stacks;
	size_t nstacks, stacks_cap;
	uint64_t *ips;
	size_t nips, ips_cap;
	struct loc *locs;
	size_t nlocs, locs_cap;
	struct sample_rec *samples;
	size_t nsamples, samples_cap;
	struct module_event *mods;
	size_t nmods, mods_cap;
	struct thread_event *tevents;
	size_t ntevents, tevents_cap;
	struct lost_rec *lost;
	size_t nlost, lost_cap;
	struct process_rec process;
	struct pystream py;     /* code objects, Python frames of mixed stacks, notes */
	uint32_t *py_frame_ids; /* per py.frames entry of a sampled stack: index into frames */
	struct metric_decl *metrics;
	size_t nmetrics, metrics_cap;
	struct value_rec *values;
	size_t nvalues, values_cap;
	struct note_rec *notes;
	size_t nnotes, notes_cap;
	struct wait_rec *waits;
	size_t nwaits, waits_cap;
	struct mem_counters_rec *mem_counters;
	size_t nmem_counters, mem_counters_cap;
	struct object_rec *objects;
	size_t nobjects, objects_cap;
	struct mpi_rec *mpis;
	size_t nmpis, mpis_cap;
	/* Its first RAW_REC_ORIGIN: the thread that created this one and its stack there. */
	bool has_origin;
	uint32_t origin_tid;
	int64_t origin_time_ns;  /* stream time */
	uint64_t origin_stack;   /* that thread's stack id; once located the index into its
				    stream's stacks, or NO_STACK */
	uint32_t origin_stream;  /* index into fin.streams once located */
	struct work_mark *works; /* its parts of work other threads began (OpenMP regions) */
	size_t nworks, works_cap;
	bool has_mpi_rank; /* a process stream with RAW_REC_MPI_RANK: */
	int32_t mpi_rank;  /* the rank MPI gave the process */
	struct region_rec *regions;
	size_t nregions, regions_cap;
	struct region_mark *marks; /* the program's regions (regions.c) */
	size_t nmarks, marks_cap;
	struct region_span *spans;
	size_t nspans, spans_cap;
	struct event_rec *events; /* in stream order (fin_build_events) */
	size_t nevents, events_cap;
	uint64_t events_bad_stack;  /* events whose stack was never defined: kept under
				       FIN_DAMAGED_STACK_ID */
	uint64_t samples_bad_stack; /* samples whose stack was never defined (lost to damage):
				       kept under FIN_DAMAGED_STACK_ID */
	uint64_t weight_total;      /* of its samples (saturating) */
	/* The last THREAD_CPU (the control thread's look) and its samples' weight after it: made
	   into a THREAD_CPU event at the stream's end (a thread with no THREAD_END's figure). */
	struct thread_event look;
	bool has_look;
	uint64_t weight_after_look;
	uint64_t unknown_records;
	uint64_t records_malformed;     /* analysis records that did not decode (added to stats) */
	uint64_t values_unknown_metric; /* VALUE records of a metric the image did not declare */
	struct result_raw_name name;    /* what the file name says, when name_ok */
	bool name_ok;
	int64_t duplicate_of;   /* index of the stream this one is a copy of, or -1 */
	bool header_distrusted; /* header fields taken from the name and meta/, not the file */
	bool weights_scaled;    /* its samples stood for more CPU time than its thread used */

	int64_t offset_ns; /* add to a stream time to get collection time */
	uint32_t image;    /* index into images */
	uint32_t thread;   /* index into threads */
};

/* stream-load.c: read one stream file into s (s->path set). Never fails as a whole:
   problems are counted in s. Returns 0 or -ENOMEM. */
int stream_load(struct stream *s);
void stream_release(struct stream *s);
/* Why s could not be opened (s->open_err), in words; buf may hold them. */
const char *stream_open_strerror(const struct stream *s, char *buf, size_t size);
/* Drop everything read from s (a copy of another stream, or one that cannot be trusted). */
void stream_drop_records(struct stream *s);
/* Record a problem of s found after reading: the first one is kept, force replaces it. */
void stream_problem(struct stream *s, bool force, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
