/* SPDX-License-Identifier: MIT */
/* Writing result.db: the database file and its two parts (db-write.c, db-samples.c). */
#ifndef PCOLLECT_FINALIZER_DB_WRITE_H
#define PCOLLECT_FINALIZER_DB_WRITE_H

#include <stdint.h>

#include <sqlite3.h>

#include "finalizer/db-table.h"

struct fin;

/*
 * A new database at path, written in one transaction: fin_db_open(), then both parts in
 * either order (the symbols part needs only frames and functions, complete once
 * fin_build_frames() has run; the samples part needs the tree), then fin_db_close(), which
 * indexes and commits when ret is 0, frees x and returns the first error. One thread at a
 * time.
 */
struct fin_db {
	sqlite3 *h;
	int64_t *context_ids; /* per context index + 1: contexts.id (0: none), once written */
	struct db_writer w;
	char path[4200];
};
int fin_db_open(struct fin_db **out, const char *path);
int fin_db_write_symbols(struct fin_db *x, const struct fin *f);
int fin_db_write_samples(struct fin_db *x, const struct fin *f);
int fin_db_close(struct fin_db *x, int ret);

/* Between the parts: what the getters see (f, and the contexts' ids once written). */
struct db_rows_ctx fin_db_rows_ctx(const struct fin_db *x, const struct fin *f);
/* The meta table (docs/schema.md): the collection's keys, then pfinalize's. */
int fin_db_write_meta(struct fin_db *x, const struct fin *f);

/* The tables each part writes, NULL-terminated (the tests compare them with schema.sql). */
extern const struct db_table *const fin_db_symbol_tables[];
extern const struct db_table *const fin_db_sample_tables[];

/* ret when it is an error, else the whole table t from the array v of n records. */
#define FIN_DB_ARRAY(x, ret, t, c, v, n)                                                           \
	((ret) ? (ret) : db_writer_array(&(x)->w, (t), (c), (v), (n), sizeof(*(v))))

#endif
