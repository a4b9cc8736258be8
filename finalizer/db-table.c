/* SPDX-License-Identifier: MIT */
/* The one writer of result.db's tables: an INSERT made from a table's description, rows bound
   column by column as the description says, in batches. */
#include "finalizer/db-table.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
#include "common/log.h"

const char *db_strerror_or(sqlite3 *h, const char *msg)
{
	int code = sqlite3_errcode(h) & 0xff, errnum = sqlite3_system_errno(h);

	if (code != SQLITE_IOERR && code != SQLITE_FULL && code != SQLITE_CANTOPEN)
		return msg;
	/* sqlite3_system_errno() is errno as SQLite found it after the failure, often 0 by
	   then; the unix VFS keeps the failed call's own errno with the file. */
	if (!errnum)
		sqlite3_file_control(h, "main", SQLITE_FCNTL_LAST_ERRNO, &errnum);
	if (errnum == EFBIG)
		return "File too large (the file size limit, ulimit -f)";
	return errnum ? strerror(errnum) : msg;
}

const char *db_strerror(sqlite3 *h)
{
	return db_strerror_or(h, sqlite3_errmsg(h));
}

int db_fail(sqlite3 *h, const char *what)
{
	log_error("cannot write result database (%s): %s", what, db_strerror(h));
	return -EIO;
}

static bool col_is_text(const struct db_col *c)
{
	return c->from == DB_FROM_STR || c->from == DB_FROM_CHARS;
}

/* "VERB INTO t (a, b) VALUES (?,?),(?,?)..." for rows rows. */
static int prepare(struct db_writer *w, int rows, sqlite3_stmt **st)
{
	const struct db_table *t = w->t;
	size_t size = strlen(t->verb) + strlen(t->name) + 32, i;
	char *sql, *p;
	int r, rc;

	for (i = 0; i < t->ncols; i++)
		size += strlen(t->cols[i].name) + 2;
	size += (size_t)rows * (2 * t->ncols + 3);
	sql = malloc(size);
	if (!sql)
		return -ENOMEM;
	p = sql + snprintf(sql, size, "%s INTO %s (", t->verb, t->name);
	for (i = 0; i < t->ncols; i++)
		p += snprintf(p, size - (size_t)(p - sql), "%s%s", i ? ", " : "", t->cols[i].name);
	p += snprintf(p, size - (size_t)(p - sql), ") VALUES");
	for (r = 0; r < rows; r++) {
		*p++ = r ? ',' : ' ';
		*p++ = '(';
		for (i = 0; i < t->ncols; i++) {
			if (i)
				*p++ = ',';
			*p++ = '?';
		}
		*p++ = ')';
	}
	*p = '\0';
	rc = sqlite3_prepare_v2(w->h, sql, (int)(p - sql), st, NULL);
	free(sql);
	return rc == SQLITE_OK ? 0 : db_fail(w->h, "prepare");
}

void db_writer_init(struct db_writer *w, sqlite3 *h)
{
	memset(w, 0, sizeof(*w));
	w->h = h;
}

int db_writer_begin(struct db_writer *w, const struct db_table *t, const struct db_rows_ctx *ctx)
{
	size_t i;

	if (t->ncols > DB_MAX_COLS)
		BUG("table %s has %zu columns: DB_MAX_COLS is %d", t->name, t->ncols, DB_MAX_COLS);
	for (i = 0; i < t->ncols; i++) {
		const struct db_col *c = &t->cols[i];
		bool text = !strcmp(c->type, "TEXT");

		if (c->from != DB_FROM_GET && text != col_is_text(c))
			BUG("column %s.%s is %s but its member is not", t->name, c->name, c->type);
		if (c->from == DB_FROM_GET && !c->get)
			BUG("column %s.%s has no getter", t->name, c->name);
	}
	w->t = t;
	w->ctx = *ctx;
	w->ctx.buf = w->buf;
	w->full = NULL;
	w->ncells = 0;
	w->ntext = 0;
	return 0;
}

/* Bind the buffered cells to st and insert them. */
static int run(struct db_writer *w, sqlite3_stmt *st)
{
	int i, rc;

	for (i = 0; i < w->ncells; i++) {
		const struct db_value *c = &w->cells[i];

		if (c->type == DB_VALUE_INT)
			sqlite3_bind_int64(st, i + 1, c->i);
		else if (c->type == DB_VALUE_TEXT)
			sqlite3_bind_text(st, i + 1, w->text + c->i, -1, SQLITE_STATIC);
		else
			sqlite3_bind_null(st, i + 1);
	}
	w->ncells = 0;
	w->ntext = 0;
	rc = sqlite3_step(st);
	sqlite3_reset(st);
	return rc == SQLITE_DONE ? 0 : db_fail(w->h, "insert");
}

/* The value of column c of rec. */
static struct db_value col_value(struct db_writer *w, const struct db_col *c, const void *rec,
				 int64_t id)
{
	const char *p = (c->of_stream ? (const char *)w->ctx.s : (const char *)rec) + c->off;
	struct db_value v = db_null();

	switch (c->from) {
	case DB_FROM_ID:
		v = db_int(id);
		break;
	case DB_FROM_I32:
		v = db_int(*(const int32_t *)p);
		break;
	case DB_FROM_U32:
		v = db_int(*(const uint32_t *)p);
		break;
	case DB_FROM_I64:
		v = db_int(*(const int64_t *)p);
		break;
	case DB_FROM_U64:
		v = db_int((int64_t) * (const uint64_t *)p);
		break;
	case DB_FROM_BOOL:
		v = db_int(*(const bool *)p);
		break;
	case DB_FROM_REF:
		if (*(const uint32_t *)p != UINT32_MAX)
			v = db_int((int64_t) * (const uint32_t *)p + 1);
		break;
	case DB_FROM_CONTEXT:
		v = db_int(w->ctx.context_ids[*(const uint32_t *)p]);
		break;
	case DB_FROM_STR:
		v = db_text(*(const char *const *)p);
		break;
	case DB_FROM_CHARS:
		v = db_text(p);
		break;
	case DB_FROM_GET:
		v = c->get(rec, &w->ctx);
		break;
	}
	switch (c->null) {
	case DB_NULL_NEVER:
		break;
	case DB_NULL_UNSET:
		if ((v.type == DB_VALUE_INT && v.i <= 0) || (v.type == DB_VALUE_TEXT && !v.s[0]))
			v = db_null();
		break;
	case DB_NULL_NEGATIVE:
		if (v.type == DB_VALUE_INT && v.i < 0)
			v = db_null();
		break;
	case DB_NULL_UNLESS:
		if (!*(const bool *)(p - c->off + c->null_off))
			v = db_null();
		break;
	}
	return v;
}

int db_writer_row(struct db_writer *w, const void *rec, int64_t id)
{
	const struct db_table *t = w->t;
	size_t i;
	int ret;

	for (i = 0; i < t->ncols; i++) {
		struct db_value *v = &w->cells[w->ncells++];

		*v = col_value(w, &t->cols[i], rec, id);
		if (v->type == DB_VALUE_TEXT) {
			/* Copied: a row's texts may be gone (or reused) before its batch runs. */
			size_t len = strlen(v->s) + 1;

			if (GROW(w->text, w->ntext + len, w->text_cap))
				return -ENOMEM;
			memcpy(w->text + w->ntext, v->s, len);
			v->i = (int64_t)w->ntext;
			w->ntext += len;
		}
	}
	if ((size_t)w->ncells < DB_BATCH_ROWS * t->ncols)
		return 0;
	if (!w->full && (ret = prepare(w, DB_BATCH_ROWS, &w->full)))
		return ret;
	return run(w, w->full);
}

int db_writer_end(struct db_writer *w, int ret)
{
	sqlite3_stmt *st = NULL;

	if (!ret && w->ncells) {
		ret = prepare(w, w->ncells / (int)w->t->ncols, &st);
		ret = ret ? ret : run(w, st);
		sqlite3_finalize(st);
	}
	sqlite3_finalize(w->full);
	w->full = NULL;
	w->ncells = 0;
	w->ntext = 0;
	return ret;
}

void db_writer_release(struct db_writer *w)
{
	free(w->text);
	w->text = NULL;
	w->ntext = w->text_cap = 0;
}

int db_writer_array(struct db_writer *w, const struct db_table *t, const struct db_rows_ctx *ctx,
		    const void *rows, size_t n, size_t size)
{
	size_t i;
	int ret = db_writer_begin(w, t, ctx);

	for (i = 0; i < n && !ret; i++)
		ret = db_writer_row(w, (const char *)rows + i * size, (int64_t)i + 1);
	return db_writer_end(w, ret);
}
