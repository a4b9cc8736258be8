/* SPDX-License-Identifier: MIT */
/* A parallel job's database: every node result's tables in one file, written by one rank. */
#define LOG_DOMAIN "job"
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#include "common/grow.h"
#include "common/log.h"
#include "common/result-dir.h"
#include "finalizer/finalize.h"
#include "finalizer/job-agg.h"

/*
 * DIR.job.db (docs/schema.md, "The job database") holds every table of every node result,
 * each row with the node's number (its place among the DIR.<host> in name order) in a first
 * column `node`, the rows of a node the range node = N of the key (node, the node table's
 * key) or one run of rowids (job_ranges says which), and in
 * job_parts each node result's name and its result.db's size, modification time and inode
 * as they were when copied: preport reads the job from this one file while they still hold,
 * and the node databases once one was finalized again.
 */

static int db_exec(sqlite3 *db, const char *sql)
{
	char *msg = NULL;

	if (!sql)
		return -ENOMEM;
	if (sqlite3_exec(db, sql, NULL, NULL, &msg) == SQLITE_OK)
		return 0;
	log_error("cannot write the job database: %s", msg ? msg : sqlite3_errmsg(db));
	sqlite3_free(msg);
	return -EIO;
}

/* db_exec() of a sqlite3_mprintf() string, freed. */
static int db_execf(sqlite3 *db, char *sql)
{
	int rc = db_exec(db, sql);

	sqlite3_free(sql);
	return rc;
}

/* One integer a query gives (its first column), or -1. */
static int64_t db_int(sqlite3 *db, char *sql)
{
	sqlite3_stmt *st = NULL;
	int64_t v = -1;

	if (sql && sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	sqlite3_free(sql);
	return v;
}

/* A table's columns, joined by commas, in schema s; NULL when it has none (sqlite3_free). */
static char *db_columns(sqlite3 *db, const char *s, const char *table, bool skip_node)
{
	char *sql = sqlite3_mprintf("SELECT group_concat(name, ',') FROM pragma_table_info(%Q, %Q)"
				    " WHERE cid >= %d",
				    table, s, skip_node ? 1 : 0);
	sqlite3_stmt *st = NULL;
	char *cols = NULL;

	if (sql && sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
		cols = sqlite3_mprintf("%s", (const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	sqlite3_free(sql);
	return cols;
}

/* The tables of the first node result: the job's (names allocated). */
static int db_tables(sqlite3 *db, char ***names, size_t *n)
{
	sqlite3_stmt *st;
	size_t cap = 0;
	int rc = 0;

	*names = NULL;
	*n = 0;
	if (sqlite3_prepare_v2(db,
			       "SELECT name FROM p.sqlite_master WHERE type = 'table' AND name NOT "
			       "LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY rowid",
			       -1, &st, NULL) != SQLITE_OK) {
		log_error("cannot write the job database: %s", sqlite3_errmsg(db));
		return -EIO;
	}
	while (!rc && sqlite3_step(st) == SQLITE_ROW) {
		if (GROW(*names, *n + 1, cap) ||
		    !((*names)[*n] = strdup((const char *)sqlite3_column_text(st, 0))))
			rc = -ENOMEM;
		else
			(*n)++;
	}
	sqlite3_finalize(st);
	return rc;
}

/*
 * The job's table of node 0's table t: `node` and t's columns. A table with a primary key
 * gets (node, that key) as its own, WITHOUT ROWID: a node's rows are one range of it, in
 * the key's order, which the loader's ORDER BY id then reads without a sort. One without
 * (the timeline) keeps rowids: a node's rows are one run of them (job_ranges).
 */
static int create_table(sqlite3 *db, const char *t)
{
	sqlite3_str *s = sqlite3_str_new(db), *key = sqlite3_str_new(db);
	sqlite3_stmt *st = NULL;
	char *sql, *pk;
	int rc;

	sqlite3_str_appendf(s, "CREATE TABLE main.\"%w\" (node INTEGER NOT NULL", t);
	if (sqlite3_prepare_v2(db, "SELECT name, pk FROM pragma_table_info(?, 'p') ORDER BY cid",
			       -1, &st, NULL) == SQLITE_OK) {
		sqlite3_bind_text(st, 1, t, -1, SQLITE_STATIC);
		while (sqlite3_step(st) == SQLITE_ROW)
			sqlite3_str_appendf(s, ", \"%w\"",
					    (const char *)sqlite3_column_text(st, 0));
	}
	sqlite3_finalize(st);
	st = NULL;
	if (sqlite3_prepare_v2(
		    db, "SELECT name FROM pragma_table_info(?, 'p') WHERE pk > 0 ORDER BY pk", -1,
		    &st, NULL) == SQLITE_OK) {
		sqlite3_bind_text(st, 1, t, -1, SQLITE_STATIC);
		while (sqlite3_step(st) == SQLITE_ROW)
			sqlite3_str_appendf(key, ", \"%w\"",
					    (const char *)sqlite3_column_text(st, 0));
	}
	sqlite3_finalize(st);
	pk = sqlite3_str_finish(key);
	if (pk && *pk)
		sqlite3_str_appendf(s, ", PRIMARY KEY (node%s)) WITHOUT ROWID", pk);
	else
		sqlite3_str_appendf(s, ")");
	sqlite3_free(pk);
	sql = sqlite3_str_finish(s);
	rc = db_exec(db, sql ? sql : NULL);
	sqlite3_free(sql);
	return rc;
}

/* Whether the job's table t has rowids. */
static bool has_rowid(sqlite3 *db, const char *t)
{
	char *sql = sqlite3_mprintf("SELECT rowid FROM main.\"%w\" LIMIT 0", t);
	sqlite3_stmt *st = NULL;
	bool yes = sql && sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK;

	sqlite3_finalize(st);
	sqlite3_free(sql);
	return yes;
}

/* Node i's database attached as p, copied into the job's tables (made from node 0's). */
static int copy_part(sqlite3 *db, const char *part, size_t i, char ***tables, size_t *ntables)
{
	char path[PATH_MAX];
	const char *name = strrchr(part, '/') ? strrchr(part, '/') + 1 : part;
	struct stat st;
	size_t t;
	int rc;

	if (result_path(path, sizeof(path), part, RESULT_PATH_DB, 0, 0, NULL, NULL) < 0 ||
	    stat(path, &st)) {
		log_error("cannot write the job database: no database of '%s'", part);
		return -ENOENT;
	}
	/* Each node in a transaction of its own: a database is attached outside one only. */
	if ((rc = db_execf(db, sqlite3_mprintf("ATTACH %Q AS p", path))))
		return rc;
	rc = db_exec(db, "BEGIN");
	if (!rc && i == 0 && !(rc = db_tables(db, tables, ntables)))
		for (t = 0; t < *ntables && !rc; t++)
			rc = create_table(db, (*tables)[t]);
	for (t = 0; t < *ntables && !rc; t++) {
		const char *tb = (*tables)[t];
		char *mine = db_columns(db, "main", tb, true),
		     *theirs = db_columns(db, "p", tb, false);
		bool rowids = has_rowid(db, tb);
		int64_t first =
			rowids ? db_int(db, sqlite3_mprintf("SELECT coalesce(max(rowid), 0) + 1 "
							    "FROM main.\"%w\"",
							    tb))
			       : 0;

		if (!mine || !theirs || strcmp(mine, theirs)) {
			log_error("cannot write the job database: table '%s' of '%s' is not the "
				  "first node result's (finalize them all with one pfinalize)",
				  tb, path);
			rc = -EPROTO;
		}
		sqlite3_free(mine);
		sqlite3_free(theirs);
		if (!rc)
			rc = db_execf(db, sqlite3_mprintf("INSERT INTO main.\"%w\" SELECT %lld, * "
							  "FROM p.\"%w\"",
							  tb, (long long)i, tb));
		if (!rc && rowids)
			rc = db_execf(db,
				      sqlite3_mprintf("INSERT INTO job_ranges VALUES (%Q, %lld, "
						      "%" PRId64 ", (SELECT coalesce(max(rowid),"
						      " 0) FROM main.\"%w\"))",
						      tb, (long long)i, first, tb));
		else if (!rc)
			rc = db_execf(db,
				      sqlite3_mprintf("INSERT INTO job_ranges VALUES (%Q, %lld, "
						      "NULL, NULL)",
						      tb, (long long)i));
	}
	if (!rc)
		rc = job_agg_write(db, i);
	if (!rc)
		rc = db_execf(db, sqlite3_mprintf("INSERT INTO job_parts VALUES (%lld, %Q, %lld, "
						  "%lld, %lld)",
						  (long long)i, name, (long long)st.st_size,
						  (long long)st.st_mtim.tv_sec * 1000000000ll +
							  st.st_mtim.tv_nsec,
						  (long long)st.st_ino));
	if (!rc)
		rc = db_exec(db, "COMMIT");
	else
		sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
	if (db_exec(db, "DETACH p") && !rc)
		rc = -EIO;
	return rc;
}

/* Write dir's job database from its n node results' (under the lock): a temporary file
   renamed over DIR.job.db when whole. */
static int job_db_write(const char *dir, char *const *parts, size_t n)
{
	char path[PATH_MAX], tmp[PATH_MAX], suffix[32];
	char **tables = NULL;
	size_t ntables = 0, i;
	sqlite3 *db = NULL;
	int rc;

	snprintf(suffix, sizeof(suffix), ".tmp.%ld", (long)getpid());
	if (result_job_db_path(dir, "", path, sizeof(path)) ||
	    result_job_db_path(dir, suffix, tmp, sizeof(tmp))) {
		log_error("cannot write the job database of '%s': %s", dir, strerror(ENAMETOOLONG));
		return -ENAMETOOLONG;
	}
	unlink(tmp);
	if (sqlite3_open_v2(tmp, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) !=
	    SQLITE_OK) {
		log_error("cannot write the job database '%s': %s", tmp,
			  db ? sqlite3_errmsg(db) : strerror(ENOMEM));
		sqlite3_close(db);
		return -EIO;
	}
	rc = db_exec(db, "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; "
			 "PRAGMA cache_size = -65536; "
			 "CREATE TABLE job_parts (node INTEGER PRIMARY KEY, name TEXT NOT NULL, "
			 "db_size INTEGER NOT NULL, db_mtime_ns INTEGER NOT NULL, db_inode INTEGER "
			 "NOT NULL); CREATE TABLE job_ranges (name TEXT NOT NULL, node INTEGER NOT "
			 "NULL, first_rowid INTEGER, last_rowid INTEGER, "
			 "PRIMARY KEY (name, node))");
	if (!rc)
		rc = job_agg_create(db);
	for (i = 0; i < n && !rc; i++)
		rc = copy_part(db, parts[i], i, &tables, &ntables);
	if (sqlite3_close(db) != SQLITE_OK && !rc)
		rc = -EIO;
	for (i = 0; i < ntables; i++)
		free(tables[i]);
	free(tables);
	if (!rc && rename(tmp, path)) {
		rc = -errno;
		log_error("cannot write the job database '%s': %s", path, strerror(errno));
	}
	if (rc)
		unlink(tmp);
	return rc;
}

int finalize_job_db(const char *dir, char *const *parts, size_t n, int size, bool quiet)
{
	char lock[PATH_MAX], id[256], had[256 + 32];
	long count = 0;
	ssize_t got;
	int fd, rc;

	if (result_job_db_path(dir, ".lock", lock, sizeof(lock))) {
		log_error("cannot write the job database of '%s': %s", dir, strerror(ENAMETOOLONG));
		return -ENAMETOOLONG;
	}
	fd = open(lock, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0) {
		log_error("cannot open '%s': %s", lock, strerror(errno));
		return -errno;
	}
	/*
	 * The ranks of one launch count themselves done in the lock file, one at a time under
	 * flock(): "<job id> <ranks done>". The last to finish its share writes the database,
	 * still holding the lock, so two launches on one job never write it at once either.
	 */
	while ((rc = flock(fd, LOCK_EX)) && errno == EINTR)
		;
	if (rc) {
		rc = -errno;
		log_error("cannot lock '%s': %s", lock, strerror(errno));
		close(fd);
		return rc;
	}
	result_job_id(id, sizeof(id));
	got = pread(fd, had, sizeof(had) - 1, 0);
	had[got > 0 ? got : 0] = '\0';
	if (size > 1 && !strncmp(had, id, strlen(id)) && had[strlen(id)] == ' ')
		count = strtol(had + strlen(id) + 1, NULL, 10);
	count++;
	if (count < size) {
		got = snprintf(had, sizeof(had), "%s %ld\n", id, count);
		rc = ftruncate(fd, 0) || pwrite(fd, had, (size_t)got, 0) != got ? -errno : 0;
		if (rc)
			log_error("cannot write '%s': %s", lock, strerror(-rc));
		log_debug("%ld of %d ranks done: the last writes the job database", count, size);
		close(fd);
		return rc;
	}
	if (ftruncate(fd, 0))
		log_debug("cannot empty '%s': %s", lock, strerror(errno));
	rc = job_db_write(dir, parts, n);
	if (!rc && !quiet && !result_job_db_path(dir, "", lock, sizeof(lock)))
		log_info("job database '%s' written (%zu node result%s)", lock, n,
			 n == 1 ? "" : "s");
	close(fd);
	return rc;
}
