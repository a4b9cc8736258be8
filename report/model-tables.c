/* SPDX-License-Identifier: MIT */
/* The tables of result.db as data: each column, where it lands, what older databases hold. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/cmp.h"
#include "common/log.h"
#include "common/metric.h"
#include "report/bigmem.h"
#include "report/model-private.h"

/*
 * docs/schema.md documents every column; a column preport reads is one line below. A
 * column's NULL reads as its default; a column an older database lacks (COLUMN_OPTIONAL)
 * reads as NULL; schema 1 (before metrics) has other columns in the place of some (v1).
 */
#define COL(row, field, col_type, sql_, ...)                                                       \
	{                                                                                          \
		.sql = (sql_), .type = (col_type), .offset = offsetof(struct row, field),          \
		__VA_ARGS__                                                                        \
	}
#define ID                                                                                         \
	{                                                                                          \
		.sql = "id", .type = COLUMN_ID                                                     \
	}
/* Table name_ into model.array (its count model.n<array>), rows of row_size_ bytes. */
#define TABLE(name_, from_, array, row_size_, cols_, map_, ...)                                    \
	{                                                                                          \
		.name = (name_), .from = (from_), .cols = (cols_),                                 \
		.ncols = sizeof(cols_) / sizeof((cols_)[0]), .row_size = (row_size_),              \
		.rows = offsetof(struct model, array), .count = offsetof(struct model, n##array),  \
		.map = (map_), __VA_ARGS__                                                         \
	}

/* ---- meta ---------------------------------------------------------------------------------- */

/*
 * The schema version: 1 when absent (the first databases), a stop when too new or not a
 * version at all (never read as another one).
 */
static int check_schema(struct loader *l)
{
	struct model *m = l->m;
	const char *s = model_meta_get(m, "schema_version");
	int64_t v = model_meta_int(m, "schema_version", -1);

	if (s && (v < 1 || v > INT32_MAX)) {
		err_set(l->err, l->err_size,
			"database '%s' has schema version '%s', which no pfinalize writes (this "
			"preport reads 1 to %d): the database is damaged",
			m->db_path, s, MODEL_SCHEMA_MAX);
		return -EPROTO;
	}
	if (!s)
		v = 1;
	if (v > MODEL_SCHEMA_MAX) {
		err_set(l->err, l->err_size,
			"database '%s' has schema version %lld, newer than this preport reads (%d): "
			"use the preport of the pfinalize that wrote it",
			m->db_path, (long long)v, MODEL_SCHEMA_MAX);
		return -EPROTO;
	}
	m->schema_version = v < 1 ? 1 : (int)v;
	return 0;
}

static const struct model_column meta_cols[] = {
	COL(model_meta, key, COLUMN_STR, "key", .flags = COLUMN_REQUIRED),
	COL(model_meta, value, COLUMN_STR, "value", .flags = COLUMN_REQUIRED),
};

static const struct model_table meta_table =
	TABLE("meta", "FROM meta", meta, sizeof(struct model_meta), meta_cols, MAP_NONE,
	      .finish = check_schema);

/* ---- metrics ------------------------------------------------------------------------------- */

_Static_assert((int)MODEL_UNIT_NS == METRIC_UNIT_NS && (int)MODEL_UNIT_BYTES == METRIC_UNIT_BYTES &&
		       (int)MODEL_UNIT_COUNT == METRIC_UNIT_COUNT &&
		       (int)MODEL_AGG_SUM == METRIC_AGG_SUM &&
		       (int)MODEL_AGG_PEAK == METRIC_AGG_PEAK,
	       "the model's units and aggregations are the registry's");
_Static_assert(sizeof(enum model_unit) == sizeof(int) &&
		       sizeof(enum model_aggregation) == sizeof(int),
	       "COLUMN_ENUM writes an int");

/* A unit this preport does not know reads as a plain number. */
static int unit_of(const char *s)
{
	int u;

	for (u = METRIC_UNIT_NS; u <= METRIC_UNIT_COUNT; u++)
		if (!strcmp(s, metric_unit_name((enum metric_unit)u)))
			return u;
	return MODEL_UNIT_COUNT;
}

static int aggregation_of(const char *s)
{
	return strcmp(s, metric_aggregation_name(METRIC_AGG_PEAK)) ? MODEL_AGG_SUM : MODEL_AGG_PEAK;
}

/* Schema 1 holds CPU time only: the metric every later result declares for it. */
static int metrics_schema1(struct loader *l)
{
	const struct metric_def *cpu = metric_def(METRIC_CPU_TIME);
	struct idmap *map = &l->m->ids->map[MAP_METRICS];
	struct model *m = l->m;

	m->metrics = calloc(1, sizeof(*m->metrics));
	if (!m->metrics || idmap_alloc(map, 1))
		return -ENOMEM;
	m->metrics[0] = (struct model_metric){
		.name = cpu->name,
		.unit_name = metric_unit_name(cpu->unit),
		.kind = cpu->kind,
		.unit = MODEL_UNIT_NS,
		.aggregation = MODEL_AGG_SUM,
		.main = true,
	};
	m->nmetrics = 1;
	idmap_set(map, 0, 0); /* the metric_id schema 1's samples read as */
	return idmap_finish(map, 1);
}

static int check_metrics(struct loader *l)
{
	if (l->m->nmetrics)
		return 0;
	err_set(l->err, l->err_size, "database '%s' declares no metric (table metrics is empty)",
		l->m->db_path);
	return -EIO;
}

/* Without a name, unit, aggregation or kind (NOT NULL in the schema) a metric cannot be shown. */
static const struct model_column metric_cols[] = {
	ID,
	COL(model_metric, name, COLUMN_STR, "name", .flags = COLUMN_REQUIRED),
	COL(model_metric, unit_name, COLUMN_STR, "unit", .flags = COLUMN_REQUIRED),
	COL(model_metric, unit, COLUMN_ENUM, "unit", .parse = unit_of, .flags = COLUMN_REQUIRED),
	COL(model_metric, aggregation, COLUMN_ENUM, "aggregation", .parse = aggregation_of,
	    .flags = COLUMN_REQUIRED),
	COL(model_metric, kind, COLUMN_STR, "kind", .flags = COLUMN_REQUIRED),
	COL(model_metric, description, COLUMN_STR, "description"),
	COL(model_metric, main, COLUMN_BOOL, "main"),
};

static const struct model_table metrics_table =
	TABLE("metrics", "FROM metrics ORDER BY coalesce(display_order, id), id", metrics,
	      sizeof(struct model_metric), metric_cols, MAP_METRICS, .since = 2,
	      .older = metrics_schema1, .finish = check_metrics);

/* ---- modules, source files, functions ------------------------------------------------------ */

static bool module_fix(struct model *m, void *row)
{
	struct model_module *mod = row;

	(void)m;
	if (!mod->name)
		mod->name = mod->path ? mod->path : "[unknown]";
	return true;
}

static const struct model_column module_cols[] = {
	ID,
	COL(model_module, name, COLUMN_STR, "name"),
	COL(model_module, path, COLUMN_STR, "path"),
	COL(model_module, status, COLUMN_STR, "status"),
	COL(model_module, symbols, COLUMN_STR, "symbols"),
	COL(model_module, interpreter, COLUMN_BOOL, "role = 'interpreter'",
	    .flags = COLUMN_OPTIONAL),
};

static const struct model_table modules_table =
	TABLE("modules", "FROM modules ORDER BY id", modules, sizeof(struct model_module),
	      module_cols, MAP_MODULES, .fix = module_fix);

/* A row of model.files is the path itself. */
static const struct model_column file_cols[] = {
	ID,
	{ .sql = "path", .type = COLUMN_STR, .offset = 0, .null_str = "" },
};

static const struct model_table files_table =
	TABLE("source_files", "FROM source_files ORDER BY id", files, sizeof(const char *),
	      file_cols, MAP_FILES);

static const struct model_column function_cols[] = {
	ID,
	COL(model_function, name, COLUMN_STR, "name", .null_str = "[unknown]"),
	COL(model_function, module, COLUMN_REF, "module_id", .map = MAP_MODULES),
	COL(model_function, file, COLUMN_REF, "source_file_id", .map = MAP_FILES),
	COL(model_function, line, COLUMN_INT, "line"),
	COL(model_function, resolved, COLUMN_BOOL, "resolved", .null_int = 1),
	COL(model_function, python, COLUMN_BOOL, "language = 'python'"),
	COL(model_function, range, COLUMN_BOOL, "kind = 'range'", .flags = COLUMN_OPTIONAL),
	COL(model_function, method, COLUMN_BOOL, "kind = 'method'", .flags = COLUMN_OPTIONAL),
};

static const struct model_table functions_table =
	TABLE("functions", "FROM functions ORDER BY id", functions, sizeof(struct model_function),
	      function_cols, MAP_FUNCTIONS);

/* ---- processes, threads, Python notes ------------------------------------------------------ */

int model_index_nodes(struct model *m)
{
	size_t i, k;

	free(m->nodes);
	m->nnodes = 0;
	m->nodes = calloc(m->nprocesses + 1, sizeof(*m->nodes));
	if (!m->nodes)
		return -ENOMEM;
	for (i = 0; i < m->nprocesses; i++) {
		struct model_process *p = &m->processes[i];

		p->node = -1;
		if (!p->host)
			continue;
		for (k = 0; k < m->nnodes && strcmp(m->nodes[k], p->host); k++)
			;
		if (k == m->nnodes)
			m->nodes[m->nnodes++] = p->host;
		p->node = (int)k;
	}
	return 0;
}

static int index_nodes(struct loader *l)
{
	size_t i;

	for (i = 0; i < l->m->nprocesses; i++)
		l->m->processes[i].run = -1;
	return model_index_nodes(l->m);
}

static const struct model_column process_cols[] = {
	ID,
	COL(model_process, pid, COLUMN_INT64, "pid"),
	COL(model_process, exe, COLUMN_STR, "exe", .null_str = "[unknown]"),
	COL(model_process, command_line, COLUMN_STR, "command_line"),
	COL(model_process, host, COLUMN_STR, "host"),
	COL(model_process, rank, COLUMN_INT64, "rank", .null_int = -1),
};

static const struct model_table processes_table =
	TABLE("processes", "FROM processes ORDER BY id", processes, sizeof(struct model_process),
	      process_cols, MAP_PROCESSES, .finish = index_nodes);

static const struct model_column thread_cols[] = {
	ID,
	COL(model_thread, process, COLUMN_REF, "process_id", .map = MAP_PROCESSES),
	COL(model_thread, tid, COLUMN_INT64, "tid"),
	COL(model_thread, name, COLUMN_STR, "name", .null_str = ""),
	COL(model_thread, os_name, COLUMN_STR, "os_name", .flags = COLUMN_OPTIONAL),
	COL(model_thread, cpu_ns, COLUMN_INT64, "cpu_ns"),
	COL(model_thread, start_ns, COLUMN_INT64, "start_ns", .null_int = -1),
	COL(model_thread, end_ns, COLUMN_INT64, "end_ns", .null_int = -1),
	COL(model_thread, parent_thread_id, COLUMN_INT64, "parent_thread_id", .null_int = -1,
	    .flags = COLUMN_OPTIONAL),
	COL(model_thread, parent_stack_id, COLUMN_INT64, "parent_stack_id", .null_int = -1,
	    .flags = COLUMN_OPTIONAL),
};

static const struct model_table threads_table =
	TABLE("threads", "FROM threads ORDER BY id", threads, sizeof(struct model_thread),
	      thread_cols, MAP_THREADS);

static bool pynote_fix(struct model *m, void *row)
{
	struct model_pynote *p = row;

	(void)m;
	if (!p->detail)
		p->detail = p->kind;
	return true;
}

/* Counts summed per kind. */
static const struct model_column pynote_cols[] = {
	COL(model_pynote, kind, COLUMN_STR, "kind", .flags = COLUMN_REQUIRED),
	COL(model_pynote, detail, COLUMN_STR, "max(detail)"),
	COL(model_pynote, count, COLUMN_INT64, "sum(count)"),
};

static const struct model_table pynotes_table =
	TABLE("python_notes", "FROM python_notes GROUP BY kind ORDER BY sum(count) DESC, kind",
	      pynotes, sizeof(struct model_pynote), pynote_cols, MAP_NONE, .needs = "kind",
	      .fix = pynote_fix);

/* ---- contexts ------------------------------------------------------------------------------ */

static const char *or_empty(const char *s)
{
	return s ? s : "";
}

/* Contexts of one object: by type, value and name (and kind, for kinds without an object). */
static int object_order(const struct model_context *a, const struct model_context *b)
{
	int d;

	if ((d = strcmp(or_empty(a->object_type), or_empty(b->object_type))))
		return d;
	/* Without a type, the wait has no object told apart: one per kind ([sleep], [gil]). */
	if (!a->object_type)
		return strcmp(or_empty(a->wait_kind), or_empty(b->wait_kind));
	if (a->object != b->object)
		return a->object < b->object ? -1 : 1;
	return strcmp(or_empty(a->object_name), or_empty(b->object_name));
}

static int object_cmp(const void *pa, const void *pb, void *arg)
{
	const struct model_context *c = arg;
	int a = *(const int *)pa, b = *(const int *)pb;
	int d = object_order(&c[a], &c[b]);

	return CMP_THEN(d, CMP(a, b));
}

static int str_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Number the contexts' distinct region paths, in the order of their names ("a" before "a/b"). */
static int index_regions(struct model *m)
{
	size_t i, n = 0;

	m->regions = calloc(m->ncontexts + 1, sizeof(*m->regions));
	if (!m->regions)
		return -ENOMEM;
	for (i = 0; i < m->ncontexts; i++)
		if (m->contexts[i].region)
			m->regions[n++] = m->contexts[i].region;
	qsort(m->regions, n, sizeof(*m->regions), str_cmp);
	for (i = 0; i < n; i++)
		if (!m->nregions || strcmp(m->regions[m->nregions - 1], m->regions[i]))
			m->regions[m->nregions++] = m->regions[i];
	for (i = 0; i < m->ncontexts; i++) {
		struct model_context *c = &m->contexts[i];
		const char **hit = c->region ? bsearch(&c->region, m->regions, m->nregions,
						       sizeof(*m->regions), str_cmp)
					     : NULL;

		c->region_index = hit ? (int)(hit - m->regions) : -1;
	}
	return 0;
}

/* Number the contexts' wait kinds (in order of appearance) and their distinct objects. */
int model_index_contexts(struct model *m)
{
	int *order = malloc((m->ncontexts + 1) * sizeof(int));
	size_t i, k;

	m->wait_kinds = calloc(m->ncontexts + 1, sizeof(*m->wait_kinds));
	m->sync_objects = calloc(m->ncontexts + 1, sizeof(*m->sync_objects));
	if (!order || !m->wait_kinds || !m->sync_objects) {
		free(order);
		return -ENOMEM;
	}
	for (i = 0; i < m->ncontexts; i++) {
		struct model_context *c = &m->contexts[i];

		c->kind = -1;
		for (k = 0; c->wait_kind && k < m->nwait_kinds; k++)
			if (!strcmp(m->wait_kinds[k], c->wait_kind))
				c->kind = (int)k;
		if (c->wait_kind && c->kind < 0) {
			c->kind = (int)m->nwait_kinds;
			m->wait_kinds[m->nwait_kinds++] = c->wait_kind;
		}
		order[i] = (int)i;
	}
	qsort_r(order, m->ncontexts, sizeof(int), object_cmp, m->contexts);
	for (i = 0; i < m->ncontexts; i++) {
		struct model_context *c = &m->contexts[order[i]];
		const struct model_context *prev = NULL;

		/* A CPU sample's context in a region has no wait, hence no object. */
		c->sync_object = -1;
		if (!c->wait_kind)
			continue;
		for (k = i; k-- > 0 && !prev;)
			if (m->contexts[order[k]].wait_kind)
				prev = &m->contexts[order[k]];
		if (!prev || object_order(prev, c))
			m->sync_objects[m->nsync_objects++].context = order[i];
		c->sync_object = (int)m->nsync_objects - 1;
	}
	free(order);
	return index_regions(m);
}

static int index_contexts(struct loader *l)
{
	return model_index_contexts(l->m);
}

/* MPI's columns came with -trace-mpi, regions after waits: results without read as none. */
static const struct model_column context_cols[] = {
	ID,
	COL(model_context, wait_kind, COLUMN_STR, "wait_kind"),
	COL(model_context, object, COLUMN_INT64, "object"),
	COL(model_context, object_type, COLUMN_STR, "object_type"),
	COL(model_context, object_name, COLUMN_STR, "object_name"),
	COL(model_context, mpi_function, COLUMN_STR, "mpi_function", .flags = COLUMN_OPTIONAL),
	COL(model_context, comm_size, COLUMN_INT64, "communicator_size", .flags = COLUMN_OPTIONAL),
	COL(model_context, region, COLUMN_STR, "region", .flags = COLUMN_OPTIONAL),
	COL(model_context, origin_thread_id, COLUMN_INT64, "origin_thread_id", .null_int = -1,
	    .flags = COLUMN_OPTIONAL),
	COL(model_context, origin_stack_id, COLUMN_INT64, "origin_stack_id", .null_int = -1,
	    .flags = COLUMN_OPTIONAL),
};

/* Results before waits have no such table (or one without the wait columns). */
static const struct model_table contexts_table =
	TABLE("contexts", "FROM contexts ORDER BY id", contexts, sizeof(struct model_context),
	      context_cols, MAP_CONTEXTS, .needs = "wait_kind, object, object_type, object_name",
	      .finish = index_contexts);

/* ---- frames and stacks --------------------------------------------------------------------- */

static bool frame_fix(struct model *m, void *row)
{
	struct model_frame *fr = row;

	if (fr->module < 0)
		fr->module = m->functions[fr->function].module;
	return true;
}

/* A frame without a function cannot be shown. A missing depth or line is 0. */
static const struct model_column frame_cols[] = {
	ID,
	COL(model_frame, function, COLUMN_REF, "function_id", .map = MAP_FUNCTIONS,
	    .flags = COLUMN_REQUIRED),
	COL(model_frame, module, COLUMN_REF, "module_id", .map = MAP_MODULES),
	COL(model_frame, inline_depth, COLUMN_INT, "inline_depth"),
	COL(model_frame, file, COLUMN_REF, "source_file_id", .map = MAP_FILES,
	    .flags = COLUMN_LINES),
	COL(model_frame, line, COLUMN_INT, "line", .flags = COLUMN_LINES),
};

static const struct model_table frames_table =
	TABLE("frames", "FROM frames ORDER BY id", frames, sizeof(struct model_frame), frame_cols,
	      MAP_FRAMES, .fix = frame_fix);

/* Order stacks so that each parent comes before its children (it usually does already). */
static int order_stacks(struct loader *l)
{
	struct model *m = l->m;
	size_t i, n = m->nstacks;
	int *depth, *count, maxd = 0;
	bool sorted = true;

	m->stack_order = big_calloc(n ? n : 1, sizeof(int));
	if (!m->stack_order)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		m->stack_order[i] = (int)i;
		if (m->stacks[i].parent >= (int)i)
			sorted = false;
	}
	if (sorted)
		return 0;
	depth = big_calloc(n ? n : 1, sizeof(int));
	if (!depth)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		int d = 0, s = m->stacks[i].parent;

		/* Bounded walk: a corrupt cycle must not hang the report. */
		while (s >= 0 && d <= (int)n) {
			d++;
			s = m->stacks[s].parent;
		}
		if (s >= 0) {
			m->stacks[i].parent = -1;
			d = 0;
		}
		depth[i] = d;
		if (d > maxd)
			maxd = d;
	}
	count = calloc((size_t)maxd + 2, sizeof(int));
	if (!count) {
		free(depth);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++)
		count[depth[i] + 1]++;
	for (i = 1; i <= (size_t)maxd + 1; i++)
		count[i] += count[i - 1];
	for (i = 0; i < n; i++)
		m->stack_order[count[depth[i]]++] = (int)i;
	free(count);
	free(depth);
	return 0;
}

/* A stack without a frame cannot be shown; its parent is a stack of the same table. */
static const struct model_column stack_cols[] = {
	ID,
	COL(model_stack, frame, COLUMN_REF, "frame_id", .map = MAP_FRAMES,
	    .flags = COLUMN_REQUIRED),
	COL(model_stack, parent, COLUMN_LATER, "parent_id", .map = MAP_STACKS),
};

static const struct model_table stacks_table =
	TABLE("stacks", "FROM stacks ORDER BY id", stacks, sizeof(struct model_stack), stack_cols,
	      MAP_STACKS, .finish = order_stacks);

/* ---- samples and the timeline -------------------------------------------------------------- */

/*
 * A sample without a stack (or a known one) or of a metric the result does not declare
 * cannot be shown. Schema 1 has CPU time alone, in samples.time_ns.
 */
static const struct model_column sample_cols[] = {
	COL(model_sample, thread, COLUMN_REF, "thread_id", .map = MAP_THREADS),
	COL(model_sample, stack, COLUMN_LATER, "stack_id", .map = MAP_STACKS,
	    .flags = COLUMN_REQUIRED),
	COL(model_sample, metric, COLUMN_REF, "metric_id", .map = MAP_METRICS, .v1 = "0",
	    .flags = COLUMN_REQUIRED),
	COL(model_sample, context, COLUMN_REF0, "context_id", .map = MAP_CONTEXTS, .v1 = "0"),
	COL(model_sample, count, COLUMN_INT64, "count"),
	COL(model_sample, value, COLUMN_INT64, "value", .v1 = "time_ns"),
};

const struct model_table model_samples_table =
	TABLE("samples", "FROM samples", samples, sizeof(struct model_sample), sample_cols,
	      MAP_NONE);

/* Read in time ranges (model-timeline.c), in TL_* order; schema 1 stores weights. */
static const struct model_column timeline_cols[] = {
	[TL_TIME] = { .sql = "time_ns", .type = COLUMN_INT64 },
	[TL_THREAD] = { .sql = "thread_id", .type = COLUMN_REF, .map = MAP_THREADS },
	[TL_STACK] = { .sql = "stack_id", .type = COLUMN_REF, .map = MAP_STACKS },
	[TL_METRIC] = { .sql = "metric_id", .type = COLUMN_REF, .map = MAP_METRICS, .v1 = "0" },
	[TL_CONTEXT] = { .sql = "context_id", .type = COLUMN_REF0, .map = MAP_CONTEXTS, .v1 = "0" },
	[TL_VALUE] = { .sql = "value", .type = COLUMN_INT64, .v1 = "weight" },
};

const struct model_table model_timeline_table = {
	.name = "timeline",
	.cols = timeline_cols,
	.ncols = sizeof(timeline_cols) / sizeof(timeline_cols[0]),
	.map = MAP_NONE,
};

/* ---- the order of reading ------------------------------------------------------------------ */

/* Each table after those its references name. */
const struct model_table *const model_tables[] = {
	&meta_table,      &metrics_table,   &modules_table, &files_table,
	&functions_table, &processes_table, &threads_table, &pynotes_table,
	&contexts_table,  &frames_table,    &stacks_table,
};
const size_t model_ntables = sizeof(model_tables) / sizeof(model_tables[0]);
const size_t model_tables_beside_samples = 9; /* frames */
