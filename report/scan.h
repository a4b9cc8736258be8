/* SPDX-License-Identifier: MIT */
/* Reads of the database shared by two threads, each job on one thread's own connection. */
#ifndef PCOLLECT_REPORT_SCAN_H
#define PCOLLECT_REPORT_SCAN_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <pthread.h>

struct sqlite3;

/* A piece of work on the database. */
struct scan_job {
	/* Do the work on db; return 0 or a negative errno, with SQLite's message in err. */
	int (*run)(struct scan_job *job, struct sqlite3 *db);
	int rc;
	char err[256];
};

/*
 * Jobs run by a helper thread, with a connection of its own, while the caller does other
 * work; scan_jobs_finish() runs what the helper has not taken on the caller's connection.
 * Without a second CPU, or when the helper cannot start or open the database, the caller
 * runs them all.
 */
struct scan_jobs {
	struct scan_job **jobs;
	size_t n;
	const char *db_path;
	const char *views; /* scan_open()'s views, NULL for none */
	atomic_size_t next;
	pthread_t helper;
	bool started;
};

/* Start the helper thread on jobs (jobs, n and db_path filled in). */
void scan_jobs_start(struct scan_jobs *set);
/* Run the jobs nobody took on db, wait for the helper. Returns the first failed job's rc. */
int scan_jobs_finish(struct scan_jobs *set, struct sqlite3 *db);

/* The longest string or blob a database may hand preport (SQLITE_LIMIT_LENGTH). */
#define SCAN_MAX_VALUE (16 << 20)

/*
 * Open the result database at path for reading, as data from anywhere: read-only and
 * query_only, no trigger or view ever run, an untrusted schema, values at most
 * SCAN_MAX_VALUE bytes, and refused when it holds anything but tables and indexes (a view,
 * a trigger, a virtual table). views, when not NULL, is SQL of preport's own run first: the
 * TEMP views that show one node of a job database under the tables' names (model-job-db.c).
 * Returns 0, or -EIO with err set ("cannot open database 'x': ..." / "cannot read database
 * 'x': it holds a view 'v', ...").
 */
int scan_open(const char *path, const char *views, struct sqlite3 **db, char *err, size_t err_size);

/* Make reads of db map the file instead of copying pages (preport never writes it). */
void scan_tune(struct sqlite3 *db);

/* A NULL in a column of scan.nulls (elsewhere NULL reads as 0). */
#define SCAN_NULL INT64_MIN

/* A job: a query whose every column is an integer, ?1 and ?2 bound to lo and hi. */
struct scan {
	struct scan_job job;
	const char *sql;
	int64_t lo, hi;
	int ncols;
	unsigned nulls; /* bit c: column c tells NULL (SCAN_NULL) from 0 */
	size_t expect;  /* rows expected, to allocate once (the array grows past it) */
	int64_t *rows;  /* n rows of ncols values, in the query's order */
	size_t n, cap;
};

void scan_init(struct scan *s, const char *sql, int ncols, unsigned nulls, int64_t lo, int64_t hi,
	       size_t expect);
void scan_release(struct scan *s);

#endif
