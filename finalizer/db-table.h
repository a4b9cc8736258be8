/* SPDX-License-Identifier: MIT */
/* A table of result.db as data: its columns, where each value comes from, and one writer. */
#ifndef PCOLLECT_FINALIZER_DB_TABLE_H
#define PCOLLECT_FINALIZER_DB_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sqlite3.h>

struct fin;
struct stream;

/* Where a column's value comes from. */
enum db_from {
	DB_FROM_ID,  /* the id the loop gives with the row */
	DB_FROM_I32, /* an integer member of the record, by its type (DB_INT picks it) */
	DB_FROM_U32,
	DB_FROM_I64,
	DB_FROM_U64,
	DB_FROM_BOOL,
	DB_FROM_REF,     /* a uint32_t index member: its id, index + 1; UINT32_MAX (none) is NULL */
	DB_FROM_CONTEXT, /* a uint32_t context member (index + 1, 0: none): its contexts.id */
	DB_FROM_STR,     /* a char * member; NULL is NULL */
	DB_FROM_CHARS,   /* a char array member */
	DB_FROM_GET,     /* what the column's getter returns */
};

/* When a value is NULL besides a NULL string and a DB_FROM_REF to none. */
enum db_null {
	DB_NULL_NEVER,
	DB_NULL_UNSET,    /* 0 or less, or "": an id, a line, a build-id that is not known */
	DB_NULL_NEGATIVE, /* less than 0 */
	DB_NULL_UNLESS,   /* the bool member at null_off is false */
};

/* One value of a row, as a getter returns it. */
struct db_value {
	enum { DB_VALUE_NULL, DB_VALUE_INT, DB_VALUE_TEXT } type;
	int64_t i;
	const char *s; /* copied by the writer: it may point into the getter's buf */
};

/* What a row's values may come from besides its record. */
struct db_rows_ctx {
	const struct fin *f;
	const int64_t *context_ids; /* per context index + 1: its contexts.id (DB_FROM_CONTEXT) */
	const struct stream *s;     /* the stream whose records are written (of_stream) */
	char *buf;                  /* the writer's, for a getter's text */
};

#define DB_BUF_SIZE 256

/* A computed value of rec. Text may be formatted into c->buf (DB_BUF_SIZE bytes). */
typedef struct db_value (*db_getter)(const void *rec, const struct db_rows_ctx *c);

struct db_col {
	const char *name; /* as finalizer/schema.sql names it */
	const char *type; /* as it declares it: "INTEGER" or "TEXT" */
	enum db_from from;
	size_t off;     /* of the member */
	bool of_stream; /* the member is c->s's, not the record's */
	enum db_null null;
	size_t null_off; /* DB_NULL_UNLESS: of the bool member (in the same struct as off) */
	db_getter get;   /* DB_FROM_GET */
};

/* A table of docs/schema.md: its columns in the order of finalizer/schema.sql. */
struct db_table {
	const char *name;
	const char *verb; /* "INSERT" or "INSERT OR REPLACE" */
	const struct db_col *cols;
	size_t ncols;
};

/* clang-format off: one column a line reads best */
#define DB_TABLE(name_, verb_, cols_)                                                              \
	{                                                                                          \
		.name = (name_), .verb = (verb_), .cols = (cols_),                                 \
		.ncols = sizeof(cols_) / sizeof((cols_)[0])                                        \
	}

/* The DB_FROM_* of member m of T by its type: a type no column reads does not compile. */
#define DB_FROM_TYPE(T, m)                                                                         \
	_Generic(&((T *)0)->m, \
		 int32_t *: DB_FROM_I32, uint32_t *: DB_FROM_U32, \
		 int64_t *: DB_FROM_I64, uint64_t *: DB_FROM_U64, bool *: DB_FROM_BOOL, \
		 char **: DB_FROM_STR, const char **: DB_FROM_STR)
#define DB_FROM_INDEX(T, m, from) _Generic(&((T *)0)->m, uint32_t * : (from))

/* The columns; the optional last argument is a NULL rule (DB_NULL_IF_...). */
#define DB_ID(name)                                                                                \
	{                                                                                          \
		(name), "INTEGER", DB_FROM_ID, 0                                                   \
	}
#define DB_INT(name, T, m, ...)                                                                    \
	{                                                                                          \
		(name), "INTEGER", DB_FROM_TYPE(T, m), offsetof(T, m), __VA_ARGS__                 \
	}
#define DB_TEXT(name, T, m, ...)                                                                   \
	{                                                                                          \
		(name), "TEXT", DB_FROM_TYPE(T, m), offsetof(T, m), __VA_ARGS__                    \
	}
#define DB_CHARS(name, T, m, ...)                                                                  \
	{                                                                                          \
		(name), "TEXT", DB_FROM_CHARS, offsetof(T, m), __VA_ARGS__                         \
	}
#define DB_REF(name, T, m, ...)                                                                    \
	{                                                                                          \
		(name), "INTEGER", DB_FROM_INDEX(T, m, DB_FROM_REF), offsetof(T, m), __VA_ARGS__   \
	}
#define DB_CONTEXT(name, T, m)                                                                     \
	{                                                                                          \
		(name), "INTEGER", DB_FROM_INDEX(T, m, DB_FROM_CONTEXT), offsetof(T, m)            \
	}
/* The id of the process image or thread of the stream whose records are written. */
#define DB_STREAM_REF(name, m)                                                                     \
	{                                                                                          \
		(name), "INTEGER", DB_FROM_REF, offsetof(struct stream, m), .of_stream = true      \
	}
#define DB_GET_INT(name, fn, ...)                                                                  \
	{                                                                                          \
		(name), "INTEGER", DB_FROM_GET, .get = (fn), __VA_ARGS__                           \
	}
#define DB_GET_TEXT(name, fn, ...)                                                                 \
	{                                                                                          \
		(name), "TEXT", DB_FROM_GET, .get = (fn), __VA_ARGS__                              \
	}

#define DB_NULL_IF_UNSET    .null = DB_NULL_UNSET
#define DB_NULL_IF_NEGATIVE .null = DB_NULL_NEGATIVE
#define DB_NULL_UNLESS_SET(T, flag)                                                                \
	.null = _Generic(&((T *)0)->flag, bool * : DB_NULL_UNLESS), .null_off = offsetof(T, flag)
/* clang-format on */

static inline struct db_value db_null(void)
{
	return (struct db_value){ .type = DB_VALUE_NULL };
}

static inline struct db_value db_int(int64_t i)
{
	return (struct db_value){ .type = DB_VALUE_INT, .i = i };
}

/* NULL for a NULL s. */
static inline struct db_value db_text(const char *s)
{
	return (struct db_value){ .type = s ? DB_VALUE_TEXT : DB_VALUE_NULL, .s = s };
}

/*
 * Multi-row inserts: one statement of DB_BATCH_ROWS rows costs about as much to run as a
 * single-row one, so rows are buffered and inserted a batch at a time.
 */
#define DB_BATCH_ROWS 100
#define DB_MAX_COLS   17 /* process_memory */

/* Writes the rows of one table at a time. */
struct db_writer {
	sqlite3 *h;
	const struct db_table *t;
	struct db_rows_ctx ctx; /* the loop may change ctx.s between rows */
	sqlite3_stmt *full;     /* DB_BATCH_ROWS rows, prepared when first needed */
	int ncells;
	/* The buffered rows' values; a text's i is its offset in text. */
	struct db_value cells[DB_BATCH_ROWS * DB_MAX_COLS];
	char *text; /* the texts of the buffered rows */
	size_t ntext, text_cap;
	char buf[DB_BUF_SIZE]; /* ctx.buf */
};

/* A writer of the database h (its tables written one after the other). */
void db_writer_init(struct db_writer *w, sqlite3 *h);
/*
 * Start writing rows of t; ctx is copied. A description that does not hold together (too
 * many columns, a text type for a number) is a BUG. Returns 0.
 */
int db_writer_begin(struct db_writer *w, const struct db_table *t, const struct db_rows_ctx *ctx);
/* One row: each column's value from rec (and id, for DB_ID). 0, -ENOMEM or -EIO (logged). */
int db_writer_row(struct db_writer *w, const void *rec, int64_t id);
/* Insert what is buffered when ret is 0, and free the statements. Returns the first error. */
int db_writer_end(struct db_writer *w, int ret);
/* Free what the writer keeps between tables. */
void db_writer_release(struct db_writer *w);

/* The whole table t from n records of size bytes each at rows, ids 1..n. */
int db_writer_array(struct db_writer *w, const struct db_table *t, const struct db_rows_ctx *ctx,
		    const void *rows, size_t n, size_t size);

/*
 * Why SQLite's last call on h failed, in the system's words when a system call failed
 * (SQLite says "disk I/O error" for EFBIG, EIO, ENOSPC alike: the failed call's errno tells
 * them apart): "File too large (the file size limit, ulimit -f)", else sqlite3_errmsg().
 */
const char *db_strerror(sqlite3 *h);
/* The same with SQLite's message msg (sqlite3_exec()'s) where no system call failed. */
const char *db_strerror_or(sqlite3 *h, const char *msg);

/* Log SQLite's complaint about what failed (db_strerror()); returns -EIO. */
int db_fail(sqlite3 *h, const char *what);

#endif
