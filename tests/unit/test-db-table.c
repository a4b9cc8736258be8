/* SPDX-License-Identifier: MIT */
/* Unit tests of finalizer/db-table.c: the tables' descriptions against schema.sql, and rows
   written from a description read back with their NULLs. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "finalizer/db-table.h"
#include "finalizer/db-write.h"
#include "finalizer/schema.h"
#include "tests/unit/unit.h"

static sqlite3 *open_schema(void)
{
	sqlite3 *h = NULL;

	CU_ASSERT_FATAL(sqlite3_open(":memory:", &h) == SQLITE_OK);
	CU_ASSERT_FATAL(sqlite3_exec(h, fin_schema_tables, NULL, NULL, NULL) == SQLITE_OK);
	return h;
}

/* Each description names the columns of its table in schema.sql's order, with its types. */
static void test_db_table_matches_schema(void)
{
	sqlite3 *h = open_schema();
	const struct db_table *const *parts[] = { fin_db_symbol_tables, fin_db_sample_tables };
	size_t p, t, n = 0, ntables = 0;
	sqlite3_stmt *st;

	for (p = 0; p < 2; p++)
		for (t = 0; parts[p][t]; t++, n++) {
			const struct db_table *d = parts[p][t];
			char sql[128];
			size_t i = 0;

			snprintf(sql, sizeof(sql), "PRAGMA table_info(%s)", d->name);
			CU_ASSERT_FATAL(sqlite3_prepare_v2(h, sql, -1, &st, NULL) == SQLITE_OK);
			while (sqlite3_step(st) == SQLITE_ROW) {
				const char *name = (const char *)sqlite3_column_text(st, 1);
				const char *type = (const char *)sqlite3_column_text(st, 2);

				CU_ASSERT_FATAL(i < d->ncols);
				if (strcmp(name, d->cols[i].name) || strcmp(type, d->cols[i].type))
					fprintf(stderr,
						"%s: column %zu is %s %s in schema.sql, %s %s here\n",
						d->name, i, name, type, d->cols[i].name,
						d->cols[i].type);
				CU_ASSERT_STRING_EQUAL(name, d->cols[i].name);
				CU_ASSERT_STRING_EQUAL(type, d->cols[i].type);
				i++;
			}
			CU_ASSERT_EQUAL(i, d->ncols);
			sqlite3_finalize(st);
		}
	/* Every table of the schema is written. */
	CU_ASSERT_FATAL(
		sqlite3_prepare_v2(h, "SELECT count(*) FROM sqlite_master WHERE type = 'table'", -1,
				   &st, NULL) == SQLITE_OK);
	CU_ASSERT_FATAL(sqlite3_step(st) == SQLITE_ROW);
	ntables = (size_t)sqlite3_column_int64(st, 0);
	CU_ASSERT_EQUAL(n, ntables);
	sqlite3_finalize(st);
	sqlite3_close(h);
}

struct rec {
	int32_t i32;
	uint32_t ref;
	uint64_t u64;
	const char *str;
	char chars[8];
	bool set;
	int64_t maybe;
};

static struct db_value get_twice(const void *rec, const struct db_rows_ctx *c)
{
	const struct rec *r = rec;

	snprintf(c->buf, DB_BUF_SIZE, "%s%s", r->str ? r->str : "-", r->str ? r->str : "-");
	return db_text(c->buf);
}

static const struct db_col t_cols[] = {
	DB_ID("id"),
	DB_INT("i32", struct rec, i32, DB_NULL_IF_NEGATIVE),
	DB_REF("ref", struct rec, ref),
	DB_INT("u64", struct rec, u64, DB_NULL_IF_UNSET),
	DB_TEXT("str", struct rec, str),
	DB_CHARS("chars", struct rec, chars, DB_NULL_IF_UNSET),
	DB_INT("maybe", struct rec, maybe, DB_NULL_UNLESS_SET(struct rec, set)),
	DB_GET_TEXT("twice", get_twice),
};
static const struct db_table t_table = DB_TABLE("t", "INSERT", t_cols);

/* More rows than a batch holds, each read back value by value (NULL as "NULL"). */
static void test_db_table_round_trip(void)
{
	struct db_rows_ctx ctx = { 0 };
	struct db_writer *w = calloc(1, sizeof(*w));
	sqlite3 *h = NULL;
	sqlite3_stmt *st;
	size_t n = DB_BATCH_ROWS + 7, i;
	int ret;

	CU_ASSERT_FATAL(w != NULL);
	CU_ASSERT_FATAL(sqlite3_open(":memory:", &h) == SQLITE_OK);
	CU_ASSERT_FATAL(sqlite3_exec(h,
				     "CREATE TABLE t (id INTEGER, i32 INTEGER, ref INTEGER, u64 "
				     "INTEGER, str TEXT, chars TEXT, maybe INTEGER, twice TEXT)",
				     NULL, NULL, NULL) == SQLITE_OK);
	db_writer_init(w, h);
	ret = db_writer_begin(w, &t_table, &ctx);
	for (i = 0; i < n && !ret; i++) {
		char s[16];
		struct rec r = { .i32 = (int32_t)i - 1,
				 .ref = i % 3 ? (uint32_t)i : UINT32_MAX,
				 .u64 = i % 2 ? i : 0,
				 .str = i % 4 ? s : NULL,
				 .set = i % 5 != 0,
				 .maybe = -(int64_t)i };

		snprintf(s, sizeof(s), "s%zu", i); /* gone before the batch runs */
		snprintf(r.chars, sizeof(r.chars), "%s", i % 6 ? "c" : "");
		ret = db_writer_row(w, &r, (int64_t)i + 10);
		memset(s, 'x', sizeof(s) - 1);
	}
	CU_ASSERT_EQUAL_FATAL(db_writer_end(w, ret), 0);
	CU_ASSERT_FATAL(sqlite3_prepare_v2(h,
					   "SELECT id, quote(i32), quote(ref), quote(u64), "
					   "quote(str), quote(chars), quote(maybe), twice FROM t "
					   "ORDER BY rowid",
					   -1, &st, NULL) == SQLITE_OK);
	for (i = 0; sqlite3_step(st) == SQLITE_ROW; i++) {
		char want[64];

		CU_ASSERT_EQUAL(sqlite3_column_int64(st, 0), (int64_t)i + 10);
		snprintf(want, sizeof(want), "%d", (int)i - 1);
		CU_ASSERT_STRING_EQUAL(sqlite3_column_text(st, 1), i ? want : "NULL");
		snprintf(want, sizeof(want), "%zu", i + 1);
		CU_ASSERT_STRING_EQUAL(sqlite3_column_text(st, 2), i % 3 ? want : "NULL");
		snprintf(want, sizeof(want), "%zu", i);
		CU_ASSERT_STRING_EQUAL(sqlite3_column_text(st, 3), i % 2 ? want : "NULL");
		snprintf(want, sizeof(want), "'s%zu'", i);
		CU_ASSERT_STRING_EQUAL(sqlite3_column_text(st, 4), i % 4 ? want : "NULL");
		CU_ASSERT_STRING_EQUAL(sqlite3_column_text(st, 5), i % 6 ? "'c'" : "NULL");
		snprintf(want, sizeof(want), "%lld", -(long long)i);
		CU_ASSERT_STRING_EQUAL(sqlite3_column_text(st, 6), i % 5 ? want : "NULL");
		snprintf(want, sizeof(want), "s%zus%zu", i, i);
		CU_ASSERT_STRING_EQUAL(sqlite3_column_text(st, 7), i % 4 ? want : "--");
	}
	CU_ASSERT_EQUAL(i, n);
	sqlite3_finalize(st);
	db_writer_release(w);
	free(w);
	sqlite3_close(h);
}

UNIT_MAIN("db-table", NULL, NULL,
	  {
		  { "descriptions match schema.sql", test_db_table_matches_schema },
		  { "rows round trip with their NULLs", test_db_table_round_trip },
	  })
