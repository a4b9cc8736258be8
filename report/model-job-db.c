/* SPDX-License-Identifier: MIT */
/* A job database (DIR.job.db): whether it holds the job as its node results are, and its views. */
#define LOG_DOMAIN "job"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <sqlite3.h>

#include "common/log.h"
#include "report/model-private.h"
#include "report/scan.h"

/*
 * pfinalize copied every node result's tables into the job database, a column `node` first,
 * each node's rows the range node = N of a table's key (node, the node table's key), or one
 * run of rowids of a table without a key (job_ranges). A node's model is loaded from it through
 * TEMP views of the tables' names on a connection of its own, each showing that node's rows
 * without the column: the loader reads them as the node's own database, so the job reads
 * the same from one file as from its node databases. The file is used only while every node
 * database is the one copied (job_parts: same name, size, modification time and inode): one
 * finalized again since makes preport read the node databases.
 */

/* Whether job_parts names the n parts as they are now; why not into why. */
static bool parts_same(sqlite3 *db, char *const *dirs, char *const *dbs, size_t n, const char **why)
{
	sqlite3_stmt *st;
	size_t i = 0;
	bool same = true;

	*why = "it has no list of node results";
	if (sqlite3_prepare_v2(db,
			       "SELECT node, name, db_size, db_mtime_ns, db_inode FROM job_parts "
			       "ORDER BY node",
			       -1, &st, NULL) != SQLITE_OK)
		return false;
	while (same && sqlite3_step(st) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(st, 1);
		const char *base = i < n && strrchr(dirs[i], '/') ? strrchr(dirs[i], '/') + 1
				   : i < n                        ? dirs[i]
								  : "";
		struct stat s;

		*why = "its node results are not the job's";
		same = i < n && sqlite3_column_int64(st, 0) == (sqlite3_int64)i && name &&
		       !strcmp(name, base);
		if (same && (stat(dbs[i], &s) || s.st_size != sqlite3_column_int64(st, 2) ||
			     (sqlite3_int64)s.st_mtim.tv_sec * 1000000000 + s.st_mtim.tv_nsec !=
				     sqlite3_column_int64(st, 3) ||
			     (sqlite3_int64)s.st_ino != sqlite3_column_int64(st, 4))) {
			*why = "a node result was finalized again since";
			same = false;
		}
		i++;
	}
	sqlite3_finalize(st);
	return same && i == n;
}

/* The tables of the file but the job's own (job_parts, job_ranges, job_agg, agg_*). */
static size_t count_tables(sqlite3 *db)
{
	sqlite3_stmt *c;
	size_t v = 0;

	if (sqlite3_prepare_v2(db,
			       "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name "
			       "NOT GLOB 'job_*' AND name NOT GLOB 'agg_*'",
			       -1, &c, NULL) == SQLITE_OK &&
	    sqlite3_step(c) == SQLITE_ROW)
		v = (size_t)sqlite3_column_int64(c, 0);
	sqlite3_finalize(c);
	return v;
}

/*
 * With short stacks, a table's view reads another table, or some of its columns as NULL: the
 * stacks the threads and contexts name are not among the short ones, and the views that read
 * the short stacks do not ask for them.
 */
static const struct {
	const char *table, *from, *null_column;
} short_tables[] = {
	{ "stacks", "agg_stacks", NULL },
	{ "samples", "agg_samples", NULL },
	{ "threads", NULL, "parent_stack_id" },
	{ "contexts", NULL, "origin_stack_id" },
};

/* Node i's views (allocated), from the tables' columns and job_ranges; NULL on failure. */
static char *node_views(sqlite3 *db, size_t node, bool short_stacks)
{
	sqlite3_stmt *st, *cols;
	sqlite3_str *s = sqlite3_str_new(db);
	bool ok = true;
	size_t tables = 0;
	char *out = NULL, *sql;

	if (sqlite3_prepare_v2(db,
			       "SELECT name, first_rowid, last_rowid FROM job_ranges WHERE node = ?"
			       " ORDER BY name",
			       -1, &st, NULL) != SQLITE_OK) {
		sqlite3_free(sqlite3_str_finish(s));
		return NULL;
	}
	sqlite3_bind_int64(st, 1, (sqlite3_int64)node);
	if (sqlite3_prepare_v2(db, "SELECT name FROM pragma_table_info(?) WHERE cid > 0", -1, &cols,
			       NULL) != SQLITE_OK)
		ok = false;
	while (ok && sqlite3_step(st) == SQLITE_ROW) {
		const char *t = (const char *)sqlite3_column_text(st, 0), *from = t, *null = NULL;
		size_t j;
		int k = 0;

		for (j = 0; short_stacks && t && j < sizeof(short_tables) / sizeof(short_tables[0]);
		     j++)
			if (!strcmp(t, short_tables[j].table)) {
				from = short_tables[j].from ? short_tables[j].from : t;
				null = short_tables[j].null_column;
			}
		sqlite3_str_appendf(s, "CREATE TEMP VIEW \"%w\" AS SELECT ", t ? t : "");
		sqlite3_reset(cols);
		sqlite3_bind_text(cols, 1, t, -1, SQLITE_TRANSIENT);
		while (sqlite3_step(cols) == SQLITE_ROW) {
			const char *c = (const char *)sqlite3_column_text(cols, 0);

			if (null && c && !strcmp(c, null))
				sqlite3_str_appendf(s, "%sNULL AS \"%w\"", k++ ? ", " : "", c);
			else
				sqlite3_str_appendf(s, "%s\"%w\"", k++ ? ", " : "", c);
		}
		if (from != t)
			sqlite3_str_appendf(s, " FROM main.\"%w\" WHERE node = %lld;\n", from,
					    (long long)node);
		else if (sqlite3_column_type(st, 1) == SQLITE_NULL)
			sqlite3_str_appendf(s, " FROM main.\"%w\" WHERE node = %lld;\n", t,
					    (long long)node);
		else
			sqlite3_str_appendf(
				s, " FROM main.\"%w\" WHERE rowid BETWEEN %lld AND %lld;\n", t,
				(long long)sqlite3_column_int64(st, 1),
				(long long)sqlite3_column_int64(st, 2));
		ok = t && k > 0;
		tables++;
	}
	sqlite3_finalize(cols);
	sqlite3_finalize(st);
	sql = sqlite3_str_finish(s);
	/* Every table of the file but the two of the job has its view: none reads all nodes. */
	if (ok && sql && tables == count_tables(db))
		out = strdup(sql);
	sqlite3_free(sql);
	return out;
}

/* Whether pfinalize wrote the short stacks of every node (job_agg, a row each). */
static bool has_short_stacks(sqlite3 *db, size_t n)
{
	sqlite3_stmt *c;
	bool yes = false;

	if (sqlite3_prepare_v2(db, "SELECT count(*) FROM job_agg", -1, &c, NULL) == SQLITE_OK &&
	    sqlite3_step(c) == SQLITE_ROW)
		yes = sqlite3_column_int64(c, 0) == (sqlite3_int64)n;
	sqlite3_finalize(c);
	return yes;
}

int model_job_db_views(const char *path, char *const *dirs, char *const *dbs, size_t n,
		       bool short_stacks, bool *used, char ***views)
{
	const char *why = "it cannot be read";
	char err[512];
	sqlite3 *db;
	struct stat st;
	size_t i;
	int rc = 1;

	*views = NULL;
	*used = false;
	if (stat(path, &st))
		return 1;
	if (scan_open(path, NULL, &db, err, sizeof(err))) {
		log_debug("not reading job database '%s': %s", path, err);
		return 1;
	}
	if (parts_same(db, dirs, dbs, n, &why)) {
		/* A job database of an older pfinalize has none: the full tables, then. */
		if (short_stacks && !(*used = has_short_stacks(db, n)))
			log_debug("job database '%s' has no short stacks of every node: reading "
				  "its full stacks and samples",
				  path);
		rc = (*views = calloc(n + 1, sizeof(**views))) ? 0 : -ENOMEM;
		for (i = 0; !rc && i < n; i++)
			if (!((*views)[i] = node_views(db, i, *used))) {
				why = "its tables are not all the nodes'";
				rc = 1;
			}
	}
	sqlite3_close(db);
	if (rc) {
		*used = false;
		if (rc > 0)
			log_debug("not reading job database '%s': %s", path, why);
		model_job_db_views_free(*views, n);
		*views = NULL;
	}
	return rc;
}

void model_job_db_views_free(char **views, size_t n)
{
	size_t i;

	for (i = 0; views && i < n; i++)
		free(views[i]);
	free(views);
}
