/* SPDX-License-Identifier: MIT */
/* Reads of the database shared by two threads, each job on one thread's own connection. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "common/log.h"
#include "report/bigmem.h"
#include "report/scan.h"

void scan_tune(sqlite3 *db)
{
	/* A view reads most pages once; mapping them saves a copy and a system call each. */
	sqlite3_exec(db, "PRAGMA mmap_size = 1099511627776", NULL, NULL, NULL);
}

/*
 * What a result.db may hold: tables and their indexes. A view or a trigger (a recursive one
 * hangs every query and grows without end) or a virtual table is no work of pfinalize's.
 */
static int check_schema(sqlite3 *db, const char *path, char *err, size_t err_size)
{
	static const char sql[] =
		"SELECT type, name FROM sqlite_master WHERE type NOT IN ('table', 'index') OR "
		"(type = 'table' AND sql LIKE 'CREATE VIRTUAL%') LIMIT 1";
	sqlite3_stmt *st;
	int rc;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
		err_set(err, err_size, "cannot read database '%s': %s", path, sqlite3_errmsg(db));
		return -EIO;
	}
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		err_set(err, err_size,
			"cannot read database '%s': it holds a %s '%s', which no result has (not a "
			"database pfinalize wrote; finalize the result again)",
			path,
			strcmp((const char *)sqlite3_column_text(st, 0), "table")
				? (const char *)sqlite3_column_text(st, 0)
				: "virtual table",
			(const char *)sqlite3_column_text(st, 1));
	else if (rc != SQLITE_DONE)
		err_set(err, err_size, "cannot read database '%s': %s", path, sqlite3_errmsg(db));
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : -EIO;
}

/*
 * A job database (read through views) as an immutable URI: pfinalize replaces it by a rename,
 * never writes it in place, so SQLite may skip its locks and journal checks, two system calls
 * or more per statement on every one of a job's many connections. NULL: no memory.
 */
static char *immutable_uri(const char *path)
{
	static const char hex[] = "0123456789ABCDEF";
	char *uri = malloc(strlen(path) * 3 + sizeof("file:?immutable=1")), *o = uri;
	const char *c;

	if (!uri)
		return NULL;
	o += snprintf(o, 6, "file:");
	for (c = path; *c; c++) {
		unsigned char ch = (unsigned char)*c;

		if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		    (ch >= '0' && ch <= '9') || strchr("/._-", ch)) {
			*o++ = (char)ch;
		} else {
			*o++ = '%';
			*o++ = hex[ch >> 4];
			*o++ = hex[ch & 15];
		}
	}
	snprintf(o, sizeof("?immutable=1"), "?immutable=1");
	return uri;
}

int scan_open(const char *path, const char *views, sqlite3 **db, char *err, size_t err_size)
{
	char *uri = views ? immutable_uri(path) : NULL;
	int rc = sqlite3_open_v2(uri ? uri : path, db,
				 SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX |
					 (uri ? SQLITE_OPEN_URI : 0),
				 NULL);

	free(uri);

	if (rc != SQLITE_OK) {
		err_set(err, err_size, "cannot open database '%s': %s", path,
			*db ? sqlite3_errmsg(*db) : sqlite3_errstr(rc));
		sqlite3_close(*db);
		*db = NULL;
		return -EIO;
	}
	/* The file is data from anywhere: nothing in it runs, nothing is written, sizes bounded. */
	sqlite3_db_config(*db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, NULL);
	sqlite3_db_config(*db, SQLITE_DBCONFIG_ENABLE_TRIGGER, 0, NULL);
	sqlite3_db_config(*db, SQLITE_DBCONFIG_ENABLE_VIEW, 0, NULL);
	sqlite3_db_config(*db, SQLITE_DBCONFIG_DEFENSIVE, 1, NULL);
	sqlite3_limit(*db, SQLITE_LIMIT_LENGTH, SCAN_MAX_VALUE);
	sqlite3_limit(*db, SQLITE_LIMIT_ATTACHED, 0);
	sqlite3_limit(*db, SQLITE_LIMIT_TRIGGER_DEPTH, 0);
	rc = check_schema(*db, path, err, err_size);
	/* TEMP views only (since SQLite 3.35 ENABLE_VIEW off still runs those), made before
	   query_only forbids making them. */
	if (!rc && views && sqlite3_exec(*db, views, NULL, NULL, NULL) != SQLITE_OK) {
		err_set(err, err_size, "cannot read database '%s': %s", path, sqlite3_errmsg(*db));
		rc = -EIO;
	}
	sqlite3_exec(*db, "PRAGMA query_only = 1", NULL, NULL, NULL);
	if (rc) {
		sqlite3_close(*db);
		*db = NULL;
		return rc;
	}
	scan_tune(*db);
	return 0;
}

static void jobs_work(struct scan_jobs *set, sqlite3 *db)
{
	size_t i;

	while ((i = atomic_fetch_add(&set->next, 1)) < set->n)
		set->jobs[i]->rc = set->jobs[i]->run(set->jobs[i], db);
}

static void *helper_main(void *arg)
{
	struct scan_jobs *set = arg;
	sqlite3 *db;

	char err[256];

	if (!scan_open(set->db_path, set->views, &db, err, sizeof(err)))
		jobs_work(set, db);
	/* When it cannot open the database, the caller's connection runs every job. */
	sqlite3_close(db);
	return NULL;
}

void scan_jobs_start(struct scan_jobs *set)
{
	atomic_init(&set->next, 0);
	set->started = false;
	if (set->n && sysconf(_SC_NPROCESSORS_ONLN) > 1)
		set->started = !pthread_create(&set->helper, NULL, helper_main, set);
}

int scan_jobs_finish(struct scan_jobs *set, sqlite3 *db)
{
	size_t i;

	jobs_work(set, db);
	if (set->started)
		pthread_join(set->helper, NULL);
	set->started = false;
	for (i = 0; i < set->n; i++)
		if (set->jobs[i]->rc)
			return set->jobs[i]->rc;
	return 0;
}

static int scan_grow(struct scan *s)
{
	size_t cap = s->cap ? 2 * s->cap : s->expect ? s->expect : 1024;
	int64_t *rows = big_realloc(s->rows, cap * (size_t)s->ncols * sizeof(*rows));

	if (!rows)
		return -ENOMEM;
	s->rows = rows;
	s->cap = cap;
	return 0;
}

static int scan_run(struct scan_job *job, sqlite3 *db)
{
	struct scan *s = (struct scan *)((char *)job - offsetof(struct scan, job));
	sqlite3_stmt *st;
	int rc, c;

	if (sqlite3_prepare_v2(db, s->sql, -1, &st, NULL) != SQLITE_OK) {
		err_set(job->err, sizeof(job->err), "%s", sqlite3_errmsg(db));
		return -EIO;
	}
	sqlite3_bind_int64(st, 1, s->lo);
	sqlite3_bind_int64(st, 2, s->hi);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t *row;

		if (s->n == s->cap && scan_grow(s)) {
			sqlite3_finalize(st);
			return -ENOMEM;
		}
		row = s->rows + s->n++ * (size_t)s->ncols;
		for (c = 0; c < s->ncols; c++) {
			row[c] = sqlite3_column_int64(st, c);
			/* NULL reads as 0; only then is the type worth asking. */
			if (!row[c] && (s->nulls & 1u << c) &&
			    sqlite3_column_type(st, c) == SQLITE_NULL)
				row[c] = SCAN_NULL;
		}
	}
	if (rc != SQLITE_DONE)
		err_set(job->err, sizeof(job->err), "%s", sqlite3_errmsg(db));
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : -EIO;
}

void scan_init(struct scan *s, const char *sql, int ncols, unsigned nulls, int64_t lo, int64_t hi,
	       size_t expect)
{
	memset(s, 0, sizeof(*s));
	s->job.run = scan_run;
	s->sql = sql;
	s->ncols = ncols;
	s->nulls = nulls;
	s->lo = lo;
	s->hi = hi;
	s->expect = expect;
}

void scan_release(struct scan *s)
{
	free(s->rows);
	s->rows = NULL;
	s->n = s->cap = 0;
}
