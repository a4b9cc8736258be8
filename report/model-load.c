/* SPDX-License-Identifier: MIT */
/* Load result.db into arrays: one loader walks each table's description, samples on a second
   thread. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/log.h"
#include "common/result-dir.h"
#include "report/bigmem.h"
#include "report/model-private.h"
#include "report/scan.h"

int model_error(struct loader *l, const char *fmt, ...)
{
	char what[4096];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	err_set(l->err, l->err_size, "%s: %s", what, sqlite3_errmsg(l->db));
	return -EIO;
}

int model_prepare(struct loader *l, const char *sql, sqlite3_stmt **st)
{
	if (sqlite3_prepare_v2(l->db, sql, -1, st, NULL) != SQLITE_OK)
		return model_error(l, "cannot read database '%s'", l->m->db_path);
	return 0;
}

/* Count rows first so each array is allocated once. */
static int count_rows(struct loader *l, const char *table, size_t *n)
{
	char sql[128];
	sqlite3_stmt *st;
	int rc;

	snprintf(sql, sizeof(sql), "SELECT count(*) FROM %s", table);
	rc = model_prepare(l, sql, &st);
	if (rc)
		return rc;
	*n = sqlite3_step(st) == SQLITE_ROW ? (size_t)sqlite3_column_int64(st, 0) : 0;
	sqlite3_finalize(st);
	return 0;
}

/* Columns and tables added after the first schema: absent from older results. */
static bool has_columns(struct loader *l, const char *table, const char *cols)
{
	char sql[512];
	sqlite3_stmt *st;
	bool ok;

	snprintf(sql, sizeof(sql), "SELECT %s FROM %s LIMIT 0", cols, table);
	ok = sqlite3_prepare_v2(l->db, sql, -1, &st, NULL) == SQLITE_OK;
	sqlite3_finalize(st);
	return ok;
}

/* What a column this database lacks (or that is not wanted) reads as. */
static const char absent_sql[] = "NULL";

/* Column c of t as this database spells it. */
static const char *column_sql(struct loader *l, const struct model_table *t,
			      const struct model_column *c)
{
	if (c->v1 && l->m->schema_version < 2)
		return c->v1;
	if ((c->flags & COLUMN_LINES) && !(l->flags & MODEL_FRAME_LINES))
		return absent_sql; /* only views by source line need the positions */
	if ((c->flags & COLUMN_OPTIONAL) && !has_columns(l, t->name, c->sql))
		return absent_sql;
	return c->sql;
}

int model_select(struct loader *l, const struct model_table *t, size_t first, size_t n,
		 const char *rest, char *sql, size_t size, const char **spelled)
{
	size_t len = 0, k;
	int w;

	for (k = first; k < first + n; k++) {
		const char *col = column_sql(l, t, &t->cols[k]);

		if (spelled)
			spelled[k - first] = col;
		w = snprintf(sql + len, size - len, "%s%s", k == first ? "SELECT " : ", ", col);
		if (w < 0 || (size_t)w >= size - len)
			return -ENAMETOOLONG;
		len += (size_t)w;
	}
	w = snprintf(sql + len, size - len, " %s", rest);
	return w < 0 || (size_t)w >= size - len ? -ENAMETOOLONG : 0;
}

/* Columns of a table at most. */
#define MAX_COLS 16

/*
 * Rows are read a batch at a time, then converted a column at a time: each loop then does one
 * thing, and SQLite's calls are apart from the conversions.
 */
#define BATCH 64

struct batch {
	int64_t v[BATCH][MAX_COLS]; /* integers; a text's copy (STR) or value (ENUM) */
	unsigned nulls[BATCH];      /* bit k: column k is NULL */
	size_t n;
	unsigned texts;     /* bit k: column k is read as text */
	unsigned nullable;  /* bit k: column k tells NULL from 0 */
	unsigned absent;    /* bit k: column k is not in this database (or not wanted): NULL */
	int ints[MAX_COLS]; /* the integer columns read */
	int nints;
	const struct idmap *maps[MAX_COLS];
};

/* Ready for the rows of t, its columns spelled so. */
static void batch_init(struct batch *b, struct loader *l, const struct model_table *t,
		       const char *const *spelled)
{
	size_t k;

	b->n = 0;
	b->texts = b->nullable = b->absent = 0;
	b->nints = 0;
	for (k = 0; k < t->ncols; k++) {
		const struct model_column *c = &t->cols[k];

		b->maps[k] = c->type >= COLUMN_REF ? &l->m->ids->map[c->map] : NULL;
		if (spelled[k] == absent_sql)
			b->absent |= 1u << k;
		else if (c->type == COLUMN_STR || c->type == COLUMN_ENUM)
			b->texts |= 1u << k;
		else
			b->ints[b->nints++] = (int)k;
		/* NULL reads as 0; only then is the type worth asking (rowid 0 is legal). */
		if (c->null_int || (c->flags & COLUMN_REQUIRED) || c->type == COLUMN_REF ||
		    c->type == COLUMN_LATER)
			b->nullable |= 1u << k;
	}
}

/* st's row into the batch: 0 or -ENOMEM. */
static int batch_read(struct model *m, const struct model_table *t, sqlite3_stmt *st,
		      struct batch *b)
{
	/* Locals: the calls into SQLite would make the compiler load them again each time. */
	unsigned nulls = b->absent, texts = b->texts, nullable = b->nullable;
	int64_t *v = b->v[b->n];
	int j, k, nints = b->nints;
	const char *s;

	for (j = 0; j < nints; j++) {
		k = b->ints[j];
		v[k] = sqlite3_column_int64(st, k);
		if (!v[k] && (nullable >> k & 1) && sqlite3_column_type(st, k) == SQLITE_NULL)
			nulls |= 1u << k;
	}
	for (k = 0; texts >> k; k++) {
		if (!(texts >> k & 1))
			continue;
		if (!(s = (const char *)sqlite3_column_text(st, k)))
			nulls |= 1u << k;
		else if (t->cols[k].type == COLUMN_ENUM)
			v[k] = t->cols[k].parse(s);
		else if ((s = model_strdup(m, s)))
			v[k] = (int64_t)(intptr_t)s;
		else
			return -ENOMEM;
	}
	b->nulls[b->n++] = nulls;
	return 0;
}

/*
 * Each row r of the batch in turn: v its value of column k (null: NULL), f its field. The
 * bounds are locals: a store through f may alias anything (-fno-strict-aliasing).
 */
#define EACH_ROW(stmt)                                                                             \
	for (r = 0, f = base + c->offset; r < nb; r++, f += size) {                                \
		int64_t v = vals[r * MAX_COLS + k];                                                \
		bool null = nulls[r] >> k & 1;                                                     \
                                                                                                   \
		(void)v;                                                                           \
		(void)null;                                                                        \
		stmt;                                                                              \
	}

/*
 * The batch's rows into rows[i..]: converted column by column, fixed up row by row, those
 * left out dropped, the ids of the others into the table's map. Returns the new row count.
 */
static size_t batch_store(struct loader *l, const struct model_table *t, struct batch *b,
			  char *rows, size_t i)
{
	struct idmap *map = t->map != MAP_NONE ? &l->m->ids->map[t->map] : NULL;
	size_t nb = b->n, size = t->row_size, r, k, kept = i;
	const int64_t *vals = &b->v[0][0];
	const unsigned *nulls = b->nulls;
	char *base = rows + i * size, *f;
	bool drop[BATCH] = { false };
	int64_t ids[BATCH];

	for (k = 0; k < t->ncols; k++) {
		const struct model_column *c = &t->cols[k];
		const struct idmap *to = b->maps[k];
		bool required = c->flags & COLUMN_REQUIRED;
		int64_t null_int = c->null_int;
		const char *null_str = c->null_str;

		switch (c->type) {
		case COLUMN_ID:
			EACH_ROW(ids[r] = v);
			break;
		case COLUMN_STR:
			EACH_ROW(*(const char **)f = null ? null_str : (const char *)(intptr_t)v);
			break;
		case COLUMN_INT:
		case COLUMN_ENUM:
			EACH_ROW(*(int *)f = null ? (int)null_int : (int)v);
			break;
		case COLUMN_INT64:
			EACH_ROW(*(int64_t *)f = null ? null_int : v);
			break;
		case COLUMN_BOOL:
			EACH_ROW(*(bool *)f = null ? null_int != 0 : (int)v != 0);
			break;
		case COLUMN_REF:
			EACH_ROW(*(int *)f = null ? -1 : idmap_find(to, v);
				 drop[r] |= required && *(int *)f < 0);
			break;
		case COLUMN_REF0:
			EACH_ROW(*(int *)f = !null && v ? idmap_find(to, v) : -1);
			break;
		case COLUMN_LATER:
			EACH_ROW(l->later[i + r] = null ? -1 : v);
			break;
		}
		if (required)
			EACH_ROW(drop[r] |= null);
	}
	for (r = 0; r < nb; r++) {
		char *row = base + r * size;

		if (drop[r] || (t->fix && !t->fix(l->m, row)))
			continue;
		if (kept != i + r) {
			memcpy(rows + kept * size, row, size);
			if (l->later)
				l->later[kept] = l->later[i + r];
		}
		if (map)
			idmap_set(map, kept, ids[r]);
		kept++;
	}
	b->n = 0;
	return kept;
}

int model_load_table(struct loader *l, const struct model_table *t)
{
	struct model *m = l->m;
	struct idmap *map = t->map != MAP_NONE ? &m->ids->map[t->map] : NULL;
	const struct model_column *later = NULL;
	sqlite3_stmt *st = NULL;
	size_t n, nread = 0, i = 0, k;
	char sql[1024], *rows;
	const char *spelled[MAX_COLS];
	struct batch *b;
	int rc;

	if (m->schema_version < t->since || (t->needs && !has_columns(l, t->name, t->needs)))
		return t->older ? t->older(l) : 0;
	if (t->ncols > MAX_COLS)
		BUG("table %s has %zu columns, more than %d", t->name, t->ncols, MAX_COLS);
	if ((rc = count_rows(l, t->name, &n)))
		return rc;
	rows = big_calloc(n ? n : 1, t->row_size);
	if (!rows)
		return -ENOMEM;
	memcpy((char *)m + t->rows, &rows, sizeof(rows));
	if (map && idmap_alloc(map, n))
		return -ENOMEM;
	for (k = 0; k < t->ncols; k++)
		if (t->cols[k].type == COLUMN_LATER)
			later = &t->cols[k];
	if (later && !(l->later = big_malloc((n ? n : 1) * sizeof(*l->later))))
		return -ENOMEM;
	if (!(b = malloc(sizeof(*b))))
		return -ENOMEM;
	if ((rc = model_select(l, t, 0, t->ncols, t->from, sql, sizeof(sql), spelled)) ||
	    (rc = model_prepare(l, sql, &st)))
		goto out;
	batch_init(b, l, t, spelled);
	while ((rc = model_step(l, st)) > 0) {
		if (nread++ == n) {
			rc = 0; /* rows added since they were counted */
			break;
		}
		if ((rc = batch_read(m, t, st, b)))
			break;
		if (b->n == BATCH)
			i = batch_store(l, t, b, rows, i);
	}
	if (!rc && b->n)
		i = batch_store(l, t, b, rows, i);
	*(size_t *)((char *)m + t->count) = i;
	if (!rc && map)
		rc = idmap_finish(map, i);
	if (!rc && later && later->map == t->map)
		rc = model_resolve_later(l, t);
	if (!rc && t->finish)
		rc = t->finish(l);
out:
	sqlite3_finalize(st);
	free(b);
	return rc;
}

int model_resolve_later(struct loader *l, const struct model_table *t)
{
	const struct model_column *c = NULL;
	char *rows;
	size_t *count = (size_t *)((char *)l->m + t->count), i, k = 0;

	for (i = 0; i < t->ncols && !c; i++)
		if (t->cols[i].type == COLUMN_LATER)
			c = &t->cols[i];
	if (!c)
		return 0;
	memcpy(&rows, (char *)l->m + t->rows, sizeof(rows));
	for (i = 0; i < *count; i++) {
		int64_t id = l->later[i];
		int x = id < 0 ? -1 : model_index(l->m, c->map, id);

		if (x < 0 && (c->flags & COLUMN_REQUIRED))
			continue; /* the rows kept move up: a table with a map has no such column */
		if (k != i)
			memcpy(rows + k * t->row_size, rows + i * t->row_size, t->row_size);
		*(int *)(rows + k++ * t->row_size + c->offset) = x;
	}
	*count = k;
	free(l->later);
	l->later = NULL;
	return 0;
}

/*
 * The samples table, read by the helper thread (on a connection of its own) while this one
 * reads frames and stacks; their stacks are translated once the stacks are loaded.
 */
struct samples_job {
	struct scan_job job;
	struct loader l;
	char err[1024];
};

static int samples_run(struct scan_job *job, sqlite3 *db)
{
	struct samples_job *sj =
		(struct samples_job *)((char *)job - offsetof(struct samples_job, job));

	sj->l.db = db;
	return model_load_table(&sj->l, &model_samples_table);
}

/* The map a loaded model keeps: the timeline's references. */
static bool map_kept(enum model_map map)
{
	return map == MAP_STACKS || map == MAP_THREADS || map == MAP_CONTEXTS || map == MAP_METRICS;
}

int model_load(struct model *m, const char *db_path, unsigned flags, char *err, size_t err_size)
{
	return model_load_views(m, db_path, NULL, flags, err, err_size);
}

int model_load_views(struct model *m, const char *db_path, const char *views, unsigned flags,
		     char *err, size_t err_size)
{
	struct loader l = { .m = m, .flags = flags, .err = err, .err_size = err_size };
	struct samples_job sj = { .job.run = samples_run, .l = l };
	struct scan_job *jobs[] = { &sj.job };
	struct scan_jobs set = { .jobs = jobs, .db_path = db_path, .views = views };
	struct stat st;
	size_t i;
	int rc;

	memset(m, 0, sizeof(*m));
	m->arena.chunk_size = MODEL_ARENA_CHUNK;
	m->db_path = strdup(db_path);
	m->db_views = views ? strdup(views) : NULL;
	m->ids = calloc(1, sizeof(*m->ids));
	if (!m->db_path || !m->ids || (views && !m->db_views)) {
		rc = -ENOMEM;
		goto out;
	}
	/* A FIFO or a device in place of the database would hang SQLite or feed it forever. */
	rc = result_open_file(db_path, false, 0, &st);
	if (rc < 0) {
		err_set(err, err_size, "cannot open database '%s': %s", db_path,
			result_strerror(-rc));
		goto out;
	}
	close(rc);
	if ((rc = scan_open(db_path, views, &m->db, err, err_size)))
		goto out;
	l.db = m->db;
	sj.l.err = sj.err;
	sj.l.err_size = sizeof(sj.err);
	for (i = 0; i < model_ntables && !rc; i++) {
		/* The helper reads the samples while this thread reads frames and stacks. */
		if (i == model_tables_beside_samples && !(flags & MODEL_NO_SAMPLES)) {
			set.n = 1;
			if (!(flags & MODEL_ONE_CONNECTION))
				scan_jobs_start(&set);
		}
		rc = model_load_table(&l, model_tables[i]);
	}
	if (set.n && scan_jobs_finish(&set, m->db) && !rc) {
		rc = sj.job.rc;
		if (rc != -ENOMEM)
			err_set(err, err_size, "%s", sj.err);
	}
	if (!rc && set.n)
		rc = model_resolve_later(&sj.l, &model_samples_table);
	if (rc == -ENOMEM)
		err_set(err, err_size, "cannot load database '%s': %s", db_path, strerror(ENOMEM));
	m->interval_ns = model_meta_int(m, "interval_ns", 0);
out:
	free(l.later);
	free(sj.l.later);
	for (i = 0; m->ids && i < MAP_COUNT; i++)
		if (!map_kept((enum model_map)i))
			idmap_release(&m->ids->map[i]);
	if (rc)
		model_free(m);
	return rc;
}
