/* SPDX-License-Identifier: MIT */
/* The result database loaded into arrays: functions, frames, stacks, samples, threads. */
#ifndef PCOLLECT_REPORT_MODEL_H
#define PCOLLECT_REPORT_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/metric.h"
#include "report/arena.h"

struct sqlite3;

/*
 * Every table is read once, in rowid order, into an array; rows refer to each other by array
 * index (never by database id), -1 meaning NULL. Strings live in the model's arena and stay
 * valid until model_free().
 */
struct model_module {
	const char *name; /* "libm.so.6" */
	const char *path;
	const char *status; /* "ok", "missing", "build-id-mismatch" */
	const char *symbols;
	bool interpreter; /* runs Python code (modules.role 'interpreter') */
};

struct model_function {
	const char *name;
	int module; /* index into modules, -1 for Python */
	int file;   /* index into files, -1 when unknown */
	int line;   /* first line of the definition, 0 when unknown */
	bool resolved;
	bool range;  /* functions.kind 'range': unnamed, known by its FDE range (func@0x...) */
	bool method; /* functions.kind 'method': a C function Python calls by name, named as
			cProfile names it; shown under its Python caller even in the interpreter */
	bool python; /* functions.language 'python' */
};

struct model_frame {
	int function;
	int module;
	int file;
	int line;
	int inline_depth;
};

struct model_stack {
	int parent; /* -1 at a root */
	int frame;
};

struct model_process {
	int64_t pid;
	const char *exe;
	const char *command_line;
	const char *host;
	int64_t rank; /* -1 outside a parallel job */
	int node;     /* index into model.nodes: its host, as -group-by node counts them */
	int run;      /* index into model.runs (runs merged: model_load_runs()); -1: none */
};

struct model_thread {
	int process; /* index into processes, -1 when unknown */
	int64_t tid;
	const char *name;    /* its Python name (threading) where it has one, else the OS name */
	const char *os_name; /* the OS name where a Python name replaced it and differs, or NULL */
	int64_t cpu_ns;      /* measured by the thread at its end, 0 when unknown */
	int64_t start_ns;    /* from the collection start; -1 when unknown */
	int64_t end_ns;      /* -1 when unknown (a thread still running when the program died) */
	/* Database ids of the thread that created it and of its stack there; -1: none known. */
	int64_t parent_thread_id, parent_stack_id;
};

/*
 * A grouping context (table contexts): the wait kind and sync object of wait samples.
 * Contexts are numbered by the model (model_sample.context); kinds and objects too, for
 * -group-by wait-kind and sync-object.
 */
struct model_context {
	const char *wait_kind;    /* "mutex", "sleep", ...; NULL when the context has none */
	int64_t object;           /* the object's value: an address, an fd, a pid, 0 */
	const char *object_type;  /* "mutex", "fd", "pid", ...; NULL for none */
	const char *object_name;  /* NULL when unknown */
	int kind;                 /* index into model.wait_kinds, -1 when none */
	int sync_object;          /* index into model.sync_objects, -1 when no wait */
	const char *mpi_function; /* an MPI call's: "MPI_Send"; NULL for other contexts */
	int64_t comm_size;        /* ranks in its communicator, 0 when it has none */
	const char *region;       /* the regions the program named, "outer/inner"; NULL: none */
	int region_index;         /* index into model.regions, -1 when none */
	/* Database ids of the thread that began the work the sample was part of (an OpenMP
	   region) and of its stack there; -1: none. */
	int64_t origin_thread_id, origin_stack_id;
};

/* A distinct sync object: contexts of one type, value and name (the kinds without an object
   are one "object" per kind: [sleep]). */
struct model_sync_object {
	int context; /* the first context of the object: its columns */
};

/* How a metric's values read: its unit (docs/schema.md, table metrics). */
enum model_unit {
	MODEL_UNIT_NS,
	MODEL_UNIT_BYTES,
	MODEL_UNIT_COUNT, /* also any unit this preport does not know: a plain number */
};

/* How values combine: sum over stacks, threads, processes and time; peak: see schema.md. */
enum model_aggregation {
	MODEL_AGG_SUM,
	MODEL_AGG_PEAK,
};

struct model_metric {
	const char *name;        /* "CPU Time" */
	const char *unit_name;   /* as stored: "ns", "bytes", "count" */
	const char *kind;        /* the sample kind that carries it: "cpu", ... */
	const char *description; /* may be NULL */
	enum model_unit unit;
	enum model_aggregation aggregation;
	bool main; /* the analysis's main metric */
};

/*
 * Samples aggregated per metric, thread, stack and context (or the part of the timeline a
 * time filter keeps).
 */
struct model_sample {
	int thread;    /* index into threads, -1 when unknown */
	int stack;     /* index into stacks */
	int metric;    /* index into metrics */
	int context;   /* index into contexts, -1: none */
	int64_t count; /* events aggregated */
	int64_t value; /* in the metric's unit */
};

struct model_meta {
	const char *key;
	const char *value;
};

/* Samples that could not get Python frames, per reason (table python_notes). */
struct model_pynote {
	const char *kind;   /* "no-thread-state", "unknown-version", ... */
	const char *detail; /* "thread has no python thread state", ... */
	int64_t count;
};

struct model {
	struct sqlite3 *db;
	char *db_path;
	char *db_views; /* a node of a job database: the SQL of its views (scan_open()), or NULL */
	int schema_version; /* meta.schema_version: 1 (CPU time only) or 2 (metrics) */

	struct model_meta *meta;
	size_t nmeta;
	struct model_module *modules;
	size_t nmodules;
	const char **files; /* source file paths */
	size_t nfiles;
	struct model_function *functions;
	size_t nfunctions;
	struct model_frame *frames;
	size_t nframes;
	struct model_stack *stacks;
	size_t nstacks;
	int *stack_order; /* stack indexes, every parent before its children */
	struct model_process *processes;
	size_t nprocesses;
	struct model_thread *threads;
	size_t nthreads;
	struct model_sample *samples;
	size_t nsamples;
	struct model_pynote *pynotes; /* empty when the result has none (or no such table) */
	size_t npynotes;
	struct model_metric *metrics; /* in display order; schema 1: CPU Time alone */
	size_t nmetrics;
	struct model_context *contexts; /* empty when the result has none */
	size_t ncontexts;
	const char **wait_kinds; /* the distinct contexts.wait_kind, in order of appearance */
	size_t nwait_kinds;
	struct model_sync_object *sync_objects;
	size_t nsync_objects;
	const char **nodes; /* the processes' distinct hosts, in order of appearance */
	size_t nnodes;
	const char **regions; /* the distinct contexts.region paths, sorted */
	size_t nregions;
	const char **runs; /* runs merged (model_load_runs()): each run's name; else empty */
	size_t nruns;

	int64_t interval_ns;   /* meta.interval_ns */
	struct arena arena;    /* the strings */
	struct model_ids *ids; /* database ids of stacks, threads, contexts and metrics */
	/* A parallel job (model_load_job()): its node results' models, db NULL. */
	struct model_part *parts;
	size_t nparts;
};

/* The newest schema this preport reads (meta.schema_version). */
#define MODEL_SCHEMA_MAX 2

enum model_load_flags {
	MODEL_NO_SAMPLES = 1 << 0,  /* leave samples empty: model_load_time_range() fills them */
	MODEL_FRAME_LINES = 1 << 1, /* read frames' source positions (else file -1, line 0) */
	/* one connection, no helper thread for the samples: a job's short stacks, a few
	   thousand rows a node, cost less read in line than a second connection does */
	MODEL_ONE_CONNECTION = 1 << 2,
};

/*
 * Open the database at db_path read-only and load every table above. A database of schema 1
 * (before metrics) reads as one metric, CPU Time, from samples.time_ns and the timeline's
 * weights. Returns 0, or a negative errno with err set to the message without the tool's name
 * ("cannot open database 'x': ..."); -EPROTO for a schema newer than this preport reads.
 * On failure m is released.
 */
int model_load(struct model *m, const char *db_path, unsigned flags, char *err, size_t err_size);

/* The same of one node of a job database: views (kept in m->db_views) show its rows. */
int model_load_views(struct model *m, const char *db_path, const char *views, unsigned flags,
		     char *err, size_t err_size);

/*
 * A parallel job as one model: the databases dbs[0..n) of its node results (DIR.<host>),
 * named dir in messages, loaded and merged: equal modules, functions, frames and stack paths
 * are one, processes and threads are every node's; times count from the earliest node's
 * start (docs/preport.md, "Jobs"). Everything above reads as for one result; the databases
 * are m->parts[i].m.db (model_db()). Returns as model_load().
 */
int model_load_job(struct model *m, const char *dir, char *const *dbs, char *const *views, size_t n,
		   unsigned flags, char *err, size_t err_size);

/*
 * The job database at path (DIR.job.db, pfinalize wrote it), when it holds the job's n node
 * results (dirs, their databases dbs) as they are now: *views gets each node's views, for
 * model_load_job() with path as every node's database. Returns 0, 1 when it is missing or
 * out of date (told as a debug line: preport then reads the node databases), or -ENOMEM.
 * With short_stacks, when pfinalize wrote every node's short stacks (agg_stacks,
 * agg_samples: only what the summary, -view mpi and -group-by rank read), the views show
 * those as the nodes' stacks and samples, and *used tells it.
 */
int model_job_db_views(const char *path, char *const *dirs, char *const *dbs, size_t n,
		       bool short_stacks, bool *used, char ***views);
void model_job_db_views_free(char **views, size_t n);

/*
 * Several runs of a program as one model (preport -r PATTERN): the databases dbs[0..n),
 * database i of run run_of[i], named names[run_of[i]] (a run that is a parallel job has one
 * database per node), merged as model_load_job() merges a job's nodes, so the samples are
 * every run's, exactly. Each run's times count from its own start (the runs overlap in
 * time); model_process.run tells the runs apart. label names the set in messages. Returns
 * as model_load().
 */
int model_load_runs(struct model *m, const char *label, char *const *dbs, const int *run_of,
		    size_t n, const char *const *names, size_t nruns, unsigned flags, char *err,
		    size_t err_size);

/* The label of run i (its name); -1 is "[no run]". */
const char *model_run_label(const struct model *m, int i);

/* The label of node i (its host name); -1 is "[unknown node]". */
const char *model_node_label(const struct model *m, int i);

/* The databases behind m: one, or one per node result of a job. */
size_t model_ndbs(const struct model *m);
struct sqlite3 *model_db(const struct model *m, size_t i);
/* What to add to the times of database i to count from the job's start (0 outside a job). */
int64_t model_db_offset_ns(const struct model *m, size_t i);

/*
 * -stitch: each created thread's samples moved to copies of their stacks under the stack
 * that created the thread (and its creator's, up the chain): new stacks appended to m.
 * 0 or -ENOMEM.
 */
int model_stitch(struct model *m);

/* True when the samples table has a row. */
bool model_has_samples(struct model *m);

/*
 * Replace m->samples with the timeline samples whose time lies in [from_ns, to_ns), aggregated
 * per metric, thread, stack and context: count is the rows, value their sum. Metrics that
 * aggregate as a peak are left out (a window's peak is not a sum of its events); their index
 * is marked in skipped (model.nmetrics entries, may be NULL). Returns 0 or a negative errno
 * with err set.
 */
int model_load_time_range(struct model *m, int64_t from_ns, int64_t to_ns, bool *skipped, char *err,
			  size_t err_size);

/* One row of the timeline: an event of a metric in a thread, at a stack. */
struct model_event {
	int64_t time_ns; /* from collection start */
	int64_t value;   /* in the metric's unit */
	int thread;      /* index into threads, -1 when unknown */
	int stack;       /* index into stacks */
	int metric;      /* index into metrics */
};

/*
 * The timeline rows whose time lies in [from_ns, to_ns), in time order, into *out (allocated,
 * caller frees; *n of them). Rows of unknown stacks or undeclared metrics are left out.
 * Returns 0 or a negative errno with err set.
 */
int model_load_events(struct model *m, int64_t from_ns, int64_t to_ns, struct model_event **out,
		      size_t *n, char *err, size_t err_size);

/*
 * Every timeline row before to_ns, in time order (a job's: each node result's in turn), as a
 * sample (count 1, its value, indexes into m's tables; rows of unknown stacks or metrics are
 * skipped) with its time: fn returns 0 to go on. Returns 0, fn's other value, or a negative errno
 * with err set.
 */
typedef int (*model_timeline_fn)(void *ctx, const struct model_sample *s, int64_t time_ns);
int model_scan_timeline(struct model *m, int64_t to_ns, model_timeline_fn fn, void *ctx, char *err,
			size_t err_size);

/* The index of the metric called name (case-insensitive), or -1: a name the user gave. */
int model_find_metric(const struct model *m, const char *name);
/* The index of the known metric id (common/metric.h) in the result, or -1. */
int model_metric(const struct model *m, enum metric_id id);

/*
 * The label of sync object i ("lock_a", "mutex 0x55d0c0a0", "fd 5", "pipe:[4242] (fd 5)",
 * "[sleep]") in buf; -1 (no context) is "[no wait]".
 */
const char *model_sync_object_label(const struct model *m, int i, char *buf, size_t size);
/* The index into contexts of a contexts.id (of another table's row), -1 for none. */
int model_context_of_id(const struct model *m, int64_t id);
/* The name of wait kind i; -1 (no context) is "[no wait]". */
const char *model_wait_kind_label(const struct model *m, int i);
/* The path of region i; -1 (in none) is "[no region]". */
const char *model_region_label(const struct model *m, int i);
/* The asyncio task of function i, a task's frame ("[task alpha]"); -1 is "[no task]". */
const char *model_task_label(const struct model *m, int i);

/* The value of meta key, or NULL. */
const char *model_meta_get(const struct model *m, const char *key);
/* The value of meta key as an integer, or def when absent or not a number. */
int64_t model_meta_int(const struct model *m, const char *key, int64_t def);

/* Close the database and free everything. */
void model_free(struct model *m);

/* A copy of s in the model's arena (lives until model_free); NULL stays NULL. */
const char *model_strdup(struct model *m, const char *s);

#endif
