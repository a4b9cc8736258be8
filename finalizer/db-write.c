/* SPDX-License-Identifier: MIT */
/* Writing result.db (docs/schema.md): one transaction of prepared inserts into a new file. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sqlite3.h>

#include "common/log.h"
#include "common/str.h"
#include "common/raw-mpi.h"
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

struct db {
	sqlite3 *h;
	sqlite3_stmt *st;
	int rc;
	int64_t *context_ids; /* per context index + 1: contexts.id (0: none), once written */
};

static int db_fail(struct db *d, const char *what)
{
	log_error("cannot write result database (%s): %s", what, sqlite3_errmsg(d->h));
	return -EIO;
}

static int prep(struct db *d, const char *sql)
{
	if (d->st)
		sqlite3_finalize(d->st);
	d->st = NULL;
	if (sqlite3_prepare_v2(d->h, sql, -1, &d->st, NULL) != SQLITE_OK)
		return db_fail(d, "prepare");
	return 0;
}

static void b_int(struct db *d, int i, int64_t v)
{
	sqlite3_bind_int64(d->st, i, v);
}

static void b_id(struct db *d, int i, int64_t v) /* 0 or negative: NULL */
{
	if (v > 0)
		sqlite3_bind_int64(d->st, i, v);
	else
		sqlite3_bind_null(d->st, i);
}

static void b_text(struct db *d, int i, const char *s)
{
	if (s)
		sqlite3_bind_text(d->st, i, s, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(d->st, i);
}

static int step(struct db *d)
{
	int rc = sqlite3_step(d->st);

	sqlite3_reset(d->st);
	if (rc != SQLITE_DONE)
		return db_fail(d, "insert");
	return 0;
}

/*
 * Multi-row inserts: one statement of BATCH_ROWS rows costs about as much to run as a
 * single-row one, so the big tables go in batches (values buffered here, bound at flush).
 */
#define BATCH_ROWS     100
#define BATCH_MAX_COLS 9 /* functions */

struct cell {
	int64_t i;
	const char *s; /* must outlive the flush */
	enum { CELL_NULL, CELL_INT, CELL_TEXT } type;
};

struct batch {
	struct db *d;
	const char *head; /* "INSERT INTO t (a, b) VALUES " */
	int ncols;
	sqlite3_stmt *full; /* BATCH_ROWS rows */
	int ncells;
	struct cell cells[BATCH_ROWS * BATCH_MAX_COLS];
};

static int batch_prepare(struct batch *b, int rows, sqlite3_stmt **st)
{
	size_t len = strlen(b->head), size = len + (size_t)rows * (2 * (size_t)b->ncols + 2) + 1;
	char *sql = malloc(size), *p;
	int r, c, rc;

	if (!sql)
		return -ENOMEM;
	memcpy(sql, b->head, len);
	p = sql + len;
	for (r = 0; r < rows; r++) {
		*p++ = r ? ',' : ' ';
		*p++ = '(';
		for (c = 0; c < b->ncols; c++) {
			if (c)
				*p++ = ',';
			*p++ = '?';
		}
		*p++ = ')';
	}
	*p = '\0';
	rc = sqlite3_prepare_v2(b->d->h, sql, (int)(p - sql), st, NULL);
	free(sql);
	return rc == SQLITE_OK ? 0 : db_fail(b->d, "prepare");
}

static int batch_begin(struct db *d, struct batch *b, const char *head, int ncols)
{
	if (ncols > BATCH_MAX_COLS)
		BUG("a batch of %d columns: BATCH_MAX_COLS is %d", ncols, BATCH_MAX_COLS);
	b->d = d;
	b->head = head;
	b->ncols = ncols;
	b->ncells = 0;
	b->full = NULL;
	return batch_prepare(b, BATCH_ROWS, &b->full);
}

static void batch_int(struct batch *b, int64_t v)
{
	b->cells[b->ncells++] = (struct cell){ .i = v, .type = CELL_INT };
}

static void batch_id(struct batch *b, int64_t v) /* 0 or negative: NULL */
{
	b->cells[b->ncells++] = (struct cell){ .i = v, .type = v > 0 ? CELL_INT : CELL_NULL };
}

static void batch_text(struct batch *b, const char *s)
{
	b->cells[b->ncells++] = (struct cell){ .s = s, .type = s ? CELL_TEXT : CELL_NULL };
}

static int batch_run(struct batch *b, sqlite3_stmt *st)
{
	int i, rc;

	for (i = 0; i < b->ncells; i++) {
		const struct cell *c = &b->cells[i];

		if (c->type == CELL_INT)
			sqlite3_bind_int64(st, i + 1, c->i);
		else if (c->type == CELL_TEXT)
			sqlite3_bind_text(st, i + 1, c->s, -1, SQLITE_STATIC);
		else
			sqlite3_bind_null(st, i + 1);
	}
	b->ncells = 0;
	rc = sqlite3_step(st);
	sqlite3_reset(st);
	return rc == SQLITE_DONE ? 0 : db_fail(b->d, "insert");
}

/* The row just given is complete. */
static int batch_row(struct batch *b)
{
	return b->ncells == BATCH_ROWS * b->ncols ? batch_run(b, b->full) : 0;
}

/* Insert what is left and free the statements. */
static int batch_end(struct batch *b, int ret)
{
	sqlite3_stmt *st = NULL;

	if (!ret && b->ncells) {
		ret = batch_prepare(b, b->ncells / b->ncols, &st);
		ret = ret ? ret : batch_run(b, st);
		sqlite3_finalize(st);
	}
	sqlite3_finalize(b->full);
	b->full = NULL;
	return ret;
}

static int meta_put(struct db *d, const char *key, const char *value)
{
	if (!value)
		return 0;
	b_text(d, 1, key);
	b_text(d, 2, value);
	return step(d);
}

static int meta_put_int(struct db *d, const char *key, int64_t v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%" PRId64, v);
	return meta_put(d, key, buf);
}

/* meta.python_version ("3.12") and samples_python, for results with Python code records. */
static int write_python_meta(struct db *d, const struct fin *f)
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
	ret = meta_put(d, "python_version", buf);
	return ret ? ret : meta_put_int(d, "samples_python", (int64_t)f->samples_python);
}

static int write_meta(struct db *d, const struct fin *f)
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
	int ret;

	if ((ret = prep(d, "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)")))
		return ret;
	/* The collection's own keys first, so that ours win where they overlap. */
	for (i = 0; i < f->meta.n; i++) {
		snprintf(key, sizeof(key), "collect.%s", f->meta.entries[i].key);
		if ((ret = meta_put(d, key, f->meta.entries[i].value)))
			return ret;
	}
	for (i = 0; copied[i]; i++)
		if ((ret = meta_put(d, copied[i], meta_get(&f->meta, copied[i]))))
			return ret;
	if (!meta_get(&f->meta, "analysis") && (ret = meta_put(d, "analysis", "hotspots")))
		return ret;
	clock_gettime(CLOCK_REALTIME, &now);
	sd = str_join(f->o->search_dirs, f->o->nsearch_dirs, ":");
	ssd = str_join(f->o->source_dirs, f->o->nsource_dirs, ":");
	if (!sd || !ssd) {
		free(sd);
		free(ssd);
		return -ENOMEM;
	}
	ret = meta_put_int(d, "schema_version", FIN_SCHEMA_VERSION);
	ret = ret ? ret : meta_put_int(d, "interval_ns", (int64_t)f->interval_ns);
	ret = ret ? ret : meta_put_int(d, "start_monotonic_ns", f->start_mono_ns);
	ret = ret ? ret : meta_put(d, "finalizer_version", PCOLLECT_VERSION);
	ret = ret ? ret
		  : meta_put_int(d, "finalized_realtime_ns",
				 (int64_t)now.tv_sec * 1000000000 + now.tv_nsec);
	ret = ret ? ret : meta_put(d, "finalization_mode", f->o->fast ? "fast" : "full");
	ret = ret ? ret : meta_put(d, "search_dirs", sd);
	ret = ret ? ret : meta_put(d, "source_search_dirs", ssd);
	ret = ret ? ret : meta_put_int(d, "samples_total", (int64_t)f->samples_total);
	ret = ret ? ret : meta_put_int(d, "weight_total", (int64_t)f->weight_total);
	ret = ret ? ret : meta_put_int(d, "samples_truncated", (int64_t)f->samples_truncated);
	if (f->collecting_pid)
		ret = ret ? ret : meta_put_int(d, "collection_running", f->collecting_pid);
	ret = ret ? ret : meta_put_int(d, "raw_bytes_total", (int64_t)f->bytes_total);
	ret = ret ? ret : meta_put_int(d, "raw_bytes_skipped", (int64_t)f->bytes_skipped);
	free(sd);
	free(ssd);
	return ret ? ret : write_python_meta(d, f);
}

static const char *origin_name(uint32_t o)
{
	return o == RAW_PROCESS_FORK ? "fork" : o == RAW_PROCESS_EXEC ? "exec" : "start";
}

/* The image this one forked or exec'ed from, as a database id (0 if none). */
static int64_t parent_image(const struct fin *f, const struct image *im)
{
	const struct process_rec *p = &im->process;
	size_t i;
	int64_t best = 0;

	if (!p->seen)
		return 0;
	for (i = 0; i < f->nimages; i++) {
		const struct image *o = &f->images[i];

		if (o == im)
			continue;
		if (p->origin == RAW_PROCESS_EXEC && o->pid == im->pid &&
		    o->generation + 1 == im->generation)
			return (int64_t)i + 1;
		if (p->origin != RAW_PROCESS_EXEC && o->pid == p->parent_pid &&
		    strcmp(o->host, im->host) == 0 &&
		    (!best || o->generation > f->images[best - 1].generation))
			best = (int64_t)i + 1;
	}
	return best;
}

static int write_processes(struct db *d, const struct fin *f)
{
	size_t i;
	int ret = prep(d, "INSERT INTO processes (id, pid, ppid, parent_id, origin, generation,"
			  " host, rank, exe, command_line, start_ns, end_ns)"
			  " VALUES (?,?,?,?,?,?,?,?,?,?,?,?)");

	for (i = 0; i < f->nimages && !ret; i++) {
		const struct image *im = &f->images[i];
		const struct process_rec *p = &im->process;
		int64_t start = p->seen ? p->time_ns : im->start_ns;

		b_int(d, 1, (int64_t)i + 1);
		b_int(d, 2, im->pid);
		if (p->seen)
			b_int(d, 3, p->ppid);
		else
			sqlite3_bind_null(d->st, 3);
		b_id(d, 4, parent_image(f, im));
		b_text(d, 5, p->seen ? origin_name(p->origin) : NULL);
		b_int(d, 6, im->generation);
		b_text(d, 7, im->host);
		if (im->rank >= 0)
			b_int(d, 8, im->rank);
		else
			sqlite3_bind_null(d->st, 8);
		b_text(d, 9, p->exe);
		b_text(d, 10, p->command_line);
		if (start != INT64_MAX)
			b_int(d, 11, start);
		else
			sqlite3_bind_null(d->st, 11);
		if (im->end_ns != INT64_MIN)
			b_int(d, 12, im->end_ns);
		else
			sqlite3_bind_null(d->st, 12);
		ret = step(d);
	}
	return ret;
}

static int write_threads(struct db *d, const struct fin *f)
{
	size_t i;
	int ret = prep(d, "INSERT INTO threads (id, process_id, tid, name, start_ns, end_ns,"
			  " cpu_ns, samples, weight, time_ns) VALUES (?,?,?,?,?,?,?,?,?,?)");

	for (i = 0; i < f->nthreads && !ret; i++) {
		const struct thread *t = &f->threads[i];

		b_int(d, 1, (int64_t)i + 1);
		b_int(d, 2, (int64_t)t->image + 1);
		b_int(d, 3, t->tid);
		b_text(d, 4, t->name);
		if (t->has_start)
			b_int(d, 5, t->start_ns);
		else
			sqlite3_bind_null(d->st, 5);
		if (t->has_end) {
			b_int(d, 6, t->end_ns);
			b_int(d, 7, (int64_t)t->cpu_ns);
		} else {
			sqlite3_bind_null(d->st, 6);
			sqlite3_bind_null(d->st, 7);
		}
		b_int(d, 8, (int64_t)t->samples);
		b_int(d, 9, (int64_t)t->weight);
		b_int(d, 10, (int64_t)t->time_ns);
		ret = step(d);
	}
	return ret;
}

static const char *kind_name(uint32_t k)
{
	return k == RAW_MODULE_ANON ? "anon" : k == RAW_MODULE_VDSO ? "vdso" : "file";
}

static int write_modules(struct db *d, const struct fin *f)
{
	size_t i;
	int ret = prep(d, "INSERT INTO modules (id, path, name, build_id, kind, resolved_path,"
			  " debug_path, symbols, status, role) VALUES (?,?,?,?,?,?,?,?,?,?)");

	for (i = 0; i < f->nmodules && !ret; i++) {
		const struct module *m = &f->modules[i];

		b_int(d, 1, (int64_t)i + 1);
		b_text(d, 2, m->path);
		b_text(d, 3, m->name);
		b_text(d, 4, m->build_id_len ? m->build_id_hex : NULL);
		b_text(d, 5, kind_name(m->kind));
		b_text(d, 6, m->resolved_path);
		b_text(d, 7, m->debug_path);
		b_text(d, 8, m->symbols);
		b_text(d, 9, m->status);
		b_text(d, 10, m->interpreter ? "interpreter" : NULL);
		ret = step(d);
	}
	return ret;
}

static int write_functions(struct db *d, const struct fin *f)
{
	struct batch b;
	size_t i;
	int ret = batch_begin(d, &b, "INSERT INTO source_files (id, path) VALUES", 2);

	for (i = 0; i < f->files.n && !ret; i++) {
		batch_int(&b, (int64_t)i + 1);
		batch_text(&b, f->files.strs[i]);
		ret = batch_row(&b);
	}
	if ((ret = batch_end(&b, ret)))
		return ret;
	ret = batch_begin(d, &b,
			  "INSERT INTO functions (id, name, mangled, module_id,"
			  " source_file_id, line, language, resolved, kind) VALUES",
			  9);
	for (i = 0; i < f->nfunctions && !ret; i++) {
		const struct function *fn = &f->functions[i];

		batch_int(&b, (int64_t)i + 1);
		batch_text(&b, fn->name);
		batch_text(&b, fn->mangled);
		batch_id(&b, fn->module == NO_MODULE ? 0 : (int64_t)fn->module + 1);
		batch_id(&b, fn->file);
		batch_id(&b, fn->line);
		batch_text(&b, fn->python ? "python" : "native");
		batch_int(&b, fn->resolved);
		batch_text(&b, fn->resolved ? "symbol" : fn->range ? "range" : "address");
		ret = batch_row(&b);
	}
	if ((ret = batch_end(&b, ret)))
		return ret;
	ret = batch_begin(d, &b,
			  "INSERT INTO frames (id, function_id, module_id, address,"
			  " inline_depth, source_file_id, line) VALUES",
			  7);
	for (i = 0; i < f->nframes && !ret; i++) {
		const struct frame *fr = &f->frames[i];

		batch_int(&b, (int64_t)i + 1);
		batch_int(&b, (int64_t)fr->function + 1);
		batch_id(&b, fr->module == NO_MODULE ? 0 : (int64_t)fr->module + 1);
		batch_int(&b, (int64_t)fr->address);
		batch_int(&b, fr->inline_depth);
		batch_id(&b, fr->file);
		batch_id(&b, fr->line);
		ret = batch_row(&b);
	}
	return batch_end(&b, ret);
}

/*
 * The metrics table: what fin_metrics_declare() says, metric index i as id i + 1 (the ids
 * the samples and the timeline carry), CPU Time first.
 */
static int write_metrics(struct db *d, const struct fin *f)
{
	struct fin_metric *ms = calloc(f->nmetrics + 1, sizeof(*ms));
	const char *analysis = meta_get(&f->meta, "analysis");
	bool memory = analysis && !strcmp(analysis, "memory-consumption");
	size_t n, i;
	int ret;

	if (!ms)
		return -ENOMEM;
	n = fin_metrics_declare(f, ms, f->nmetrics);
	ret = prep(d, "INSERT INTO metrics (id, name, unit, aggregation, kind, description,"
		      " main, display_order) VALUES (?,?,?,?,?,?,?,?)");
	if (!ret && (!n || strcmp(ms[0].name, metric_name(METRIC_CPU_TIME))))
		BUG("metric 0 is not '%s'", metric_name(METRIC_CPU_TIME));
	for (i = 0; i < n && !ret; i++) {
		/* A memory-consumption result takes no CPU samples: it has no CPU Time. */
		if (i == 0 && memory && !f->samples_total)
			continue;
		if (memory)
			ms[i].main = !strcmp(ms[i].name, metric_name(METRIC_MEM_ALLOCATED));
		b_int(d, 1, (int64_t)i + 1);
		b_text(d, 2, ms[i].name);
		b_text(d, 3, ms[i].unit);
		b_text(d, 4, ms[i].aggregation);
		b_text(d, 5, ms[i].kind);
		b_text(d, 6, ms[i].description);
		b_int(d, 7, ms[i].main);
		b_int(d, 8, ms[i].display_order);
		ret = step(d);
	}
	free(ms);
	return ret;
}

/* The metrics.id of metric index m. */
static int64_t metric_id(uint32_t m)
{
	return (int64_t)m + 1;
}

/* Contexts with the same columns are one row: the same object in processes forked apart. */
static bool same_row(const struct context *a, const struct context *b)
{
	return a->kind == b->kind && a->object == b->object && a->region == b->region &&
	       a->mpi_function == b->mpi_function && a->comm_size == b->comm_size &&
	       (a->name == b->name || (a->name && b->name && !strcmp(a->name, b->name)));
}

/*
 * One row per distinct (wait_kind, object, object_type, object_name) of waits, or
 * (mpi_function, communicator_size) of MPI calls, each with its region; d->context_ids.
 */
static int write_contexts(struct db *d, const struct fin *f)
{
	int64_t *first = calloc(f->ncontexts + 1, sizeof(*first)); /* per row: its context */
	size_t i, j, rows = 0;
	int ret;

	d->context_ids = calloc(f->ncontexts + 1, sizeof(*d->context_ids));
	if (!first || !d->context_ids) {
		free(first);
		return -ENOMEM;
	}
	ret = prep(d, "INSERT INTO contexts (id, wait_kind, object, object_type, object_name,"
		      " mpi_function, communicator_size, region) VALUES (?,?,?,?,?,?,?,?)");
	for (i = 0; i < f->ncontexts && !ret; i++) {
		const struct context *c = &f->contexts[i];
		const char *type = wait_object_type(c->kind);

		/* A handful of sync objects: a scan of the rows so far is enough. */
		for (j = 0; j < rows && !same_row(&f->contexts[first[j]], c); j++)
			;
		if (j < rows) {
			d->context_ids[i + 1] = (int64_t)j + 1;
			continue;
		}
		first[rows++] = (int64_t)i;
		d->context_ids[i + 1] = (int64_t)rows;
		sqlite3_clear_bindings(d->st); /* wait, MPI and region rows fill other columns */
		b_int(d, 1, (int64_t)rows);
		if (c->kind) {
			b_text(d, 2, wait_kind_name(c->kind));
			b_int(d, 3, (int64_t)c->object);
			b_text(d, 4, type);
			b_text(d, 5, c->name);
		} else if (c->mpi_function) {
			/* An MPI call: the function and the ranks of its communicator (0: none). */
			b_text(d, 6, raw_mpi_function_name(c->mpi_function));
			if (c->comm_size)
				b_int(d, 7, (int64_t)c->comm_size);
		}
		/* Neither: a CPU sample's region alone. */
		b_text(d, 8, c->region);
		ret = step(d);
	}
	free(first);
	return ret;
}

/* Meta keys of results with waits (docs/schema.md). */
static int write_wait_meta(struct db *d, const struct fin *f)
{
	const char *threshold = meta_get(&f->meta, "wait_threshold_ns");
	int ret = 0;

	if (!f->waits_total && !threshold)
		return 0;
	if ((ret = prep(d, "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)")))
		return ret;
	ret = meta_put(d, "wait_threshold_ns", threshold);
	ret = ret ? ret : meta_put_int(d, "waits_total", (int64_t)f->waits_total);
	return ret ? ret : meta_put_int(d, "waits_short", (int64_t)f->waits_short);
}

/* A CPU sample at node also counts as Spin Time (fin_node_spins() decided it, in the tree). */
static bool node_spins(const struct fin *f, uint32_t node)
{
	return f->spin_metric && f->spin_metric != UINT32_MAX && node < f->node_spin_cap &&
	       f->node_spin[node] == 1;
}

static void timeline_cells(struct batch *b, const struct db *d, const struct timeline_row *r,
			   uint32_t node, uint32_t metric)
{
	batch_int(b, r->time_ns);
	batch_int(b, (int64_t)r->thread + 1);
	batch_int(b, metric_id(metric));
	batch_int(b, (int64_t)node + 1);
	batch_int(b, d->context_ids[r->context]);
	batch_int(b, r->value);
}

static int write_tree(struct db *d, const struct fin *f)
{
	struct batch b;
	size_t i;
	int ret =
		batch_begin(d, &b, "INSERT INTO stacks (id, parent_id, frame_id, depth) VALUES", 4);

	for (i = 0; i < f->nnodes && !ret; i++) {
		const struct node *n = &f->nodes[i];

		batch_int(&b, (int64_t)i + 1);
		batch_id(&b, n->parent == UINT32_MAX ? 0 : (int64_t)n->parent + 1);
		batch_int(&b, (int64_t)n->frame + 1);
		batch_int(&b, n->depth);
		ret = batch_row(&b);
	}
	if ((ret = batch_end(&b, ret)))
		return ret;
	/* The CPU samples are CPU Time: value = weight x interval, in ns. */
	ret = batch_begin(d, &b,
			  "INSERT INTO samples (thread_id, stack_id, metric_id, context_id,"
			  " count, value) VALUES",
			  6);
	for (i = 0; i < f->naggs && !ret; i++) {
		const struct agg *a = &f->aggs[i];

		batch_int(&b, (int64_t)a->thread + 1);
		batch_int(&b, (int64_t)a->node + 1);
		batch_int(&b, metric_id(a->metric));
		batch_int(&b, d->context_ids[a->context]);
		batch_int(&b, (int64_t)a->count);
		batch_int(&b, a->value);
		ret = batch_row(&b);
	}
	if ((ret = batch_end(&b, ret)))
		return ret;
	/* In key order, so every insert appends to the table's b-tree. */
	ret = batch_begin(d, &b,
			  "INSERT INTO timeline (time_ns, thread_id, metric_id, stack_id,"
			  " context_id, value) VALUES",
			  6);
	for (i = 0; i < f->ntimeline && !ret; i++) {
		const struct timeline_row *r = &f->timeline[i];
		uint32_t node = f->streams[r->stream].stacks[r->stack].node;

		timeline_cells(&b, d, r, node, r->metric);
		ret = batch_row(&b);
		if (!ret && !r->metric && node_spins(f, node)) {
			timeline_cells(&b, d, r, node, f->spin_metric);
			ret = batch_row(&b);
		}
	}
	return batch_end(&b, ret);
}

static const char *lost_reason(uint32_t r)
{
	return raw_lost_reason_name(r);
}

/* What the agent noted about threads' sampling (RAW_REC_NOTE, in process streams). */
static int write_notes(struct db *d, const struct fin *f)
{
	static const char *const kinds[RAW_NOTE_KIND_MAX + 1] = {
		[RAW_NOTE_TIMER_FALLBACK] = "timer-fallback",
		[RAW_NOTE_NO_STREAM] = "no-stream",
		[RAW_NOTE_STREAM_STOPPED] = "stream-stopped",
	};
	size_t i, k;
	int ret = prep(d, "INSERT INTO notes (process_id, tid, kind, detail) VALUES (?,?,?,?)");

	for (i = 0; i < f->nstreams && !ret; i++) {
		const struct stream *s = &f->streams[i];

		for (k = 0; s->has_header && k < s->nnotes && !ret; k++) {
			uint32_t kind = s->notes[k].kind;

			b_int(d, 1, (int64_t)s->image + 1);
			b_int(d, 2, (int64_t)s->notes[k].tid);
			b_text(d, 3,
			       kind <= RAW_NOTE_KIND_MAX && kinds[kind] ? kinds[kind] : "other");
			b_text(d, 4, s->notes[k].detail);
			ret = step(d);
		}
	}
	return ret;
}

/* Why samples of each thread have no Python frames (RAW_REC_PY_NOTE). */
static int write_python_notes(struct db *d, const struct fin *f)
{
	size_t i;
	unsigned k;
	int ret = prep(d, "INSERT INTO python_notes (process_id, thread_id, kind, count, detail)"
			  " VALUES (?,?,?,?,?)");

	for (i = 0; i < f->nstreams && !ret; i++) {
		const struct stream *s = &f->streams[i];

		for (k = 1; s->has_header && k <= RAW_PY_NOTE_KIND_MAX && !ret; k++) {
			if (!s->py.notes[k])
				continue;
			b_int(d, 1, (int64_t)s->image + 1);
			b_int(d, 2, (int64_t)s->thread + 1);
			b_text(d, 3, pynote_kind_name(k));
			b_int(d, 4, (int64_t)s->py.notes[k]);
			b_text(d, 5, s->py.note_detail[k]);
			ret = step(d);
		}
	}
	return ret;
}

/* The OpenMP region instances the threads that began them recorded. */
static int write_regions(struct db *d, const struct fin *f)
{
	struct batch b;
	size_t i, j;
	int ret;

	if (!f->regions)
		return 0;
	ret = batch_begin(d, &b,
			  "INSERT INTO openmp_regions (process_id, thread_id, context_id,"
			  " start_ns, duration_ns, threads) VALUES",
			  6);
	for (i = 0; i < f->nstreams && !ret; i++) {
		const struct stream *s = &f->streams[i];

		for (j = 0; s->has_header && j < s->nregions && !ret; j++) {
			const struct region_rec *g = &s->regions[j];

			batch_int(&b, (int64_t)s->image + 1);
			batch_int(&b, (int64_t)s->thread + 1);
			batch_int(&b, d->context_ids[g->context]);
			batch_int(&b, g->time_ns + s->offset_ns);
			batch_int(&b, (int64_t)g->duration_ns);
			batch_int(&b, g->threads);
			ret = batch_row(&b);
		}
	}
	return batch_end(&b, ret);
}

static int write_streams(struct db *d, const struct fin *f)
{
	size_t i, j;
	int ret = prep(d, "INSERT INTO lost (process_id, thread_id, reason, count, weight)"
			  " VALUES (?,?,?,?,?)");

	for (i = 0; i < f->nstreams && !ret; i++) {
		const struct stream *s = &f->streams[i];

		for (j = 0; s->has_header && j < s->nlost && !ret; j++) {
			b_int(d, 1, (int64_t)s->image + 1);
			b_int(d, 2, (int64_t)s->thread + 1);
			b_text(d, 3, lost_reason(s->lost[j].reason));
			b_int(d, 4, (int64_t)s->lost[j].count);
			b_int(d, 5, (int64_t)s->lost[j].weight);
			ret = step(d);
		}
	}
	if (!ret)
		ret = prep(d, "INSERT INTO streams (path, process_id, thread_id, bytes,"
			      " bytes_skipped, chunks, chunks_damaged, problem, samples,"
			      " samples_unknown_stack) VALUES (?,?,?,?,?,?,?,?,?,?)");
	for (i = 0; i < f->nstreams && !ret; i++) {
		const struct stream *s = &f->streams[i];
		const struct raw_reader_stats *st = &s->stats;
		char problem[256], why[200];

		b_text(d, 1, s->path);
		if (s->has_header) {
			b_int(d, 2, (int64_t)s->image + 1);
			b_int(d, 3, (int64_t)s->thread + 1);
		} else {
			sqlite3_bind_null(d->st, 2);
			sqlite3_bind_null(d->st, 3);
		}
		b_int(d, 4, (int64_t)st->bytes_total);
		b_int(d, 5, (int64_t)st->bytes_skipped);
		b_int(d, 6, (int64_t)st->chunks);
		b_int(d, 7,
		      (int64_t)(st->chunks_bad_magic + st->chunks_bad_crc + st->chunks_truncated +
				st->chunks_duplicate));
		if (s->open_err)
			snprintf(problem, sizeof(problem), "cannot read stream: %s",
				 stream_open_strerror(s, why, sizeof(why)));
		else
			snprintf(problem, sizeof(problem), "%s", st->first_problem);
		b_text(d, 8, problem[0] ? problem : NULL);
		b_int(d, 9, (int64_t)s->nsamples);
		b_int(d, 10, (int64_t)s->samples_bad_stack);
		ret = step(d);
	}
	return ret;
}

struct fin_db {
	struct db d;
	char path[4200];
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
	if (sqlite3_open_v2(path, &x->d.h,
			    SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
			    NULL) != SQLITE_OK) {
		log_error("cannot create database '%s': %s", path,
			  x->d.h ? sqlite3_errmsg(x->d.h) : "out of memory");
		sqlite3_close(x->d.h);
		free(x);
		return -EIO;
	}
	if (sqlite3_exec(x->d.h, pragmas_sql, NULL, NULL, &msg) != SQLITE_OK ||
	    sqlite3_exec(x->d.h, fin_schema_tables, NULL, NULL, &msg) != SQLITE_OK) {
		log_error("cannot create the tables of '%s': %s", path, msg ? msg : "");
		sqlite3_free(msg);
		sqlite3_close(x->d.h);
		free(x);
		return -EIO;
	}
	*out = x;
	return 0;
}

int fin_db_write_symbols(struct fin_db *x, const struct fin *f)
{
	char *msg = NULL;
	int ret = write_processes(&x->d, f);

	ret = ret ? ret : write_modules(&x->d, f);
	ret = ret ? ret : write_functions(&x->d, f);
	if (!ret &&
	    sqlite3_exec(x->d.h, fin_schema_symbol_indexes, NULL, NULL, &msg) != SQLITE_OK) {
		log_error("cannot index '%s': %s", x->path, msg ? msg : "");
		sqlite3_free(msg);
		ret = -EIO;
	}
	return ret;
}

/* memory-consumption: the counters over time and each process's figures (docs/schema.md). */
static int write_memory(struct db *d, const struct fin *f)
{
	size_t i;
	int ret = 0;

	if (f->ncounters)
		ret = prep(d, "INSERT INTO counters (time_ns, process_id, name, value)"
			      " VALUES (?,?,?,?)");
	for (i = 0; i < f->ncounters && !ret; i++) {
		const struct counter_row *c = &f->counters[i];

		b_int(d, 1, c->time_ns);
		b_int(d, 2, (int64_t)c->image + 1);
		b_text(d, 3, c->name);
		b_int(d, 4, c->value);
		ret = step(d);
	}
	if (!ret && f->nmems)
		ret = prep(d, "INSERT OR REPLACE INTO process_memory (process_id, peak_bytes, "
			      "peak_ns, leaked_bytes, ended, untracked_allocs, untracked_bytes, "
			      "unknown_frees, agent_bytes, agent_peak_bytes, sample_bytes, hooks, "
			      "sampled_allocs, cache_misses, cache_checks, cache_collisions, "
			      "cache_escalations) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
	for (i = 0; i < f->nmems && !ret; i++) {
		const struct mem_file *m = &f->mems[i];
		const struct raw_mem_header *h = &m->hdr;

		if (m->image < 0)
			continue;
		b_int(d, 1, m->image + 1);
		b_int(d, 2, (int64_t)h->peak_bytes);
		if (h->peak_ns)
			b_int(d, 3, (int64_t)h->peak_ns - f->start_mono_ns);
		else
			sqlite3_bind_null(d->st, 3);
		b_int(d, 4, (int64_t)h->live_bytes);
		b_int(d, 5, (h->flags & RAW_MEM_ENDED) != 0);
		b_int(d, 6, (int64_t)h->untracked_allocs);
		b_int(d, 7, (int64_t)h->untracked_bytes);
		b_int(d, 8, (int64_t)h->unknown_frees);
		b_int(d, 9, (int64_t)h->agent_bytes);
		b_int(d, 10, (int64_t)h->agent_peak_bytes);
		b_int(d, 11, (int64_t)h->sample_bytes);
		b_int(d, 12, (h->flags & RAW_MEM_HOOKS) != 0);
		b_int(d, 13, (int64_t)h->sampled_allocs);
		b_int(d, 14, (int64_t)h->cache_misses);
		b_int(d, 15, (int64_t)h->verifications);
		b_int(d, 16, (int64_t)h->mismatches);
		b_int(d, 17, (int64_t)h->escalations);
		ret = step(d);
	}
	return ret;
}

int fin_db_write_samples(struct fin_db *x, const struct fin *f)
{
	int ret = write_meta(&x->d, f);

	ret = ret ? ret : write_wait_meta(&x->d, f);
	ret = ret ? ret : write_threads(&x->d, f);
	ret = ret ? ret : write_metrics(&x->d, f);
	ret = ret ? ret : write_contexts(&x->d, f);
	ret = ret ? ret : write_tree(&x->d, f);
	ret = ret ? ret : write_notes(&x->d, f);
	ret = ret ? ret : write_python_notes(&x->d, f);
	ret = ret ? ret : write_regions(&x->d, f);
	ret = ret ? ret : write_memory(&x->d, f);
	return ret ? ret : write_streams(&x->d, f);
}

int fin_db_close(struct fin_db *x, int ret)
{
	char *msg = NULL;

	if (x->d.st)
		sqlite3_finalize(x->d.st);
	if (!ret &&
	    (sqlite3_exec(x->d.h, fin_schema_sample_indexes, NULL, NULL, &msg) != SQLITE_OK ||
	     sqlite3_exec(x->d.h, "COMMIT;", NULL, NULL, &msg) != SQLITE_OK)) {
		log_error("cannot index '%s': %s", x->path, msg ? msg : "");
		sqlite3_free(msg);
		ret = -EIO;
	}
	if (sqlite3_close(x->d.h) != SQLITE_OK && !ret) {
		log_error("cannot close '%s'", x->path);
		ret = -EIO;
	}
	free(x->d.context_ids);
	free(x);
	return ret;
}
