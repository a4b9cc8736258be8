/* SPDX-License-Identifier: MIT */
/* pfinalize's entry point: raw streams of a result directory in, result.db out. */
#ifndef PCOLLECT_FINALIZER_FINALIZE_H
#define PCOLLECT_FINALIZER_FINALIZE_H

#include <stdbool.h>
#include <stddef.h>

struct finalize_opts {
	const char *result_dir;
	const char *const *search_dirs; /* -search-dir, in order; may be NULL */
	size_t nsearch_dirs;
	const char *const *source_dirs; /* -source-search-dir, recorded for preport */
	size_t nsource_dirs;
	int jobs;           /* -j; 0 = number of CPUs */
	bool fast;          /* -finalization-mode=fast: skip inline chains and line tables of
			       modules without samples (details in docs/pfinalize.md) */
	bool quiet;         /* no summary */
	bool no_debuginfod; /* -no-debuginfod: never ask DEBUGINFOD_URLS' servers */
};

/*
 * Read every raw stream in o->result_dir, resolve symbols and write DIR/result.db atomically
 * (a temporary file renamed over the old database only when complete). Prints the summary
 * on stderr unless quiet. Returns 0, -ERR_USAGE (o->result_dir is no result directory) or a
 * negative errno, each failure told once with log_error() (docs/errors.md); never exits.
 */
int finalize_run(const struct finalize_opts *o);

/*
 * Finalize the node results of a parallel job (parts: DIR.<host> paths, result_dir_job_parts())
 * with o's options, each in a child process, up to o->jobs at once; under mpirun or srun
 * (result_job_rank_size()) rank r of s only the parts r, r + s, ... Each child tells its own
 * failures. Returns 0, -ERR_USAGE or -EIO when any part failed, -ENOMEM.
 */
int finalize_job(const struct finalize_opts *o, char **parts, size_t n);

/*
 * After this process finalized its share of job dir's n parts: counts it done (size: the
 * launcher's ranks, 1 alone) in DIR.job.db.lock under flock(); the last one writes
 * DIR.job.db, every node result's tables in one file (finalizer/job-db.c). Returns 0 or a
 * negative errno (told).
 */
int finalize_job_db(const char *dir, char *const *parts, size_t n, int size, bool quiet);

/*
 * pfinalize's command line (finalizer/main.c): parse argv, finalize, return the exit status.
 * tool names the program in messages: "pfinalize", or "pcollect" for pcollect -finalize.
 */
int finalize_main(int argc, char **argv, const char *tool);

#endif
