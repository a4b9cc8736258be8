/* SPDX-License-Identifier: MIT */
/* Writing result.db: the samples part (threads, metrics, contexts, the tree, the samples, the
   timeline, and what the streams say), each table a description and the loop over its rows. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/raw-mpi.h"
#include "finalizer/db-write.h"
#include "finalizer/finalize-private.h"
#include "finalizer/metrics.h"

/* ---- threads ------------------------------------------------------------------------------- */

static const struct db_col threads_cols[] = {
	DB_ID("id"),
	DB_REF("process_id", struct thread, image),
	DB_INT("tid", struct thread, tid),
	DB_TEXT("name", struct thread, name),
	DB_INT("start_ns", struct thread, start_ns, DB_NULL_UNLESS_SET(struct thread, has_start)),
	DB_INT("end_ns", struct thread, end_ns, DB_NULL_UNLESS_SET(struct thread, has_end)),
	DB_INT("cpu_ns", struct thread, cpu_ns, DB_NULL_UNLESS_SET(struct thread, has_cpu)),
	DB_INT("samples", struct thread, samples),
	DB_INT("weight", struct thread, weight),
	DB_INT("time_ns", struct thread, time_ns),
	DB_TEXT("os_name", struct thread, os_name),
	DB_REF("parent_thread_id", struct thread, parent_thread,
	       DB_NULL_UNLESS_SET(struct thread, has_parent)),
	DB_REF("parent_stack_id", struct thread, parent_node,
	       DB_NULL_UNLESS_SET(struct thread, has_parent)),
};
static const struct db_table threads_table = DB_TABLE("threads", "INSERT", threads_cols);

/* ---- metrics and contexts ------------------------------------------------------------------ */

static const struct db_col metrics_cols[] = {
	DB_ID("id"),
	DB_TEXT("name", struct fin_metric, name),
	DB_TEXT("unit", struct fin_metric, unit),
	DB_TEXT("aggregation", struct fin_metric, aggregation),
	DB_TEXT("kind", struct fin_metric, kind),
	DB_TEXT("description", struct fin_metric, description),
	DB_INT("main", struct fin_metric, main),
	DB_INT("display_order", struct fin_metric, display_order),
};
static const struct db_table metrics_table = DB_TABLE("metrics", "INSERT", metrics_cols);

/*
 * The metrics table: what fin_metrics_declare() says, metric index i as id i + 1 (the ids
 * the samples and the timeline carry), CPU Time first.
 */
static int write_metrics(struct fin_db *x, const struct fin *f)
{
	struct fin_metric *ms = calloc(f->nmetrics + 1, sizeof(*ms));
	const char *analysis = meta_get(&f->meta, "analysis");
	bool memory = analysis && !strcmp(analysis, "memory-consumption");
	struct db_rows_ctx c = fin_db_rows_ctx(x, f);
	size_t n, i;
	int ret;

	if (!ms)
		return -ENOMEM;
	n = fin_metrics_declare(f, ms, f->nmetrics);
	if (!n || strcmp(ms[0].name, metric_name(METRIC_CPU_TIME)))
		BUG("metric 0 is not '%s'", metric_name(METRIC_CPU_TIME));
	ret = db_writer_begin(&x->w, &metrics_table, &c);
	for (i = 0; i < n && !ret; i++) {
		/* A memory-consumption result takes no CPU samples: it has no CPU Time. */
		if (i == 0 && memory && !f->samples_total)
			continue;
		if (memory)
			ms[i].main = !strcmp(ms[i].name, metric_name(METRIC_MEM_ALLOCATED));
		ret = db_writer_row(&x->w, &ms[i], (int64_t)i + 1);
	}
	free(ms);
	return db_writer_end(&x->w, ret);
}

/* A row of contexts: a wait's (its kind set), an MPI call's, or a CPU sample's (its region). */
struct context_cells {
	const char *wait_kind, *object_type, *object_name, *mpi_function, *region;
	int64_t object;
	bool wait;   /* object is NULL unless it is a wait's */
	bool origin; /* origin_* are NULL unless set */
	uint32_t origin_thread, origin_node;
	uint32_t comm_size; /* ranks in the MPI call's communicator, 0 (NULL): none */
};

static const struct db_col contexts_cols[] = {
	DB_ID("id"),
	DB_TEXT("wait_kind", struct context_cells, wait_kind),
	DB_INT("object", struct context_cells, object,
	       DB_NULL_UNLESS_SET(struct context_cells, wait)),
	DB_TEXT("object_type", struct context_cells, object_type),
	DB_TEXT("object_name", struct context_cells, object_name),
	DB_TEXT("mpi_function", struct context_cells, mpi_function),
	DB_INT("communicator_size", struct context_cells, comm_size, DB_NULL_IF_UNSET),
	DB_TEXT("region", struct context_cells, region),
	DB_REF("origin_thread_id", struct context_cells, origin_thread,
	       DB_NULL_UNLESS_SET(struct context_cells, origin)),
	DB_REF("origin_stack_id", struct context_cells, origin_node,
	       DB_NULL_UNLESS_SET(struct context_cells, origin)),
};
static const struct db_table contexts_table = DB_TABLE("contexts", "INSERT", contexts_cols);

static struct context_cells context_cells(const struct context *k)
{
	bool wait = k->kind != 0, mpi = !wait && k->mpi_function;

	return (struct context_cells){
		.wait_kind = wait ? wait_kind_name(k->kind) : NULL,
		.object_type = wait ? wait_object_type(k->kind) : NULL,
		.object_name = wait ? k->name : NULL,
		.mpi_function = mpi ? raw_mpi_function_name(k->mpi_function) : NULL,
		.region = k->region,
		.object = (int64_t)k->object,
		.wait = wait,
		.comm_size = mpi ? k->comm_size : 0,
		.origin = k->origin_found,
		.origin_thread = k->origin_thread,
		.origin_node = k->origin_node,
	};
}

/* Contexts with the same columns are one row: the same object in processes forked apart. */
static bool same_row(const struct context *a, const struct context *b)
{
	return a->kind == b->kind && a->object == b->object && a->region == b->region &&
	       a->mpi_function == b->mpi_function && a->comm_size == b->comm_size &&
	       a->origin_found == b->origin_found &&
	       (!a->origin_found ||
		(a->origin_thread == b->origin_thread && a->origin_node == b->origin_node)) &&
	       (a->name == b->name || (a->name && b->name && !strcmp(a->name, b->name)));
}

/*
 * One row per distinct (wait_kind, object, object_type, object_name) of waits, or
 * (mpi_function, communicator_size) of MPI calls, each with its region; x->context_ids.
 */
static int write_contexts(struct fin_db *x, const struct fin *f)
{
	int64_t *first = calloc(f->ncontexts + 1, sizeof(*first)); /* per row: its context */
	struct db_rows_ctx c = fin_db_rows_ctx(x, f);
	struct context_cells row;
	size_t i, j, rows = 0;
	int ret;

	x->context_ids = calloc(f->ncontexts + 1, sizeof(*x->context_ids));
	if (!first || !x->context_ids) {
		free(first);
		return -ENOMEM;
	}
	ret = db_writer_begin(&x->w, &contexts_table, &c);
	for (i = 0; i < f->ncontexts && !ret; i++) {
		const struct context *k = &f->contexts[i];

		/* A handful of sync objects: a scan of the rows so far is enough. */
		for (j = 0; j < rows && !same_row(&f->contexts[first[j]], k); j++)
			;
		if (j < rows) {
			x->context_ids[i + 1] = (int64_t)j + 1;
			continue;
		}
		first[rows++] = (int64_t)i;
		x->context_ids[i + 1] = (int64_t)rows;
		row = context_cells(k);
		ret = db_writer_row(&x->w, &row, (int64_t)rows);
	}
	free(first);
	return db_writer_end(&x->w, ret);
}

/* ---- the tree, the samples, the timeline --------------------------------------------------- */

static const struct db_col stacks_cols[] = {
	DB_ID("id"),
	DB_REF("parent_id", struct node, parent),
	DB_REF("frame_id", struct node, frame),
	DB_INT("depth", struct node, depth),
};
static const struct db_table stacks_table = DB_TABLE("stacks", "INSERT", stacks_cols);

/* The CPU samples are CPU Time: value = weight x interval, in ns. */
static const struct db_col samples_cols[] = {
	DB_REF("thread_id", struct agg, thread), DB_REF("stack_id", struct agg, node),
	DB_REF("metric_id", struct agg, metric), DB_CONTEXT("context_id", struct agg, context),
	DB_INT("count", struct agg, count),      DB_INT("value", struct agg, value),
};
static const struct db_table samples_table = DB_TABLE("samples", "INSERT", samples_cols);

/* A timeline row as written: its stack is a tree node, its metric may be Spin Time. */
struct timeline_cells {
	int64_t time_ns, value;
	uint32_t thread, metric, node, context;
};

static const struct db_col timeline_cols[] = {
	DB_INT("time_ns", struct timeline_cells, time_ns),
	DB_REF("thread_id", struct timeline_cells, thread),
	DB_REF("metric_id", struct timeline_cells, metric),
	DB_REF("stack_id", struct timeline_cells, node),
	DB_CONTEXT("context_id", struct timeline_cells, context),
	DB_INT("value", struct timeline_cells, value),
};
static const struct db_table timeline_table = DB_TABLE("timeline", "INSERT", timeline_cols);

/* A CPU sample at node also counts as Spin Time (fin_node_spins() decided it, in the tree). */
static bool node_spins(const struct fin *f, uint32_t node)
{
	return f->spin_metric && f->spin_metric != UINT32_MAX && node < f->node_spin_cap &&
	       f->node_spin[node] == 1;
}

/* In key order, so every insert appends to the table's b-tree. */
static int write_timeline(struct fin_db *x, const struct fin *f)
{
	struct db_rows_ctx c = fin_db_rows_ctx(x, f);
	size_t i;
	int ret = db_writer_begin(&x->w, &timeline_table, &c);

	for (i = 0; i < f->ntimeline && !ret; i++) {
		const struct timeline_row *r = &f->timeline[i];
		struct timeline_cells row = {
			.time_ns = r->time_ns,
			.value = r->value,
			.thread = r->thread,
			.metric = r->metric,
			.node = f->streams[r->stream].stacks[r->stack].node,
			.context = r->context,
		};

		ret = db_writer_row(&x->w, &row, 0);
		if (!ret && !r->metric && node_spins(f, row.node)) {
			row.metric = f->spin_metric;
			ret = db_writer_row(&x->w, &row, 0);
		}
	}
	return db_writer_end(&x->w, ret);
}

/* ---- what the streams say: notes, Python notes, regions, losses, the streams themselves ---- */

/* What the agent noted about threads' sampling (RAW_REC_NOTE, in process streams). */
static struct db_value note_kind(const void *rec, const struct db_rows_ctx *c)
{
	static const char *const kinds[RAW_NOTE_KIND_MAX + 1] = {
		[RAW_NOTE_TIMER_FALLBACK] = "timer-fallback",
		[RAW_NOTE_NO_STREAM] = "no-stream",
		[RAW_NOTE_STREAM_STOPPED] = "stream-stopped",
		[RAW_NOTE_PROCESS_CPU] = "process-cpu",
	};
	uint32_t kind = ((const struct note_rec *)rec)->kind;

	return db_text(kind <= RAW_NOTE_KIND_MAX && kinds[kind] ? kinds[kind] : "other");
}

static const struct db_col notes_cols[] = {
	DB_STREAM_REF("process_id", image),
	DB_INT("tid", struct note_rec, tid),
	DB_GET_TEXT("kind", note_kind),
	DB_TEXT("detail", struct note_rec, detail),
};
static const struct db_table notes_table = DB_TABLE("notes", "INSERT", notes_cols);

/* Why samples of a thread have no Python frames (RAW_REC_PY_NOTE): one kind's count. */
struct python_note_row {
	const char *kind, *detail;
	uint64_t count;
};

static const struct db_col python_notes_cols[] = {
	DB_STREAM_REF("process_id", image),
	DB_STREAM_REF("thread_id", thread),
	DB_TEXT("kind", struct python_note_row, kind),
	DB_INT("count", struct python_note_row, count),
	DB_TEXT("detail", struct python_note_row, detail),
};
static const struct db_table python_notes_table =
	DB_TABLE("python_notes", "INSERT", python_notes_cols);

static struct db_value region_start(const void *rec, const struct db_rows_ctx *c)
{
	return db_int(((const struct region_rec *)rec)->time_ns + c->s->offset_ns);
}

/* The OpenMP region instances the threads that began them recorded. */
static const struct db_col openmp_regions_cols[] = {
	DB_STREAM_REF("process_id", image),
	DB_STREAM_REF("thread_id", thread),
	DB_CONTEXT("context_id", struct region_rec, context),
	DB_GET_INT("start_ns", region_start),
	DB_INT("duration_ns", struct region_rec, duration_ns),
	DB_INT("threads", struct region_rec, threads),
};
static const struct db_table openmp_regions_table =
	DB_TABLE("openmp_regions", "INSERT", openmp_regions_cols);

static struct db_value lost_reason(const void *rec, const struct db_rows_ctx *c)
{
	return db_text(raw_lost_reason_name(((const struct lost_rec *)rec)->reason));
}

static const struct db_col lost_cols[] = {
	DB_STREAM_REF("process_id", image),        DB_STREAM_REF("thread_id", thread),
	DB_GET_TEXT("reason", lost_reason),        DB_INT("count", struct lost_rec, count),
	DB_INT("weight", struct lost_rec, weight),
};
static const struct db_table lost_table = DB_TABLE("lost", "INSERT", lost_cols);

static struct db_value stream_chunks_damaged(const void *rec, const struct db_rows_ctx *c)
{
	const struct raw_reader_stats *st = &((const struct stream *)rec)->stats;

	return db_int((int64_t)(st->chunks_bad_magic + st->chunks_bad_crc + st->chunks_truncated +
				st->chunks_duplicate));
}

static struct db_value stream_problem_text(const void *rec, const struct db_rows_ctx *c)
{
	const struct stream *s = rec;
	char why[200];

	if (!s->open_err)
		return db_text(s->stats.first_problem);
	snprintf(c->buf, DB_BUF_SIZE, "cannot read stream: %s",
		 stream_open_strerror(s, why, sizeof(why)));
	return db_text(c->buf);
}

static const struct db_col streams_cols[] = {
	DB_TEXT("path", struct stream, path),
	DB_REF("process_id", struct stream, image, DB_NULL_UNLESS_SET(struct stream, has_header)),
	DB_REF("thread_id", struct stream, thread, DB_NULL_UNLESS_SET(struct stream, has_header)),
	DB_INT("bytes", struct stream, stats.bytes_total),
	DB_INT("bytes_skipped", struct stream, stats.bytes_skipped),
	DB_INT("chunks", struct stream, stats.chunks),
	DB_GET_INT("chunks_damaged", stream_chunks_damaged),
	DB_GET_TEXT("problem", stream_problem_text, DB_NULL_IF_UNSET),
	DB_INT("samples", struct stream, nsamples),
	DB_INT("samples_unknown_stack", struct stream, samples_bad_stack),
};
static const struct db_table streams_table = DB_TABLE("streams", "INSERT", streams_cols);

/* An array of records every stream has: where struct stream keeps it and its count. */
struct stream_records {
	size_t v, n, size; /* offsets of the array and of its size_t count; a record's size */
};
#define STREAM_RECORDS(v_, n_)                                                                     \
	(&(const struct stream_records){ offsetof(struct stream, v_), offsetof(struct stream, n_), \
					 sizeof(*((struct stream *)0)->v_) })

/* Table t from the records r of every stream with a header, in stream order. */
static int write_per_stream(struct fin_db *x, const struct fin *f, const struct db_table *t,
			    const struct stream_records *r)
{
	struct db_rows_ctx c = fin_db_rows_ctx(x, f);
	size_t i, k;
	int ret = db_writer_begin(&x->w, t, &c);

	for (i = 0; i < f->nstreams && !ret; i++) {
		const struct stream *s = &f->streams[i];
		const char *v = *(const char *const *)((const char *)s + r->v);
		size_t n = *(const size_t *)((const char *)s + r->n);

		x->w.ctx.s = s;
		for (k = 0; s->has_header && k < n && !ret; k++)
			ret = db_writer_row(&x->w, v + k * r->size, 0);
	}
	return db_writer_end(&x->w, ret);
}

/* A thread's Python notes are counts per kind, not records. */
static int write_python_notes(struct fin_db *x, const struct fin *f)
{
	struct db_rows_ctx c = fin_db_rows_ctx(x, f);
	size_t i;
	unsigned k;
	int ret = db_writer_begin(&x->w, &python_notes_table, &c);

	for (i = 0; i < f->nstreams && !ret; i++) {
		const struct stream *s = &f->streams[i];

		x->w.ctx.s = s;
		for (k = 1; s->has_header && k <= RAW_PY_NOTE_KIND_MAX && !ret; k++) {
			struct python_note_row row = { pynote_kind_name(k), s->py.note_detail[k],
						       s->py.notes[k] };

			if (row.count)
				ret = db_writer_row(&x->w, &row, 0);
		}
	}
	return db_writer_end(&x->w, ret);
}

/* ---- memory-consumption: the counters over time and each process's figures ---------------- */

static const struct db_col counters_cols[] = {
	DB_INT("time_ns", struct counter_row, time_ns),
	DB_REF("process_id", struct counter_row, image),
	DB_TEXT("name", struct counter_row, name),
	DB_INT("value", struct counter_row, value),
};
static const struct db_table counters_table = DB_TABLE("counters", "INSERT", counters_cols);

static struct db_value memory_process_id(const void *rec, const struct db_rows_ctx *c)
{
	return db_int(((const struct mem_file *)rec)->image + 1);
}

/* When the peak was reached, in collection time; NULL when unknown. */
static struct db_value memory_peak_ns(const void *rec, const struct db_rows_ctx *c)
{
	uint64_t t = ((const struct mem_file *)rec)->hdr.peak_ns;

	return t ? db_int((int64_t)t - c->f->start_mono_ns) : db_null();
}

static struct db_value memory_ended(const void *rec, const struct db_rows_ctx *c)
{
	return db_int((((const struct mem_file *)rec)->hdr.flags & RAW_MEM_ENDED) != 0);
}

static struct db_value memory_hooks(const void *rec, const struct db_rows_ctx *c)
{
	return db_int((((const struct mem_file *)rec)->hdr.flags & RAW_MEM_HOOKS) != 0);
}

#define MEM_HDR(name, m) DB_INT(name, struct mem_file, hdr.m)
static const struct db_col process_memory_cols[] = {
	DB_GET_INT("process_id", memory_process_id), MEM_HDR("peak_bytes", peak_bytes),
	DB_GET_INT("peak_ns", memory_peak_ns),       MEM_HDR("leaked_bytes", live_bytes),
	DB_GET_INT("ended", memory_ended),           MEM_HDR("untracked_allocs", untracked_allocs),
	MEM_HDR("untracked_bytes", untracked_bytes), MEM_HDR("unknown_frees", unknown_frees),
	MEM_HDR("agent_bytes", agent_bytes),         MEM_HDR("agent_peak_bytes", agent_peak_bytes),
	MEM_HDR("sample_bytes", sample_bytes),       DB_GET_INT("hooks", memory_hooks),
	MEM_HDR("sampled_allocs", sampled_allocs),   MEM_HDR("cache_misses", cache_misses),
	MEM_HDR("cache_checks", verifications),      MEM_HDR("cache_collisions", mismatches),
	MEM_HDR("cache_escalations", escalations),
};
static const struct db_table process_memory_table =
	DB_TABLE("process_memory", "INSERT OR REPLACE", process_memory_cols);

static int write_memory(struct fin_db *x, const struct fin *f)
{
	struct db_rows_ctx c = fin_db_rows_ctx(x, f);
	size_t i;
	int ret = FIN_DB_ARRAY(x, 0, &counters_table, &c, f->counters, f->ncounters);

	ret = ret ? ret : db_writer_begin(&x->w, &process_memory_table, &c);
	for (i = 0; i < f->nmems && !ret; i++)
		if (f->mems[i].image >= 0) /* no stream of its process was read */
			ret = db_writer_row(&x->w, &f->mems[i], 0);
	return db_writer_end(&x->w, ret);
}

/* ---- the part ------------------------------------------------------------------------------ */

const struct db_table *const fin_db_sample_tables[] = {
	&threads_table,        &metrics_table,
	&contexts_table,       &stacks_table,
	&samples_table,        &timeline_table,
	&notes_table,          &python_notes_table,
	&openmp_regions_table, &counters_table,
	&process_memory_table, &lost_table,
	&streams_table,        NULL,
};

int fin_db_write_samples(struct fin_db *x, const struct fin *f)
{
	struct db_rows_ctx c = fin_db_rows_ctx(x, f);
	int ret = fin_db_write_meta(x, f);

	ret = FIN_DB_ARRAY(x, ret, &threads_table, &c, f->threads, f->nthreads);
	ret = ret ? ret : write_metrics(x, f);
	ret = ret ? ret : write_contexts(x, f);
	c = fin_db_rows_ctx(x, f); /* the contexts' ids */
	ret = FIN_DB_ARRAY(x, ret, &stacks_table, &c, f->nodes, f->nnodes);
	ret = FIN_DB_ARRAY(x, ret, &samples_table, &c, f->aggs, f->naggs);
	ret = ret ? ret : write_timeline(x, f);
	ret = ret ? ret : write_per_stream(x, f, &notes_table, STREAM_RECORDS(notes, nnotes));
	ret = ret ? ret : write_python_notes(x, f);
	if (f->regions)
		ret = ret ? ret
			  : write_per_stream(x, f, &openmp_regions_table,
					     STREAM_RECORDS(regions, nregions));
	ret = ret ? ret : write_memory(x, f);
	ret = ret ? ret : write_per_stream(x, f, &lost_table, STREAM_RECORDS(lost, nlost));
	return FIN_DB_ARRAY(x, ret, &streams_table, &c, f->streams, f->nstreams);
}
