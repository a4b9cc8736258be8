/* SPDX-License-Identifier: MIT */
/* The finalizer's state (struct fin): the result's tables and the passes that build them. */
#ifndef PCOLLECT_FINALIZER_FINALIZE_PRIVATE_H
#define PCOLLECT_FINALIZER_FINALIZE_PRIVATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/hash-index.h"
#include "common/meta.h"
#include "common/raw-memory.h"
#include "common/raw-stream.h"
#include "finalizer/finalize.h"
#include "finalizer/image.h"
#include "finalizer/module.h"
#include "finalizer/str-pool.h"
#include "finalizer/stream.h"

/* One raw/<pid>.pmem (finalizer/memory.c): a process image's allocation aggregates. */
struct mem_file {
	char *path;
	struct raw_mem_header hdr;     /* as read */
	struct raw_mem_entry *entries; /* those in use, by tid */
	size_t nentries;
	int64_t image;              /* index into images, -1 when no stream of its pid was read */
	uint64_t entries_unmatched; /* entries whose thread stream was not read */
};

/* One row of the counters table: a process's live heap or RSS at a time. */
struct counter_row {
	int64_t time_ns; /* collection time */
	uint32_t image;
	const char *name; /* "Live Heap", "RSS" */
	int64_t value;
};

/* Global tables, as written to the database (ids are index + 1). */
struct function {
	uint32_t module;            /* NO_MODULE for [unknown] */
	const char *name, *mangled; /* interned in fin.strings */
	int64_t file;               /* source_files id, 0 if none */
	uint32_t line;
	bool resolved;
	bool range;  /* unnamed, known by its FDE range: "func@0x<start>" (sym_frame.range) */
	bool python; /* a Python function: module NO_MODULE, line its co_firstlineno */
	bool eval;   /* the interpreter's eval loop (pymerge_is_eval) */
	bool given;  /* named by pfinalize from what it does (runtime-names.c): frames of it
			that follow one another in a stack are one node of the tree */
	bool method; /* a C function Python calls by name, named as cProfile names it
			(module_name_methods): kind 'method' */
};

struct frame {
	uint32_t function;
	uint32_t module;
	uint64_t address;
	uint32_t inline_depth;
	int64_t file; /* source_files id, 0 if none */
	uint32_t line;
};

struct node {
	uint32_t parent; /* UINT32_MAX at a root */
	uint32_t frame;
	uint32_t depth;
};

/* One row of the samples table: a metric's events of one thread, tree node and context. */
struct agg {
	uint32_t thread, node;
	uint32_t metric;  /* index into fin.metrics */
	uint32_t context; /* index into fin.contexts + 1; 0: none */
	uint64_t count;
	int64_t value; /* in the metric's unit (saturating) */
};

/*
 * One timeline row; its stack_id is streams[stream].stacks[stack].node + 1. A CPU sample
 * whose stack spins (fin_node_spins) is a Spin Time row too, written beside it.
 */
struct timeline_row {
	int64_t time_ns; /* collection time */
	int64_t value;   /* in the metric's unit */
	uint32_t thread; /* index into threads */
	uint32_t stream, stack;
	uint32_t metric;  /* index into fin.metrics */
	uint32_t context; /* index into fin.contexts + 1; 0: none */
};

/* A metric of the result (docs/schema.md, table metrics): index 0 is CPU Time. */
struct fin_metric_def {
	char *name, *unit, *aggregation, *kind, *description; /* owned */
	bool main;
	uint64_t events; /* events counted (a metric declared but never seen is still kept) */
};

/*
 * A grouping context (docs/schema.md, table contexts): a wait's kind and sync object within
 * one process image, or an MPI call's function and communicator size; and the region the
 * thread was in. Contexts with the same columns are one row of the table.
 */
struct context {
	uint32_t image;
	uint32_t kind; /* enum raw_wait_kind; 0: no wait (an MPI call, a CPU sample in a
			  region) */
	uint64_t object;
	uint32_t mpi_function; /* enum raw_mpi_function, 0 for a wait context */
	uint32_t comm_size;    /* ranks in the MPI call's communicator, 0: none */
	const char *region;    /* the regions path the thread was in, NULL: none (interned) */
	int64_t time_ns;  /* collection time of its first event: where its address is looked up */
	const char *name; /* object_name, NULL when unknown; interned in fin.strings */
	uint32_t module;  /* the module whose data (or code) holds the object, NO_MODULE if none */
	uint64_t addr;    /* the module-relative address of the object (code: of the call) */
	/* The thread (tid, 0: none) that began the work the sample was part of, and its
	   stack: an id of its stream; once located (origin_found) the index into that
	   stream's stacks; once placed its thread and tree node. */
	uint32_t origin_tid;
	uint64_t origin_stack;
	uint32_t origin_stream;
	bool origin_found;
	uint32_t origin_thread, origin_node;
	int64_t db_id; /* contexts.id once written */
};

struct fin {
	const struct finalize_opts *o;
	char dir[4096];
	struct meta meta;
	int64_t start_mono_ns;
	int64_t end_mono_ns; /* the latest end in meta/, -1 when none says */
	uint64_t interval_ns;
	bool interval_from_meta; /* interval_ns is the launcher's, not a stream header's */
	long collecting_pid;     /* a launcher still collecting the result, or 0 */

	struct stream *streams;
	size_t nstreams;
	struct image *images;
	size_t nimages, images_cap;
	struct thread *threads;
	size_t nthreads, threads_cap;
	struct module *modules;
	size_t nmodules, modules_cap;
	struct hash_index module_index;

	struct str_pool strings; /* names of functions */
	struct str_pool files;   /* source_files: id = index + 1 */
	struct function *functions;
	size_t nfunctions, functions_cap;
	struct hash_index function_index;
	struct frame *frames;
	size_t nframes, frames_cap;
	uint32_t **module_frames; /* per module, per address: first frame index */
	uint32_t unknown_frame;   /* UINT32_MAX until needed */
	bool frames_final;        /* frames and functions complete: the tree only reads them */
	struct hash_index unknown_index; /* absolute address -> frame, for NO_MODULE */
	const char **callee_names;       /* FIN_CALLEE_ADDR + k: interned in strings (frames.c) */
	size_t ncallee_names, callee_names_cap;
	struct hash_index python_frame_index; /* (function, offset, line) -> Python frame */
	uint64_t samples_python;              /* samples whose stack has Python frames */
	uint64_t samples_truncated;           /* samples whose stack was cut at the depth limit */
	struct node *nodes;
	size_t nnodes, nodes_cap;
	struct hash_index node_index;
	struct agg *aggs;
	size_t naggs, aggs_cap;
	struct hash_index agg_index;
	struct timeline_row *timeline; /* by (time_ns, thread, metric), time_ns unique per
					  thread and metric */
	size_t ntimeline;
	struct fin_metric_def *metrics; /* fin_metrics_add(); [0] is CPU Time */
	size_t nmetrics, metrics_cap;
	uint32_t spin_metric; /* index of Spin Time; 0 until a sample spins, UINT32_MAX
				 when a stream declared the name otherwise */
	uint8_t *node_spin;   /* per node: 0 not yet known, 1 spins, 2 does not */
	size_t node_spin_cap;
	struct context *contexts;
	size_t ncontexts, contexts_cap;
	struct hash_index context_index;
	struct mem_file *mems; /* memory-consumption's aggregate files */
	size_t nmems;
	struct counter_row *counters; /* by time */
	size_t ncounters, counters_cap;

	/* Summary figures. */
	uint64_t streams_duplicate; /* copies ignored */
	uint64_t samples_total, weight_total;
	uint64_t samples_func, samples_line; /* leaf resolved to a function / a source line */
	uint64_t samples_range;              /* leaf in an unnamed FDE range (func@0x<start>) */
	uint64_t bytes_total, bytes_skipped;
	uint64_t streams_bad;
	uint64_t waits_total, waits_short, wait_ns; /* of every thread (saturating) */
	uint64_t regions;                           /* OpenMP region instances recorded */
	uint64_t region_streams; /* threads' streams with regions the program named */
	uint64_t spin_samples;
	double t_load, t_resolve, t_tree, t_write;
};

/*
 * stream-check.c: after every stream is read and meta/ is known: copies of one stream are
 * ignored (stream ids), header fields are cross-checked with the file names and meta/, and a
 * stream whose weights cannot be true is not counted. Problems go to each stream.
 */
void fin_check_streams(struct fin *f);
/*
 * Once the threads are known (fin_build_images): the samples of a thread that stand for more
 * CPU time than it measured at its end (beyond FIN_SAMPLED_SLACK_NS) have their weights
 * scaled down to that time, and their streams say so.
 */
void fin_check_thread_times(struct fin *f);

/* finalize.c: names in dir ending with suffix, sorted (caller frees with fin_free_list).
   Returns how many, or -errno. */
long fin_list_dir(const char *dir, const char *suffix, char ***out);
void fin_free_list(char **v, long n);

/* image-map.c: the process images, their threads and module maps, from every stream. */
int fin_build_images(struct fin *f);

/*
 * stacks.c: each sample's stack found by its id (samples naming none counted in
 * samples_bad_stack), each ip of a sampled stack located (s->locs) and its module-relative
 * address wanted from the module. 0 or -ENOMEM.
 */
int fin_locate_stacks(struct fin *f);

/*
 * frames.c: the frames and functions of every located stack (module chains, Python frames,
 * addresses outside every module), once the modules are resolved; sets frames_final: the tree
 * adds none. 0 or -ENOMEM.
 */
int fin_build_frames(struct fin *f);
/* The frame of addr outside every module; fin_build_frames() made it (else a BUG). */
uint32_t fin_unknown_frame(const struct fin *f, uint64_t addr);

/* events.c: the streams' events; the result's metrics are finalizer/metrics.h's.
   CPU Time, then the METRIC records of every process stream, in stream order. 0 or -ENOMEM. */
int fin_build_metrics(struct fin *f);
/*
 * After fin_build_images(): every stream's VALUE records and analysis records (the decoders
 * of events.c) become s->events, their metrics mapped by name, their contexts interned.
 * 0 or -ENOMEM.
 */
int fin_build_events(struct fin *f);
/*
 * stream_load(): an analysis record (types 32-127) given to its decoder. 1 when a decoder
 * took it, 0 when none knows the type, -ENOMEM.
 */
int fin_events_take(struct stream *s, const struct raw_record *rec);
/* Append e to s->events (a decoder's to_events). 0 or -ENOMEM. */
int fin_event_add(struct stream *s, const struct event_rec *e);
/*
 * The context of (image, kind, object, region) at collection time t: its index + 1, or
 * -ENOMEM. kind 0: no wait (a CPU sample in a region); region: the regions path (interned in
 * fin.strings, compared by pointer), NULL for none.
 */
int64_t fin_context_get(struct fin *f, uint32_t image, uint32_t kind, uint64_t object, int64_t t,
			const char *region);
/* The context of an MPI call of function over comm_size ranks in image, in region (NULL:
   none): index + 1, -ENOMEM. */
int64_t fin_context_get_mpi(struct fin *f, uint32_t image, uint32_t function, uint32_t comm_size,
			    const char *region);
/*
 * Context ctx (index + 1, 0: none) of image with the origin of a part of work: thread tid of
 * the image began it at its stack stack_id, a collection time t. Index + 1, or -ENOMEM.
 */
int64_t fin_context_origin(struct fin *f, uint32_t image, uint32_t ctx, uint32_t tid,
			   uint64_t stack_id, int64_t t);
/* After module_resolve(): the names of the contexts' objects. 0 or -ENOMEM. */
int fin_name_contexts(struct fin *f);

/*
 * waits.c: the decoder of records 48-63. wait_take() keeps a WAIT, WAIT_SUM, OBJECT or
 * OMP_REGION record of s (a malformed one is counted in s->records_malformed); 0 or
 * -ENOMEM. waits_to_events() turns s->waits into Wait Time and Wait Count events and gives
 * each region its context.
 */
int wait_take(struct stream *s, const struct raw_record *rec);
int waits_to_events(struct fin *f, struct stream *s);
/*
 * memory.c: memory-consumption. fin_load_memory() reads every raw/<pid>.pmem (a file that is
 * not one is reported and left out); mem_take() keeps a stream's counters records;
 * mems_to_events() turns the aggregates of s's thread into events of the allocation metrics
 * (Allocated Bytes, Allocations, Freed Bytes, Leaked Bytes, Peak Bytes, Temporary
 * Allocations) and its counters into counter rows. fin_memory_done() sorts the counters once
 * every stream is through. 0 or -ENOMEM.
 */
int fin_load_memory(struct fin *f);
int mem_take(struct stream *s, const struct raw_record *rec);
int mems_to_events(struct fin *f, struct stream *s);
int fin_memory_done(struct fin *f);
void fin_memory_release(struct fin *f);
/* The image's metric declared under id (a METRIC record), -1 when none. */
int64_t fin_image_metric(const struct image *im, uint64_t id);

/* The name contexts.wait_kind holds for kind ("mutex"), "other" for an unknown one. */
const char *wait_kind_name(uint32_t kind);
/* The object_type of kind's objects ("mutex", "fd", "pid"), NULL when it has none (sleep). */
const char *wait_object_type(uint32_t kind);
/* What kind's object is, which says how it is named. */
enum wait_object {
	WAIT_OBJECT_NONE,   /* no object (sleep), or one not told apart (the GIL) */
	WAIT_OBJECT_DATA,   /* an address in memory: a global variable's in a module's data */
	WAIT_OBJECT_CODE,   /* a return address into the program: an OpenMP construct */
	WAIT_OBJECT_NUMBER, /* an fd, a pid, a pthread_t */
};
enum wait_object wait_object_what(uint32_t kind);

/*
 * mpi.c: the decoder of records 64-79. mpi_take() keeps an MPI_CALL, MPI_SUM or MPI_RANK
 * record of s (a malformed one counted in s->records_malformed); 0 or -ENOMEM.
 * mpis_to_events() turns s->mpis into MPI Time, MPI Calls, Bytes Sent and Bytes Received
 * events, and gives the image of a process stream with MPI_RANK that rank.
 */
int mpi_take(struct stream *s, const struct raw_record *rec);
int mpis_to_events(struct fin *f, struct stream *s);

/*
 * regions.c: the regions the program named. region_take() keeps a REGION_BEGIN/END of s;
 * regions_to_events() (before the other decoders' to_events) makes the thread's spans and
 * gives each CPU sample in a region its context; region_at() is the path at a stream time
 * (NULL: none), for the other decoders' events.
 */
int region_take(struct stream *s, const struct raw_record *rec);
/*
 * origins.c: where a thread's work began. origin_take() keeps a RAW_REC_ORIGIN of s (0 or
 * -ENOMEM); works_to_contexts() (after the decoders' to_events) gives each CPU sample in a
 * part of work another thread began the context naming it.
 */
int origin_take(struct stream *s, const struct raw_record *rec);
int works_to_contexts(struct fin *f, struct stream *s);
int regions_to_events(struct fin *f, struct stream *s);
const char *region_at(const struct stream *s, int64_t time_ns);
void regions_release(struct stream *s);

/*
 * spin.c: true when a CPU sample at tree node spins in an OpenMP runtime's wait code (the
 * table of spin.c); memoized in f->node_spin. Needs the frames and the tree's nodes.
 */
bool fin_node_spins(struct fin *f, uint32_t node);
/* Before module_resolve(): the OpenMP runtimes are asked which of their code spins. */
void fin_mark_openmp_runtimes(struct fin *f);
/* The base name of fr's module, "" outside every module. */
const char *fin_frame_module_name(const struct fin *f, const struct frame *fr);
/* By a module's base name: an OpenMP runtime (libgomp, libomp, libiomp), the C runtime. */
bool fin_openmp_module(const char *name);
bool fin_c_runtime_module(const char *name);
/* By a module's base name: an MPI library or a transport of one (libmpich, libmpi, Open MPI's
   mca_ components, UCX's libucp/libuct/libucs, libfabric). */
bool fin_mpi_module(const char *name);
/* s is one of the NULL-terminated names. */
bool fin_name_listed(const char *s, const char *const *names);
/* A function where a thread's stack begins (start_thread, clone). */
bool fin_thread_entry(const char *name);

/*
 * runtime-names.c, once the frames are made: the unnamed functions of the OpenMP runtimes
 * and of the MPI libraries get names that say what they do ("[OpenMP barrier wait]",
 * "[OpenMP worker]", "[MPI progress]") and the
 * functions the compilers outline for a parallel region name it ("main [omp parallel at
 * prog.c:42]"), from the sampled stacks. Their frames point to the new functions. 0 or
 * -ENOMEM.
 */
int fin_name_runtime_frames(struct fin *f);
/* The name runtime-names.c gives a runtime's wait: "[OpenMP barrier wait]", "[OpenMP lock
   wait]". */
bool fin_runtime_wait_name(const char *name);
/*
 * frames.c: the function (module, name, definition file and line) made when new, marked as a
 * name pfinalize gave (function.given). Index or -ENOMEM.
 */
int64_t fin_function_given(struct fin *f, uint32_t module, const char *name, int64_t file,
			   uint32_t line);

/* tree.c: the calling-context tree and the (thread, node, metric, context) aggregates. */
int fin_build_tree(struct fin *f);

/* timeline.c: f->timeline from the located samples (before symbols: needs no node). */
int fin_build_timeline(struct fin *f);

/* summary.c */
void fin_print_summary(const struct fin *f);
/* summary-fetch.c: the summary's line on what debuginfod gave, when it was asked. */
void fin_print_fetches(FILE *o, const struct fin *f);

#endif
