/* SPDX-License-Identifier: MIT */
/* Writing result.db (docs/schema.md): the new file, written in one transaction; its meta table
   and the symbols part (processes, modules, source files, functions, frames). Each table is a
   description of its columns (finalizer/db-table.h) and the loop over its rows. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sqlite3.h>

#include "common/log.h"
#include "common/raw-mpi.h"
#include "common/str.h"
#include "finalizer/db-write.h"
#include "finalizer/finalize-private.h"
#include "finalizer/metrics.h"
#include "finalizer/schema.h"

/* Settings of the connection that writes: one transaction, no journal, sorts in memory. */
static const char pragmas_sql[] =
	"PRAGMA journal_mode=OFF;"
	"PRAGMA synchronous=OFF;"
	"PRAGMA locking_mode=EXCLUSIVE;"
	"PRAGMA page_size=16384;"
	"PRAGMA cache_size=-131072;" /* KiB: index builds sort in memory */
	"PRAGMA temp_store=MEMORY;"
	"BEGIN;";

/* What the getters see: the result, and the contexts' ids once written. */
struct db_rows_ctx fin_db_rows_ctx(const struct fin_db *x, const struct fin *f)
{
	return (struct db_rows_ctx){ .f = f, .context_ids = x->context_ids };
}

/* ---- meta ---------------------------------------------------------------------------------- */

struct meta_row {
	const char *key, *value;
};

static const struct db_col meta_cols[] = {
	DB_TEXT("key", struct meta_row, key),
	DB_TEXT("value", struct meta_row, value),
};
/* The collection's own keys come first: where a key is written twice, the later wins. */
static const struct db_table meta_table = DB_TABLE("meta", "INSERT OR REPLACE", meta_cols);

static int meta_put(struct db_writer *w, const char *key, const char *value)
{
	return value ? db_writer_row(w, &(struct meta_row){ key, value }, 0) : 0;
}

static int meta_put_int(struct db_writer *w, const char *key, int64_t v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%" PRId64, v);
	return meta_put(w, key, buf);
}

/* meta.python_version ("3.12") and samples_python, for results with Python code records. */
static int put_python_meta(struct db_writer *w, const struct fin *f)
{
	uint32_t version = 0;
	char buf[32];
	size_t i;
	int ret;

	for (i = 0; i < f->nstreams; i++)
		if (f->streams[i].py.version > version)
			version = f->streams[i].py.version;
	if (!version)
		return 0;
	snprintf(buf, sizeof(buf), "%u.%u", version >> 24, (version >> 16) & 0xff);
	ret = meta_put(w, "python_version", buf);
	return ret ? ret : meta_put_int(w, "samples_python", (int64_t)f->samples_python);
}

/* Meta keys of results with waits (docs/schema.md). */
static int put_wait_meta(struct db_writer *w, const struct fin *f)
{
	const char *threshold = meta_get(&f->meta, "wait_threshold_ns");
	int ret;

	if (!f->waits_total && !threshold)
		return 0;
	ret = meta_put(w, "wait_threshold_ns", threshold);
	ret = ret ? ret : meta_put_int(w, "waits_total", (int64_t)f->waits_total);
	return ret ? ret : meta_put_int(w, "waits_short", (int64_t)f->waits_short);
}

static int put_meta(struct db_writer *w, const struct fin *f)
{
	static const char *const copied[] = {
		"analysis",
		"start_realtime_ns",
		"end_realtime_ns",
		"elapsed_ns",
		"command_line",
		"cwd",
		"host",
		"user",
		"kernel",
		"cpu_count",
		"collector_version",
		"data_limit_hit",
		"sampling_clock",
		NULL,
	};
	struct timespec now;
	char key[256], *sd, *ssd;
	size_t i;
	int ret = 0;

	for (i = 0; i < f->meta.n && !ret; i++) {
		snprintf(key, sizeof(key), "collect.%s", f->meta.entries[i].key);
		ret = meta_put(w, key, f->meta.entries[i].value);
	}
	for (i = 0; copied[i] && !ret; i++)
		ret = meta_put(w, copied[i], meta_get(&f->meta, copied[i]));
	if (!ret && !meta_get(&f->meta, "analysis"))
		ret = meta_put(w, "analysis", "hotspots");
	if (ret)
		return ret;
	clock_gettime(CLOCK_REALTIME, &now);
	sd = str_join(f->o->search_dirs, f->o->nsearch_dirs, ":");
	ssd = str_join(f->o->source_dirs, f->o->nsource_dirs, ":");
	if (!sd || !ssd) {
		ret = -ENOMEM;
		goto out;
	}
	ret = meta_put_int(w, "schema_version", FIN_SCHEMA_VERSION);
	ret = ret ? ret : meta_put_int(w, "interval_ns", (int64_t)f->interval_ns);
	ret = ret ? ret : meta_put_int(w, "start_monotonic_ns", f->start_mono_ns);
	ret = ret ? ret : meta_put(w, "finalizer_version", PCOLLECT_VERSION);
	ret = ret ? ret
		  : meta_put_int(w, "finalized_realtime_ns",
				 (int64_t)now.tv_sec * 1000000000 + now.tv_nsec);
	ret = ret ? ret : meta_put(w, "finalization_mode", f->o->fast ? "fast" : "full");
	ret = ret ? ret : meta_put(w, "search_dirs", sd);
	ret = ret ? ret : meta_put(w, "source_search_dirs", ssd);
	ret = ret ? ret : meta_put_int(w, "samples_total", (int64_t)f->samples_total);
	ret = ret ? ret : meta_put_int(w, "weight_total", (int64_t)f->weight_total);
	ret = ret ? ret : meta_put_int(w, "samples_truncated", (int64_t)f->samples_truncated);
	if (f->collecting_pid)
		ret = ret ? ret : meta_put_int(w, "collection_running", f->collecting_pid);
	ret = ret ? ret : meta_put_int(w, "raw_bytes_total", (int64_t)f->bytes_total);
	ret = ret ? ret : meta_put_int(w, "raw_bytes_skipped", (int64_t)f->bytes_skipped);
	ret = ret ? ret : put_python_meta(w, f);
	ret = ret ? ret : put_wait_meta(w, f);
out:
	free(sd);
	free(ssd);
	return ret;
}

int fin_db_write_meta(struct fin_db *x, const struct fin *f)
{
	struct db_rows_ctx c = fin_db_rows_ctx(x, f);
	int ret = db_writer_begin(&x->w, &meta_table, &c);

	return db_writer_end(&x->w, ret ? ret : put_meta(&x->w, f));
}

/* ---- processes and modules ------------------------------------------------------------------- */

/* The image this one forked or exec'ed from, as a database id (NULL if none). */
static struct db_value process_parent_id(const void *rec, const struct db_rows_ctx *c)
{
	const struct image *im = rec;
	const struct process_rec *p = &im->process;
	const struct fin *f = c->f;
	size_t i;
	int64_t best = 0;

	if (!p->seen)
		return db_null();
	for (i = 0; i < f->nimages; i++) {
		const struct image *o = &f->images[i];

		if (o == im)
			continue;
		if (p->origin == RAW_PROCESS_EXEC && o->pid == im->pid &&
		    o->generation + 1 == im->generation)
			return db_int((int64_t)i + 1);
		if (p->origin != RAW_PROCESS_EXEC && o->pid == p->parent_pid &&
		    strcmp(o->host, im->host) == 0 &&
		    (!best || o->generation > f->images[best - 1].generation))
			best = (int64_t)i + 1;
	}
	return best ? db_int(best) : db_null();
}

static struct db_value process_origin(const void *rec, const struct db_rows_ctx *c)
{
	const struct process_rec *p = &((const struct image *)rec)->process;

	if (!p->seen)
		return db_null();
	return db_text(p->origin == RAW_PROCESS_FORK   ? "fork"
		       : p->origin == RAW_PROCESS_EXEC ? "exec"
						       : "start");
}

/* Its PROCESS record's time, else its first sample's; NULL when neither is known. */
static struct db_value process_start(const void *rec, const struct db_rows_ctx *c)
{
	const struct image *im = rec;
	int64_t start = im->process.seen ? im->process.time_ns : im->start_ns;

	return start != INT64_MAX ? db_int(start) : db_null();
}

static struct db_value process_end(const void *rec, const struct db_rows_ctx *c)
{
	const struct image *im = rec;

	return im->end_ns != INT64_MIN ? db_int(im->end_ns) : db_null();
}

static const struct db_col processes_cols[] = {
	DB_ID("id"),
	DB_INT("pid", struct image, pid),
	DB_INT("ppid", struct image, process.ppid, DB_NULL_UNLESS_SET(struct image, process.seen)),
	DB_GET_INT("parent_id", process_parent_id),
	DB_GET_TEXT("origin", process_origin),
	DB_INT("generation", struct image, generation),
	DB_CHARS("host", struct image, host),
	DB_INT("rank", struct image, rank, DB_NULL_IF_NEGATIVE),
	DB_TEXT("exe", struct image, process.exe),
	DB_TEXT("command_line", struct image, process.command_line),
	DB_GET_INT("start_ns", process_start),
	DB_GET_INT("end_ns", process_end),
};
static const struct db_table processes_table = DB_TABLE("processes", "INSERT", processes_cols);

static struct db_value module_kind(const void *rec, const struct db_rows_ctx *c)
{
	uint32_t k = ((const struct module *)rec)->kind;

	return db_text(k == RAW_MODULE_ANON ? "anon" : k == RAW_MODULE_VDSO ? "vdso" : "file");
}

static struct db_value module_role(const void *rec, const struct db_rows_ctx *c)
{
	return db_text(((const struct module *)rec)->interpreter ? "interpreter" : NULL);
}

static const struct db_col modules_cols[] = {
	DB_ID("id"),
	DB_TEXT("path", struct module, path),
	DB_TEXT("name", struct module, name),
	DB_CHARS("build_id", struct module, build_id_hex, DB_NULL_IF_UNSET),
	DB_GET_TEXT("kind", module_kind),
	DB_TEXT("resolved_path", struct module, resolved_path),
	DB_TEXT("debug_path", struct module, debug_path),
	DB_TEXT("symbols", struct module, symbols),
	DB_TEXT("status", struct module, status),
	DB_GET_TEXT("role", module_role),
};
static const struct db_table modules_table = DB_TABLE("modules", "INSERT", modules_cols);

/* ---- source files, functions, frames ------------------------------------------------------- */

/* A row of source_files is one string of f->files: the record is the string. */
static const struct db_col source_files_cols[] = {
	DB_ID("id"),
	{ "path", "TEXT", DB_FROM_STR, 0 },
};
static const struct db_table source_files_table =
	DB_TABLE("source_files", "INSERT", source_files_cols);

static struct db_value function_language(const void *rec, const struct db_rows_ctx *c)
{
	return db_text(((const struct function *)rec)->python ? "python" : "native");
}

static struct db_value function_kind(const void *rec, const struct db_rows_ctx *c)
{
	const struct function *fn = rec;

	return db_text(fn->given      ? "role"
		       : fn->method   ? "method"
		       : fn->resolved ? "symbol"
		       : fn->range    ? "range"
				      : "address");
}

static const struct db_col functions_cols[] = {
	DB_ID("id"),
	DB_TEXT("name", struct function, name),
	DB_TEXT("mangled", struct function, mangled),
	DB_REF("module_id", struct function, module),
	DB_INT("source_file_id", struct function, file, DB_NULL_IF_UNSET),
	DB_INT("line", struct function, line, DB_NULL_IF_UNSET),
	DB_GET_TEXT("language", function_language),
	DB_INT("resolved", struct function, resolved),
	DB_GET_TEXT("kind", function_kind),
};
static const struct db_table functions_table = DB_TABLE("functions", "INSERT", functions_cols);

static const struct db_col frames_cols[] = {
	DB_ID("id"),
	DB_REF("function_id", struct frame, function),
	DB_REF("module_id", struct frame, module),
	DB_INT("address", struct frame, address),
	DB_INT("inline_depth", struct frame, inline_depth),
	DB_INT("source_file_id", struct frame, file, DB_NULL_IF_UNSET),
	DB_INT("line", struct frame, line, DB_NULL_IF_UNSET),
};
static const struct db_table frames_table = DB_TABLE("frames", "INSERT", frames_cols);

/* ---- the database -------------------------------------------------------------------------- */

const struct db_table *const fin_db_symbol_tables[] = {
	&meta_table,      &processes_table, &modules_table, &source_files_table,
	&functions_table, &frames_table,    NULL,
};

int fin_db_open(struct fin_db **out, const char *path)
{
	struct fin_db *x = calloc(1, sizeof(*x));
	char *msg = NULL;

	*out = NULL;
	if (!x)
		return -ENOMEM;
	snprintf(x->path, sizeof(x->path), "%s", path);
	/* Before SQLite initializes (else a harmless SQLITE_MISUSE): without the allocation
	   statistics, every malloc skips a mutex. */
	sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
	if (sqlite3_open_v2(path, &x->h,
			    SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
			    NULL) != SQLITE_OK) {
		log_error("cannot create database '%s': %s", path,
			  x->h ? db_strerror(x->h) : "out of memory");
		sqlite3_close(x->h);
		free(x);
		return -EIO;
	}
	if (sqlite3_exec(x->h, pragmas_sql, NULL, NULL, &msg) != SQLITE_OK ||
	    sqlite3_exec(x->h, fin_schema_tables, NULL, NULL, &msg) != SQLITE_OK) {
		log_error("cannot create the tables of '%s': %s", path,
			  msg ? db_strerror_or(x->h, msg) : db_strerror(x->h));
		sqlite3_free(msg);
		sqlite3_close(x->h);
		free(x);
		return -EIO;
	}
	db_writer_init(&x->w, x->h);
	*out = x;
	return 0;
}

/* Run sql (a section of schema.sql) when ret is 0; its failure is an error of what. */
static int db_exec(struct fin_db *x, int ret, const char *sql, const char *what)
{
	char *msg = NULL;

	if (ret || sqlite3_exec(x->h, sql, NULL, NULL, &msg) == SQLITE_OK)
		return ret;
	log_error("cannot %s '%s': %s", what, x->path,
		  msg ? db_strerror_or(x->h, msg) : db_strerror(x->h));
	sqlite3_free(msg);
	return -EIO;
}

int fin_db_write_symbols(struct fin_db *x, const struct fin *f)
{
	struct db_rows_ctx c = fin_db_rows_ctx(x, f);
	int ret = FIN_DB_ARRAY(x, 0, &processes_table, &c, f->images, f->nimages);

	ret = FIN_DB_ARRAY(x, ret, &modules_table, &c, f->modules, f->nmodules);
	ret = FIN_DB_ARRAY(x, ret, &source_files_table, &c, f->files.strs, f->files.n);
	ret = FIN_DB_ARRAY(x, ret, &functions_table, &c, f->functions, f->nfunctions);
	ret = FIN_DB_ARRAY(x, ret, &frames_table, &c, f->frames, f->nframes);
	return db_exec(x, ret, fin_schema_symbol_indexes, "index");
}

int fin_db_close(struct fin_db *x, int ret)
{
	ret = db_exec(x, ret, fin_schema_sample_indexes, "index");
	ret = db_exec(x, ret, "COMMIT;", "index");
	if (sqlite3_close(x->h) != SQLITE_OK && !ret) {
		log_error("cannot close '%s': %s", x->path, db_strerror(x->h));
		ret = -EIO;
	}
	db_writer_release(&x->w);
	free(x->context_ids);
	free(x);
	return ret;
}
