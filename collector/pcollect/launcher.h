/* SPDX-License-Identifier: MIT */
/* pcollect's launcher: runs the target with the agent preloaded and records the collection. */
#ifndef PCOLLECT_COLLECTOR_LAUNCHER_H
#define PCOLLECT_COLLECTOR_LAUNCHER_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/result-dir.h"

enum collect_finalization {
	COLLECT_FINALIZE_FULL,
	COLLECT_FINALIZE_FAST,
	COLLECT_FINALIZE_DEFERRED, /* -archive, no finalization: finalize elsewhere */
	COLLECT_FINALIZE_NONE,
};

/* -knob wait-threshold's default: waits this long get their own stack (ns). */
#define COLLECT_WAIT_THRESHOLD_NS 100000u

struct collect_opts {
	const char *analysis;   /* "hotspots", "threading" or "memory-consumption" */
	bool analysis_default;  /* no -collect given: hotspots, and the start message says so */
	const char *result_dir; /* -r, or NULL for r000hs naming */
	uint64_t interval_ns;
	uint32_t stack_depth;
	bool task_clock;            /* -knob sampling-clock=task-clock */
	int signo;                  /* -knob sampling-signal=N; 0: the agent chooses */
	bool trace_mpi;             /* -trace-mpi: the MPI shims preloaded after the agent */
	uint64_t mpi_threshold_ns;  /* -knob mpi-threshold: a call this long gets its stack */
	bool waits;                 /* threading, or hotspots with -knob enable-wait-time=true */
	uint64_t wait_threshold_ns; /* -knob wait-threshold */
	bool memory;                /* memory-consumption: allocations, no CPU samples */
	uint64_t mem_sample_bytes;  /* -knob sampling=bytes:N; 0: every allocation (exact) */
	uint64_t duration_ns;       /* 0: the whole run */
	uint64_t ring_ns;           /* -ring-buffer: the window kept; 0: everything */
	double data_limit_mb;       /* MiB, fractions allowed; 0: unlimited */
	bool follow_child;
	bool archive;
	bool quiet;
	enum result_mode result_mode; /* -result-mode: who may read the result */
	enum collect_finalization finalization;
	const char *const *search_dirs; /* for the finalizer */
	size_t nsearch_dirs;
	const char *const *source_dirs; /* src:= search dirs, recorded for preport */
	size_t nsource_dirs;
	int argc; /* the target command (-target-pid: its command line) */
	char **argv;
	const char *command_line; /* pcollect's own command line, for the metadata */
	int target_pid;           /* -target-pid: attach to this running process; 0: launch */
	bool target_loads_agent;  /* -target-loads-agent: it loads the agent, told on stdout */
	bool start_paused;        /* -start-paused (also implied by -resume-after) */
	uint64_t resume_after_ns; /* -resume-after: resume this long after the start; 0: no */
};

struct meta;
struct agent_data_counter;

/* One collection as the launcher keeps it: its directory, metadata and shared page. */
struct collection {
	char name[PATH_MAX]; /* as the user named it, for messages */
	char dir[PATH_MAX];  /* absolute */
	char meta_path[PATH_MAX];
	bool created; /* the directory did not exist */
	int rank;     /* MPI rank, -1 outside a parallel job */
	struct meta *meta;
	struct agent_data_counter *counter; /* the shared page, or NULL */
	uint64_t start_real, start_mono;    /* ns: time 0 of the result */
};

/*
 * Create the result directory, its shared page (paused with -start-paused) and metadata
 * (status running). Returns 0, or pcollect's exit code (told).
 */
int collection_begin(struct collection *c, const struct collect_opts *o);
/* The collection did not happen (the target could not be run): leave nothing behind. */
void collection_abandon(struct collection *c);
/*
 * The collection is over: the end of the metadata (status done), the data limit announced,
 * then archive and finalize as asked. Takes the metadata.
 */
void collection_end(struct collection *c, const struct collect_opts *o);
/* -resume-after: resume the collection once its time has come. True when it was done. */
bool collection_resume_due(struct collection *c, const struct collect_opts *o);

/* The agent, beside pcollect (build tree) or in <libdir>/pcollect. 0 or -errno. */
int launcher_find_agent(char *buf, size_t size);
/* The directory of the Python API's module (api/python). 0 or -errno. */
int launcher_find_python(char *buf, size_t size);

/*
 * Run the tool name ("pfinalize", "preport") with argv, argv[0] "pcollect" so that it speaks as
 * pcollect (common/tool-run.h), and wait for it. Returns its exit status (128 + N when signal N
 * ended it), or 1 when it could not be run (told).
 */
int launcher_run_tool(const char *name, char **argv);

/* pcollect -target-pid PID (attach.c): attach, sample, detach, finalize. As collect_run(). */
int attach_run(const struct collect_opts *o);

/*
 * -ring-buffer (ring.c): drop from every thread stream of dir the chunks that ended more
 * than keep_ns before now (CLOCK_MONOTONIC ns; 0: the present), holes punched in the
 * files. Failures are warned about once.
 */
void ring_trim(const char *dir, uint64_t keep_ns, uint64_t now);
/*
 * Finalize the collection in dir as it stands now (its last keep_ns of samples; 0: all) into
 * a result of its own, dir/snapshots/N, N the first free from 1. Returns the exit code (told).
 */
int ring_snapshot(const char *dir, uint64_t keep_ns, bool quiet);

/* pcollect -r DIR -command pause|resume|stop|snapshot (command.c). Returns the exit code. */
int collect_command(const char *result_dir, const char *command, bool quiet);

/*
 * Check the target, create the result directory, run the target to its end with the agent,
 * write the metadata, then archive and finalize as asked. Returns pcollect's exit code: the
 * target's (128 + N when it died of signal N), or 2 when the target cannot be profiled, or 1
 * when the collection could not start. Prints its own messages.
 */
int collect_run(const struct collect_opts *o);

/*
 * Copy the binaries that have samples into DIR/archive (-archive). A binary that cannot be
 * copied is a warning; returns 0, or -errno when the raw streams cannot be read (told).
 */
int archive_result(const char *dir, bool quiet);

#endif
