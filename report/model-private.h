/* SPDX-License-Identifier: MIT */
/* What the model's files share: the tables as data, their loader, a job's node models. */
#ifndef PCOLLECT_REPORT_MODEL_PRIVATE_H
#define PCOLLECT_REPORT_MODEL_PRIVATE_H

#include <stddef.h>

#include <sqlite3.h>

#include "report/idmap.h"
#include "report/model.h"

/* The tables whose database ids other rows name: each has an id map. */
enum model_map {
	MAP_NONE = -1,
	MAP_MODULES,
	MAP_FILES,
	MAP_FUNCTIONS,
	MAP_FRAMES,
	MAP_STACKS,
	MAP_PROCESSES,
	MAP_THREADS,
	MAP_CONTEXTS,
	MAP_METRICS,
	MAP_COUNT,
};

/* The id maps of a loaded model: stacks, threads, contexts and metrics stay for the timeline. */
struct model_ids {
	struct idmap map[MAP_COUNT];
};

/* How a column's value lands in its field. */
enum model_column_type {
	COLUMN_ID,    /* the row's id: fills the table's map (no field) */
	COLUMN_STR,   /* const char *, copied into the model's arena */
	COLUMN_INT,   /* int */
	COLUMN_INT64, /* int64_t */
	COLUMN_BOOL,  /* bool: not 0 */
	COLUMN_ENUM,  /* an enum (int): parse(text) */
	COLUMN_REF,   /* int: the index of the row of map with that id, -1 for NULL or none */
	COLUMN_REF0,  /* COLUMN_REF where id 0 means none too (a context_id) */
	COLUMN_LATER, /* COLUMN_REF into a table read after or beside this one (or this one
			 itself): the ids are kept and translated once its map is complete */
};

enum model_column_flags {
	COLUMN_REQUIRED = 1 << 0, /* a NULL (a reference: to no row) leaves the row out */
	COLUMN_OPTIONAL = 1 << 1, /* added within schema 2: older databases lack it, read as NULL */
	COLUMN_LINES = 1 << 2,    /* read with MODEL_FRAME_LINES only, else as NULL */
};

/* One column of a table: where it comes from and where it goes. */
struct model_column {
	const char *sql; /* its name, or an SQL expression over the table's columns */
	enum model_column_type type;
	size_t offset;                  /* of its field in the row's struct */
	enum model_map map;             /* REF, REF0, LATER: the table its ids name */
	int64_t null_int;               /* INT, INT64, BOOL, ENUM: what NULL reads as */
	const char *null_str;           /* STR: what NULL reads as */
	int (*parse)(const char *text); /* ENUM: the value of a text */
	const char *v1; /* what a schema-1 database (before metrics) has in its place; NULL:
			   the column itself */
	unsigned flags; /* enum model_column_flags */
};

struct loader;

/*
 * A table of the database and its array in struct model: read by model_load_table(), which
 * counts the rows, allocates the array, selects the columns, converts each into its field
 * and fills the table's id map.
 */
struct model_table {
	const char *name;
	const char *from;  /* what follows the columns: "FROM modules ORDER BY id" */
	const char *needs; /* columns without which the table is not read at all; NULL: none */
	int since;         /* the schema version that brought the table (1: every one) */
	const struct model_column *cols;
	size_t ncols;
	size_t row_size;
	size_t rows, count; /* offsets in struct model of its array and of its count */
	enum model_map map; /* the map its COLUMN_ID fills, MAP_NONE */
	/* After the columns of a row: derived fields. false leaves the row out. NULL: none. */
	bool (*fix)(struct model *m, void *row);
	/* What a database without the table (since, needs) holds instead; NULL: no rows. */
	int (*older)(struct loader *l);
	/* After every row (and the references to itself): indexes. NULL: none. */
	int (*finish)(struct loader *l);
};

/* One pass over a database: the model it fills, the connection it reads, where errors go. */
struct loader {
	struct model *m;
	struct sqlite3 *db;
	unsigned flags; /* enum model_load_flags */
	int64_t *later; /* the ids of the table's COLUMN_LATER, per row, until translated */
	char *err;
	size_t err_size;
};

/*
 * The tables model_load() reads, in order (model-tables.c). From model_tables[beside_samples]
 * on (frames, stacks), a helper thread reads the samples meanwhile: they need only the maps
 * of the tables before.
 */
extern const struct model_table *const model_tables[];
extern const size_t model_ntables, model_tables_beside_samples;
extern const struct model_table model_samples_table;

/* The model's strings come in chunks of this many bytes. */
#define MODEL_ARENA_CHUNK (256 * 1024)
/* The timeline's columns (for model_select(); its rows are read in time ranges). */
extern const struct model_table model_timeline_table;
enum { TL_TIME, TL_THREAD, TL_STACK, TL_METRIC, TL_CONTEXT, TL_VALUE, TL_NCOLS };

/*
 * Read table t into its array: 0, or a negative errno with l->err set. References to another
 * table (COLUMN_LATER) wait in l->later for model_resolve_later(), those to t itself are
 * translated before t->finish.
 */
int model_load_table(struct loader *l, const struct model_table *t);
/* Translate t's COLUMN_LATER ids (l->later, freed) through its map, now complete. */
int model_resolve_later(struct loader *l, const struct model_table *t);

/*
 * "SELECT <columns n from first of t> <rest>" into sql: each column as this database
 * spells it (schema 1's stand-in, NULL for one it lacks), also into spelled (n entries) when
 * not NULL. 0 or -ENAMETOOLONG.
 */
int model_select(struct loader *l, const struct model_table *t, size_t first, size_t n,
		 const char *rest, char *sql, size_t size, const char **spelled);
/* Prepare sql on l's connection: 0, or -EIO with the message. */
int model_prepare(struct loader *l, const char *sql, sqlite3_stmt **st);
/* "<what>: <SQLite's message>" into l->err; returns -EIO. */
int model_error(struct loader *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Step st: 1 for a row, 0 at its end, -EIO with the message. Inline: once per row. */
static inline int model_step(struct loader *l, sqlite3_stmt *st)
{
	int rc = sqlite3_step(st);

	if (rc == SQLITE_ROW)
		return 1;
	if (rc == SQLITE_DONE)
		return 0;
	return model_error(l, "cannot read database '%s'", l->m->db_path);
}

/* The index of the row with database id in map (of a loaded model), -1 when none. */
static inline int model_index(const struct model *m, enum model_map map, int64_t id)
{
	return idmap_find(&m->ids->map[map], id);
}

/* A sample's context_id as an index into contexts: 0 (none) and unknown ids are -1. */
static inline int model_context_index(const struct model *m, int64_t id)
{
	return id ? model_index(m, MAP_CONTEXTS, id) : -1;
}

/* One node result of a job: its own model, and where its rows are in the job's. */
struct model_part {
	struct model m;    /* loaded from its database, which stays open */
	int64_t offset_ns; /* add to its times: its start after the job's first start */
	int run;           /* runs merged: its run, index into model.runs; else -1 */
	int *stack_map;    /* its stack i is the job's stack_map[i] */
	int *thread_map;
	int *metric_map;
	int *context_map;
};

/* Number the contexts' wait kinds and sync objects (model-tables.c). 0 or -ENOMEM. */
int model_index_contexts(struct model *m);
/* Number the processes' hosts: model.nodes, model_process.node (model-tables.c). 0 or
   -ENOMEM. */
int model_index_nodes(struct model *m);

/* model_load_time_range(), model_load_events() and model_free() of a job (model-job.c). */
int model_job_time_range(struct model *m, int64_t from_ns, int64_t to_ns, bool *skipped, char *err,
			 size_t err_size);
/* model_scan_timeline() of a job: each part's rows in turn, mapped to the job's tables. */
int model_job_scan_timeline(struct model *m, int64_t to_ns, model_timeline_fn fn, void *ctx,
			    char *err, size_t err_size);
int model_job_events(struct model *m, int64_t from_ns, int64_t to_ns, struct model_event **out,
		     size_t *n, char *err, size_t err_size);
void model_job_free(struct model *m);

#endif
