/* SPDX-License-Identifier: MIT */
/* Load result.db into arrays: one pass per table, the samples on a second thread. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/result-dir.h"
#include "common/grow.h"
#include "common/sat.h"
#include "report/bigmem.h"
#include "report/model-private.h"
#include "report/scan.h"

/* Strings of the model: big chunks freed together. */
struct model_arena {
	struct model_arena *next;
	size_t used, size;
	char data[];
};

#define ARENA_CHUNK (256 * 1024)

static char *arena_alloc(struct model *m, size_t n)
{
	struct model_arena *a = m->arena;

	if (!a || a->size - a->used < n) {
		size_t size = n > ARENA_CHUNK ? n : ARENA_CHUNK;

		a = malloc(sizeof(*a) + size);
		if (!a)
			return NULL;
		a->used = 0;
		a->size = size;
		a->next = m->arena;
		m->arena = a;
	}
	a->used += n;
	return a->data + a->used - n;
}

const char *model_strdup(struct model *m, const char *s)
{
	size_t n;
	char *p;

	if (!s)
		return NULL;
	n = strlen(s) + 1;
	p = arena_alloc(m, n);
	if (p)
		memcpy(p, s, n);
	return p;
}

/*
 * Database ids to array indexes. Rows are read in id order, so ids are sorted; as written by
 * pfinalize they are also dense (row i has id first + i), and then no id is stored at all.
 */
struct idmap {
	int64_t *ids; /* per row, filled only once the ids stop being dense */
	size_t n;
	int64_t base; /* the first row's id */
	bool sparse;
	int *direct; /* sparse: id -> index when the ids are close enough, else NULL */
	int64_t max;
};

/* Allocate for n rows; the array is touched only if the ids turn out sparse. */
static int idmap_alloc(struct idmap *map, size_t n)
{
	map->ids = big_malloc((n ? n : 1) * sizeof(*map->ids));
	return map->ids ? 0 : -ENOMEM;
}

/* Row i (rows in order, each once) has id. */
static void idmap_set(struct idmap *map, size_t i, int64_t id)
{
	size_t k;

	if (!map->sparse) {
		if (!i)
			map->base = id;
		if ((uint64_t)id == (uint64_t)map->base + i)
			return;
		for (k = 0; k < i; k++)
			map->ids[k] = (int64_t)((uint64_t)map->base + k);
		map->sparse = true;
	}
	map->ids[i] = id;
}

static int idmap_finish(struct idmap *map)
{
	size_t i;

	if (!map->sparse)
		return 0;
	map->max = map->n ? map->ids[map->n - 1] : 0;
	if (map->n && map->ids[0] >= 0 && (uint64_t)map->max <= 4 * (uint64_t)map->n + 1024) {
		map->direct = big_malloc(((size_t)map->max + 1) * sizeof(int));
		if (!map->direct)
			return -ENOMEM;
		for (i = 0; i <= (size_t)map->max; i++)
			map->direct[i] = -1;
		for (i = 0; i < map->n; i++)
			map->direct[map->ids[i]] = (int)i;
	}
	return 0;
}

static int idmap_find(const struct idmap *map, int64_t id)
{
	size_t lo = 0, hi = map->n;

	if (!map->sparse) {
		uint64_t k = (uint64_t)id - (uint64_t)map->base;

		return k < map->n ? (int)k : -1;
	}
	if (map->direct)
		return id >= 0 && id <= map->max ? map->direct[id] : -1;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (map->ids[mid] < id)
			lo = mid + 1;
		else if (map->ids[mid] > id)
			hi = mid;
		else
			return (int)mid;
	}
	return -1;
}

static void idmap_release(struct idmap *map)
{
	free(map->ids);
	free(map->direct);
	memset(map, 0, sizeof(*map));
}

struct loader {
	struct model *m;
	struct idmap modules, files, functions, frames, stacks, processes, threads, contexts;
	int64_t *metric_ids; /* per metric, in display order: a few, looked up by metric_find() */
	char *err;
	size_t err_size;
};

__attribute__((format(printf, 2, 3))) static int load_error(struct loader *l, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(l->err, l->err_size, fmt, ap);
	va_end(ap);
	if (n >= 0 && (size_t)n < l->err_size)
		snprintf(l->err + n, l->err_size - (size_t)n, ": %s", sqlite3_errmsg(l->m->db));
	return -EIO;
}

static int prepare(struct loader *l, const char *sql, sqlite3_stmt **st)
{
	if (sqlite3_prepare_v2(l->m->db, sql, -1, st, NULL) != SQLITE_OK)
		return load_error(l, "cannot read database '%s'", l->m->db_path);
	return 0;
}

/* Count rows first so each array is allocated once. */
static int count_rows(struct loader *l, const char *table, size_t *n)
{
	char sql[128];
	sqlite3_stmt *st;
	int rc;

	snprintf(sql, sizeof(sql), "SELECT count(*) FROM %s", table);
	rc = prepare(l, sql, &st);
	if (rc)
		return rc;
	*n = sqlite3_step(st) == SQLITE_ROW ? (size_t)sqlite3_column_int64(st, 0) : 0;
	sqlite3_finalize(st);
	return 0;
}

static void *alloc_rows(size_t n, size_t size)
{
	return big_calloc(n ? n : 1, size);
}

static const char *column_str(struct model *m, sqlite3_stmt *st, int col)
{
	return model_strdup(m, (const char *)sqlite3_column_text(st, col));
}

static int column_ref(sqlite3_stmt *st, int col, const struct idmap *map)
{
	int64_t id = sqlite3_column_int64(st, col);

	/* NULL reads as 0; only then is the type worth asking (rowid 0 is legal but rare). */
	if (id == 0 && sqlite3_column_type(st, col) == SQLITE_NULL)
		return -1;
	return idmap_find(map, id);
}

/* Step through every row; returns 0 at the end or an error. */
#define FOR_EACH_ROW(l, st, rc)                                                                    \
	for (; ((rc) = sqlite3_step(st)) == SQLITE_ROW ||                                          \
	       ((rc) = ((rc) == SQLITE_DONE                                                        \
				? 0                                                                \
				: load_error(l, "cannot read database '%s'", (l)->m->db_path)),    \
	       0);)

static int load_meta(struct loader *l)
{
	struct model *m = l->m;
	sqlite3_stmt *st;
	size_t n, i = 0;
	int rc;

	if ((rc = count_rows(l, "meta", &n)))
		return rc;
	m->meta = alloc_rows(n, sizeof(*m->meta));
	if (!m->meta)
		return -ENOMEM;
	if ((rc = prepare(l, "SELECT key, value FROM meta", &st)))
		return rc;
	FOR_EACH_ROW(l, st, rc)
	{
		if (i == n)
			break;
		m->meta[i].key = column_str(m, st, 0);
		m->meta[i].value = column_str(m, st, 1);
		if (!m->meta[i].key || !m->meta[i].value)
			continue;
		i++;
	}
	m->nmeta = i;
	sqlite3_finalize(st);
	return rc;
}

/* Columns and tables added after the first schema: absent from older results. */
static bool has_column(struct loader *l, const char *sql)
{
	sqlite3_stmt *st;
	bool ok = sqlite3_prepare_v2(l->m->db, sql, -1, &st, NULL) == SQLITE_OK;

	sqlite3_finalize(st);
	return ok;
}

static int load_modules(struct loader *l)
{
	struct model *m = l->m;
	sqlite3_stmt *st;
	size_t n, i = 0;
	int rc;

	if ((rc = count_rows(l, "modules", &n)))
		return rc;
	m->modules = alloc_rows(n, sizeof(*m->modules));
	if (!m->modules || idmap_alloc(&l->modules, n))
		return -ENOMEM;
	rc = prepare(
		l,
		has_column(l, "SELECT role FROM modules LIMIT 0")
			? "SELECT id, name, path, status, symbols, role = 'interpreter' FROM modules "
			  "ORDER BY id"
			: "SELECT id, name, path, status, symbols, 0 FROM modules ORDER BY id",
		&st);
	if (rc)
		return rc;
	FOR_EACH_ROW(l, st, rc)
	{
		struct model_module *mod = &m->modules[i];

		if (i == n)
			break;
		idmap_set(&l->modules, i, sqlite3_column_int64(st, 0));
		mod->name = column_str(m, st, 1);
		mod->path = column_str(m, st, 2);
		mod->status = column_str(m, st, 3);
		mod->symbols = column_str(m, st, 4);
		mod->interpreter = sqlite3_column_int(st, 5) == 1;
		if (!mod->name)
			mod->name = mod->path ? mod->path : "[unknown]";
		i++;
	}
	sqlite3_finalize(st);
	m->nmodules = l->modules.n = i;
	return rc ? rc : idmap_finish(&l->modules);
}

static int load_files(struct loader *l)
{
	struct model *m = l->m;
	sqlite3_stmt *st;
	size_t n, i = 0;
	int rc;

	if ((rc = count_rows(l, "source_files", &n)))
		return rc;
	m->files = alloc_rows(n, sizeof(*m->files));
	if (!m->files || idmap_alloc(&l->files, n))
		return -ENOMEM;
	if ((rc = prepare(l, "SELECT id, path FROM source_files ORDER BY id", &st)))
		return rc;
	FOR_EACH_ROW(l, st, rc)
	{
		if (i == n)
			break;
		idmap_set(&l->files, i, sqlite3_column_int64(st, 0));
		m->files[i] = column_str(m, st, 1);
		if (!m->files[i])
			m->files[i] = "";
		i++;
	}
	sqlite3_finalize(st);
	m->nfiles = l->files.n = i;
	return rc ? rc : idmap_finish(&l->files);
}

static int load_functions(struct loader *l)
{
	struct model *m = l->m;
	sqlite3_stmt *st;
	size_t n, i = 0;
	int rc;

	if ((rc = count_rows(l, "functions", &n)))
		return rc;
	m->functions = alloc_rows(n, sizeof(*m->functions));
	if (!m->functions || idmap_alloc(&l->functions, n))
		return -ENOMEM;
	rc = prepare(l,
		     has_column(l, "SELECT kind FROM functions LIMIT 0")
			     ? "SELECT id, name, module_id, source_file_id, line, resolved, "
			       "language = 'python', kind = 'range' FROM functions ORDER BY id"
			     : "SELECT id, name, module_id, source_file_id, line, resolved, "
			       "language = 'python', 0 FROM functions ORDER BY id",
		     &st);
	if (rc)
		return rc;
	FOR_EACH_ROW(l, st, rc)
	{
		struct model_function *f = &m->functions[i];

		if (i == n)
			break;
		idmap_set(&l->functions, i, sqlite3_column_int64(st, 0));
		f->name = column_str(m, st, 1);
		if (!f->name)
			f->name = "[unknown]";
		f->module = column_ref(st, 2, &l->modules);
		f->file = column_ref(st, 3, &l->files);
		f->line = sqlite3_column_int(st, 4);
		f->resolved =
			sqlite3_column_type(st, 5) == SQLITE_NULL || sqlite3_column_int(st, 5);
		f->python = sqlite3_column_int(st, 6) == 1;
		f->range = sqlite3_column_int(st, 7) == 1;
		i++;
	}
	sqlite3_finalize(st);
	m->nfunctions = l->functions.n = i;
	return rc ? rc : idmap_finish(&l->functions);
}

/* The python_notes table, when the result has one: counts summed per kind. */
static int load_pynotes(struct loader *l)
{
	struct model *m = l->m;
	sqlite3_stmt *st;
	size_t n, i = 0;
	int rc;

	if (!has_column(l, "SELECT kind FROM python_notes LIMIT 0"))
		return 0;
	if ((rc = count_rows(l, "python_notes", &n)))
		return rc;
	m->pynotes = alloc_rows(n, sizeof(*m->pynotes));
	if (!m->pynotes)
		return -ENOMEM;
	rc = prepare(l,
		     "SELECT kind, max(detail), sum(count) FROM python_notes GROUP BY kind "
		     "ORDER BY sum(count) DESC, kind",
		     &st);
	if (rc)
		return rc;
	FOR_EACH_ROW(l, st, rc)
	{
		struct model_pynote *p = &m->pynotes[i];

		if (i == n)
			break;
		p->kind = column_str(m, st, 0);
		p->detail = column_str(m, st, 1);
		p->count = sqlite3_column_int64(st, 2);
		if (!p->kind)
			continue;
		if (!p->detail)
			p->detail = p->kind;
		i++;
	}
	sqlite3_finalize(st);
	m->npynotes = i;
	return rc;
}

static enum model_unit unit_of(const char *s)
{
	if (!strcmp(s, "ns"))
		return MODEL_UNIT_NS;
	if (!strcmp(s, "bytes"))
		return MODEL_UNIT_BYTES;
	return MODEL_UNIT_COUNT;
}

/* Schema 1 holds CPU time only: the metric every later result declares for it. */
static int metrics_schema1(struct loader *l)
{
	struct model *m = l->m;

	m->metrics = calloc(1, sizeof(*m->metrics));
	l->metric_ids = calloc(1, sizeof(*l->metric_ids));
	if (!m->metrics || !l->metric_ids)
		return -ENOMEM;
	m->metrics[0] = (struct model_metric){
		.name = "CPU Time",
		.unit_name = "ns",
		.kind = "cpu",
		.unit = MODEL_UNIT_NS,
		.aggregation = MODEL_AGG_SUM,
		.main = true,
	};
	m->nmetrics = 1;
	return 0;
}

static int load_metrics(struct loader *l)
{
	struct model *m = l->m;
	sqlite3_stmt *st;
	size_t n, i = 0;
	int rc;

	if (m->schema_version < 2)
		return metrics_schema1(l);
	if ((rc = count_rows(l, "metrics", &n)))
		return rc;
	m->metrics = alloc_rows(n, sizeof(*m->metrics));
	l->metric_ids = alloc_rows(n, sizeof(*l->metric_ids));
	if (!m->metrics || !l->metric_ids)
		return -ENOMEM;
	rc = prepare(l,
		     "SELECT id, name, unit, aggregation, kind, description, main "
		     "FROM metrics ORDER BY coalesce(display_order, id), id",
		     &st);
	if (rc)
		return rc;
	FOR_EACH_ROW(l, st, rc)
	{
		struct model_metric *mt = &m->metrics[i];
		const char *agg;

		if (i == n)
			break;
		mt->name = column_str(m, st, 1);
		mt->unit_name = column_str(m, st, 2);
		agg = (const char *)sqlite3_column_text(st, 3);
		mt->kind = column_str(m, st, 4);
		mt->description = column_str(m, st, 5);
		if (!mt->name || !mt->unit_name || !agg || !mt->kind)
			continue; /* NOT NULL in the schema: a row without them cannot be shown */
		l->metric_ids[i] = sqlite3_column_int64(st, 0);
		mt->unit = unit_of(mt->unit_name);
		mt->aggregation = !strcmp(agg, "peak") ? MODEL_AGG_PEAK : MODEL_AGG_SUM;
		mt->main = sqlite3_column_int(st, 6) != 0;
		i++;
	}
	sqlite3_finalize(st);
	m->nmetrics = i;
	if (!rc && !i) {
		snprintf(l->err, l->err_size,
			 "database '%s' declares no metric (table metrics is "
			 "empty)",
			 m->db_path);
		rc = -EIO;
	}
	return rc;
}

/* The index of the metric with database id, or -1 (a handful: a scan, the last hit first). */
static int metric_find(const struct loader *l, int64_t id, int *last)
{
	size_t i;

	if (*last >= 0 && l->metric_ids[*last] == id)
		return *last;
	for (i = 0; i < l->m->nmetrics; i++)
		if (l->metric_ids[i] == id)
			return *last = (int)i;
	return -1;
}

int model_find_metric(const struct model *m, const char *name)
{
	size_t i;

	for (i = 0; i < m->nmetrics; i++)
		if (!strcasecmp(m->metrics[i].name, name))
			return (int)i;
	return -1;
}

/* Order stacks so that each parent comes before its children (it usually does already). */
static int order_stacks(struct model *m)
{
	size_t i, n = m->nstacks;
	int *depth, *count, maxd = 0;
	bool sorted = true;

	m->stack_order = alloc_rows(n, sizeof(int));
	if (!m->stack_order)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		m->stack_order[i] = (int)i;
		if (m->stacks[i].parent >= (int)i)
			sorted = false;
	}
	if (sorted)
		return 0;
	depth = alloc_rows(n, sizeof(int));
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

static int load_processes(struct loader *l)
{
	struct model *m = l->m;
	sqlite3_stmt *st;
	size_t n, i = 0;
	int rc;

	if ((rc = count_rows(l, "processes", &n)))
		return rc;
	m->processes = alloc_rows(n, sizeof(*m->processes));
	if (!m->processes || idmap_alloc(&l->processes, n))
		return -ENOMEM;
	rc = prepare(l, "SELECT id, pid, exe, command_line, host, rank FROM processes ORDER BY id",
		     &st);
	if (rc)
		return rc;
	FOR_EACH_ROW(l, st, rc)
	{
		struct model_process *p = &m->processes[i];

		if (i == n)
			break;
		idmap_set(&l->processes, i, sqlite3_column_int64(st, 0));
		p->pid = sqlite3_column_int64(st, 1);
		p->exe = column_str(m, st, 2);
		p->command_line = column_str(m, st, 3);
		p->host = column_str(m, st, 4);
		p->rank = sqlite3_column_type(st, 5) == SQLITE_NULL ? -1
								    : sqlite3_column_int64(st, 5);
		if (!p->exe)
			p->exe = "[unknown]";
		i++;
	}
	sqlite3_finalize(st);
	m->nprocesses = l->processes.n = i;
	return rc ? rc : idmap_finish(&l->processes);
}

static int load_threads(struct loader *l)
{
	struct model *m = l->m;
	sqlite3_stmt *st;
	size_t n, i = 0;
	int rc;

	if ((rc = count_rows(l, "threads", &n)))
		return rc;
	m->threads = alloc_rows(n, sizeof(*m->threads));
	if (!m->threads || idmap_alloc(&l->threads, n))
		return -ENOMEM;
	rc = prepare(l,
		     "SELECT id, process_id, tid, name, cpu_ns, coalesce(start_ns, -1), "
		     "coalesce(end_ns, -1) FROM threads ORDER BY id",
		     &st);
	if (rc)
		return rc;
	FOR_EACH_ROW(l, st, rc)
	{
		struct model_thread *t = &m->threads[i];

		if (i == n)
			break;
		idmap_set(&l->threads, i, sqlite3_column_int64(st, 0));
		t->process = column_ref(st, 1, &l->processes);
		t->tid = sqlite3_column_int64(st, 2);
		t->name = column_str(m, st, 3);
		t->cpu_ns = sqlite3_column_int64(st, 4);
		t->start_ns = sqlite3_column_int64(st, 5);
		t->end_ns = sqlite3_column_int64(st, 6);
		if (!t->name)
			t->name = "";
		i++;
	}
	sqlite3_finalize(st);
	m->nthreads = l->threads.n = i;
	return rc ? rc : idmap_finish(&l->threads);
}

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

	return d ? d : a - b;
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

/* The contexts table's wait columns, when the result has them (schema 2 with waits). */
static int load_contexts(struct loader *l)
{
	struct model *m = l->m;
	sqlite3_stmt *st;
	size_t n, i = 0;
	bool regions, mpi;
	char sql[256];
	int rc;

	if (!has_column(l, "SELECT wait_kind, object, object_type, object_name FROM contexts "
			   "LIMIT 0"))
		return idmap_alloc(&l->contexts, 0);
	/* Regions came after waits: a result of that time has no such column. */
	regions = has_column(l, "SELECT region FROM contexts LIMIT 0");
	if ((rc = count_rows(l, "contexts", &n)))
		return rc;
	m->contexts = alloc_rows(n, sizeof(*m->contexts));
	if (!m->contexts || idmap_alloc(&l->contexts, n))
		return -ENOMEM;
	/* MPI's columns came later (-trace-mpi): results without them read as without MPI. */
	mpi = has_column(l, "SELECT mpi_function, communicator_size FROM contexts LIMIT 0");
	snprintf(sql, sizeof(sql),
		 "SELECT id, wait_kind, object, object_type, object_name, %s, %s FROM contexts "
		 "ORDER BY id",
		 mpi ? "mpi_function, communicator_size" : "NULL, NULL",
		 regions ? "region" : "NULL");
	rc = prepare(l, sql, &st);
	if (rc)
		return rc;
	FOR_EACH_ROW(l, st, rc)
	{
		struct model_context *c = &m->contexts[i];

		if (i == n)
			break;
		idmap_set(&l->contexts, i, sqlite3_column_int64(st, 0));
		c->wait_kind = column_str(m, st, 1);
		c->object = sqlite3_column_int64(st, 2);
		c->object_type = column_str(m, st, 3);
		c->object_name = column_str(m, st, 4);
		c->mpi_function = column_str(m, st, 5);
		c->comm_size = sqlite3_column_int64(st, 6);
		c->region = column_str(m, st, 7);
		i++;
	}
	sqlite3_finalize(st);
	m->ncontexts = l->contexts.n = i;
	if (!rc)
		rc = idmap_finish(&l->contexts);
	return rc ? rc : model_index_contexts(m);
}

/* A sample's context_id as an index into contexts: 0 (none) and unknown ids are -1. */
static int context_index(const struct idmap *map, int64_t id)
{
	return id ? idmap_find(map, id) : -1;
}

/* Address-like object types read in hex; fds and pids in decimal. */
static bool object_is_address(const char *type)
{
	return strcmp(type, "fd") && strcmp(type, "pid");
}

const char *model_sync_object_label(const struct model *m, int i, char *buf, size_t size)
{
	const struct model_context *c;

	if (i < 0 || (size_t)i >= m->nsync_objects)
		return "[no wait]";
	c = &m->contexts[m->sync_objects[i].context];
	if (!c->object_type)
		snprintf(buf, size, "[%s]", c->wait_kind ? c->wait_kind : "none");
	else if (c->object_name && object_is_address(c->object_type))
		snprintf(buf, size, "%s", c->object_name);
	else if (c->object_name)
		snprintf(buf, size, "%s (%s %lld)", c->object_name, c->object_type,
			 (long long)c->object);
	else if (object_is_address(c->object_type))
		snprintf(buf, size, "%s 0x%llx", c->object_type, (unsigned long long)c->object);
	else
		snprintf(buf, size, "%s %lld", c->object_type, (long long)c->object);
	return buf;
}

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

const char *model_node_label(const struct model *m, int i)
{
	return i >= 0 && (size_t)i < m->nnodes ? m->nodes[i] : "[unknown node]";
}

const char *model_wait_kind_label(const struct model *m, int i)
{
	return i >= 0 && (size_t)i < m->nwait_kinds ? m->wait_kinds[i] : "[no wait]";
}

const char *model_region_label(const struct model *m, int i)
{
	return i >= 0 && (size_t)i < m->nregions ? m->regions[i] : "[no region]";
}

static int load_frames(struct loader *l, bool lines)
{
	struct model *m = l->m;
	sqlite3_stmt *st;
	size_t n, i = 0;
	int rc;

	if ((rc = count_rows(l, "frames", &n)))
		return rc;
	m->frames = alloc_rows(n, sizeof(*m->frames));
	if (!m->frames || idmap_alloc(&l->frames, n))
		return -ENOMEM;
	/* Only views by source line need the positions: two columns fewer for the others. */
	rc = prepare(
		l,
		lines ? "SELECT id, function_id, module_id, inline_depth, source_file_id, "
			"line FROM frames ORDER BY id"
		      : "SELECT id, function_id, module_id, inline_depth FROM frames ORDER BY id",
		&st);
	if (rc)
		return rc;
	FOR_EACH_ROW(l, st, rc)
	{
		struct model_frame *fr = &m->frames[i];

		if (i == n)
			break;
		fr->function = column_ref(st, 1, &l->functions);
		if (fr->function < 0)
			continue; /* a frame without a function cannot be shown */
		idmap_set(&l->frames, i, sqlite3_column_int64(st, 0));
		fr->module = column_ref(st, 2, &l->modules);
		if (fr->module < 0)
			fr->module = m->functions[fr->function].module;
		/* NULL reads as 0, which is what a missing depth or line means. */
		fr->inline_depth = (int)sqlite3_column_int64(st, 3);
		fr->file = lines ? column_ref(st, 4, &l->files) : -1;
		fr->line = lines ? (int)sqlite3_column_int64(st, 5) : 0;
		i++;
	}
	sqlite3_finalize(st);
	m->nframes = l->frames.n = i;
	return rc ? rc : idmap_finish(&l->frames);
}

static int load_stacks(struct loader *l)
{
	struct model *m = l->m;
	sqlite3_stmt *st;
	int64_t *parents;
	size_t n, i = 0;
	int rc;

	if ((rc = count_rows(l, "stacks", &n)))
		return rc;
	m->stacks = alloc_rows(n, sizeof(*m->stacks));
	parents = alloc_rows(n, sizeof(int64_t));
	if (!m->stacks || idmap_alloc(&l->stacks, n) || !parents) {
		free(parents);
		return -ENOMEM;
	}
	rc = prepare(l, "SELECT id, parent_id, frame_id FROM stacks ORDER BY id", &st);
	if (rc) {
		free(parents);
		return rc;
	}
	FOR_EACH_ROW(l, st, rc)
	{
		if (i == n)
			break;
		m->stacks[i].frame = column_ref(st, 2, &l->frames);
		if (m->stacks[i].frame < 0)
			continue;
		idmap_set(&l->stacks, i, sqlite3_column_int64(st, 0));
		parents[i] = sqlite3_column_int64(st, 1);
		if (parents[i] == 0 && sqlite3_column_type(st, 1) == SQLITE_NULL)
			parents[i] = -1;
		i++;
	}
	sqlite3_finalize(st);
	m->nstacks = l->stacks.n = i;
	if (!rc)
		rc = idmap_finish(&l->stacks);
	for (i = 0; !rc && i < m->nstacks; i++)
		m->stacks[i].parent = parents[i] < 0 ? -1 : idmap_find(&l->stacks, parents[i]);
	free(parents);
	return rc ? rc : order_stacks(m);
}

/*
 * The samples table, read by the helper thread while this one reads frames and stacks. Its
 * stack ids are kept raw (stack_ids) and mapped once the stacks are loaded.
 */
struct samples_job {
	struct scan_job job;
	struct loader *l;
	int64_t *stack_ids; /* per sample, as in the database */
	size_t n;
};

static int samples_run(struct scan_job *job, sqlite3 *db)
{
	struct samples_job *sj =
		(struct samples_job *)((char *)job - offsetof(struct samples_job, job));
	struct model *m = sj->l->m;
	bool v1 = m->schema_version < 2;
	sqlite3_stmt *st = NULL;
	size_t n = 0, i = 0;
	int rc = -EIO, last = -1;

	if (sqlite3_prepare_v2(db, "SELECT count(*) FROM samples", -1, &st, NULL) != SQLITE_OK)
		goto out;
	if (sqlite3_step(st) == SQLITE_ROW)
		n = (size_t)sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	m->samples = alloc_rows(n, sizeof(*m->samples));
	sj->stack_ids = alloc_rows(n, sizeof(int64_t));
	if (!m->samples || !sj->stack_ids)
		return -ENOMEM;
	/* Schema 1: CPU time alone, in samples.time_ns. */
	if (sqlite3_prepare_v2(db,
			       v1 ? "SELECT thread_id, stack_id, 0, 0, count, time_ns "
				    "FROM samples"
				  : "SELECT thread_id, stack_id, metric_id, context_id, count, "
				    "value FROM samples",
			       -1, &st, NULL) != SQLITE_OK) {
		st = NULL;
		goto out;
	}
	while (i < n && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct model_sample *s = &m->samples[i];

		sj->stack_ids[i] = sqlite3_column_int64(st, 1);
		if (!sj->stack_ids[i] && sqlite3_column_type(st, 1) == SQLITE_NULL)
			continue; /* a sample without a stack cannot be shown */
		s->metric = v1 ? 0 : metric_find(sj->l, sqlite3_column_int64(st, 2), &last);
		if (s->metric < 0)
			continue; /* a metric the result does not declare */
		s->thread = column_ref(st, 0, &sj->l->threads);
		s->context = context_index(&sj->l->contexts, sqlite3_column_int64(st, 3));
		s->count = sqlite3_column_int64(st, 4);
		s->value = sqlite3_column_int64(st, 5);
		i++;
	}
	sj->n = i;
	if (i == n || rc == SQLITE_DONE)
		rc = 0;
out:
	if (rc)
		snprintf(job->err, sizeof(job->err), "%s", sqlite3_errmsg(db));
	sqlite3_finalize(st);
	return rc ? -EIO : 0;
}

/* Map the samples' stack ids onto the loaded stacks, dropping unknown stacks. */
static void samples_map(struct loader *l, struct samples_job *sj)
{
	struct model *m = l->m;
	size_t i, k = 0;

	for (i = 0; i < sj->n; i++) {
		int stack = idmap_find(&l->stacks, sj->stack_ids[i]);

		if (stack < 0)
			continue;
		m->samples[k] = m->samples[i];
		m->samples[k++].stack = stack;
	}
	m->nsamples = k;
}

/* The message of a failed job. */
static int job_error(struct loader *l, const struct scan_job *job)
{
	if (job->rc != -ENOMEM)
		snprintf(l->err, l->err_size, "cannot read database '%s': %s", l->m->db_path,
			 job->err);
	return job->rc;
}

const char *model_meta_get(const struct model *m, const char *key)
{
	size_t i;

	for (i = 0; i < m->nmeta; i++)
		if (!strcmp(m->meta[i].key, key))
			return m->meta[i].value;
	return NULL;
}

int64_t model_meta_int(const struct model *m, const char *key, int64_t def)
{
	const char *v = model_meta_get(m, key);
	char *end;
	long long x;

	if (!v || !*v)
		return def;
	errno = 0;
	x = strtoll(v, &end, 10);
	return errno || *end ? def : (int64_t)x;
}

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
		snprintf(l->err, l->err_size,
			 "database '%s' has schema version '%s', which no "
			 "pfinalize writes (this preport reads 1 to %d): the database is damaged",
			 m->db_path, s, MODEL_SCHEMA_MAX);
		return -EPROTO;
	}
	if (!s)
		v = 1;
	if (v > MODEL_SCHEMA_MAX) {
		snprintf(l->err, l->err_size,
			 "database '%s' has schema version %lld, newer than "
			 "this preport reads (%d): use the preport of the pfinalize that wrote it",
			 m->db_path, (long long)v, MODEL_SCHEMA_MAX);
		return -EPROTO;
	}
	m->schema_version = v < 1 ? 1 : (int)v;
	return 0;
}

/* The loader keeps the id maps of stacks, threads, contexts, metrics for
   model_load_time_range(). */
struct model_ids {
	struct idmap stacks, threads, contexts;
	int64_t *metric_ids;
};

int model_load(struct model *m, const char *db_path, unsigned flags, char *err, size_t err_size)
{
	struct loader l = { .m = m, .err = err, .err_size = err_size };
	struct samples_job sj = { .job.run = samples_run, .l = &l };
	struct scan_job *jobs[] = { &sj.job };
	struct scan_jobs set = { .jobs = jobs, .db_path = db_path };
	struct model_ids *ids;
	struct stat st;
	int rc;

	memset(m, 0, sizeof(*m));
	m->db_path = strdup(db_path);
	if (!m->db_path)
		return -ENOMEM;
	/* A FIFO or a device in place of the database would hang SQLite or feed it forever. */
	rc = result_open_file(db_path, false, 0, &st);
	if (rc < 0) {
		snprintf(err, err_size, "cannot open database '%s': %s", db_path,
			 result_strerror(-rc));
		goto out;
	}
	close(rc);
	if (sqlite3_open_v2(db_path, &m->db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL) !=
	    SQLITE_OK) {
		rc = load_error(&l, "cannot open database '%s'", db_path);
		goto out;
	}
	scan_tune(m->db);
	rc = load_meta(&l);
	if (!rc)
		rc = check_schema(&l);
	if (!rc)
		rc = load_metrics(&l);
	if (!rc)
		rc = load_modules(&l);
	if (!rc)
		rc = load_files(&l);
	if (!rc)
		rc = load_functions(&l);
	if (!rc)
		rc = load_processes(&l);
	if (!rc)
		rc = load_threads(&l);
	if (!rc)
		rc = load_pynotes(&l);
	if (!rc)
		rc = load_contexts(&l);
	if (rc)
		goto out;
	/* The helper reads the samples while this thread reads frames and stacks. */
	set.n = flags & MODEL_NO_SAMPLES ? 0 : 1;
	scan_jobs_start(&set);
	rc = load_frames(&l, flags & MODEL_FRAME_LINES);
	if (!rc)
		rc = load_stacks(&l);
	if (scan_jobs_finish(&set, m->db) && !rc)
		rc = job_error(&l, &sj.job);
	if (!rc && set.n)
		samples_map(&l, &sj);
	if (rc == -ENOMEM)
		snprintf(err, err_size, "cannot load database '%s': %s", db_path, strerror(ENOMEM));
	m->interval_ns = model_meta_int(m, "interval_ns", 0);
	if (!rc)
		rc = model_index_nodes(m);
out:
	free(sj.stack_ids);
	idmap_release(&l.modules);
	idmap_release(&l.files);
	idmap_release(&l.functions);
	idmap_release(&l.frames);
	idmap_release(&l.processes);
	if (!rc && (ids = calloc(1, sizeof(*ids)))) {
		ids->stacks = l.stacks;
		ids->threads = l.threads;
		ids->contexts = l.contexts;
		ids->metric_ids = l.metric_ids;
		m->ids = ids;
	} else {
		idmap_release(&l.stacks);
		idmap_release(&l.threads);
		idmap_release(&l.contexts);
		free(l.metric_ids);
		if (!rc)
			rc = -ENOMEM;
	}
	if (rc)
		model_free(m);
	return rc;
}

size_t model_ndbs(const struct model *m)
{
	return m->nparts ? m->nparts : 1;
}

struct sqlite3 *model_db(const struct model *m, size_t i)
{
	return m->nparts ? m->parts[i].m.db : m->db;
}

int64_t model_db_offset_ns(const struct model *m, size_t i)
{
	return m->nparts ? m->parts[i].offset_ns : 0;
}

int model_context_of_id(const struct model *m, int64_t id)
{
	return m->ids ? context_index(&m->ids->contexts, id) : -1;
}

bool model_has_samples(struct model *m)
{
	sqlite3_stmt *st;
	bool any = false;
	size_t i;

	for (i = 0; i < m->nparts && !any; i++)
		any = model_has_samples(&m->parts[i].m);
	if (m->nparts)
		return any;
	if (sqlite3_prepare_v2(m->db, "SELECT 1 FROM samples LIMIT 1", -1, &st, NULL) != SQLITE_OK)
		return false;
	any = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	return any;
}

/*
 * A time filter reads the timeline rows of its range, cut in two by time so that the helper
 * thread reads one half while this one reads the other.
 */
#define PIECES 2

/* The first and last time of the timeline (through its index); false when unreadable. */
static bool time_range(struct loader *l, int64_t *lo, int64_t *hi)
{
	sqlite3_stmt *st;
	bool ok = false;

	if (prepare(l,
		    "SELECT (SELECT min(time_ns) FROM timeline), "
		    "(SELECT max(time_ns) FROM timeline)",
		    &st))
		return false;
	if (sqlite3_step(st) == SQLITE_ROW) {
		*lo = sqlite3_column_int64(st, 0);
		*hi = sqlite3_column_int64(st, 1);
		if (sqlite3_column_type(st, 0) == SQLITE_NULL) {
			*lo = 1; /* empty */
			*hi = 0;
		}
		ok = true;
	}
	sqlite3_finalize(st);
	return ok;
}

/* The samples of one (metric, thread, context, stack) in a time range, chained per stack. */
struct slot {
	int thread, metric, context, next;
	int64_t count, value;
};

/* The column count of the timeline scans: thread, stack, metric, context, value. */
#define TL_COLS 5

/*
 * Aggregate the timeline rows of sc per metric, thread, context and stack into m->samples,
 * in the samples table's order (metric, thread, stack). Peak metrics are left out.
 */
static int aggregate_timeline(struct model *m, const struct scan *sc)
{
	size_t n = 0, nslots = 0, i, k, j, nt = m->nthreads + 1;
	size_t nbuckets = m->nmetrics * nt; /* per (metric, thread + 1) */
	int *head = big_malloc((m->nstacks + 1) * sizeof(int));
	size_t *pos = calloc(nbuckets + 2, sizeof(size_t));
	struct slot *slots;
	struct model_sample *rows = NULL;
	int rc = -ENOMEM, last = -1;
	/* Schema 1 stores weights: one weight is one sampling interval. */
	int64_t scale = m->schema_version < 2 ? m->interval_ns : 1;

	for (k = 0; k < PIECES; k++)
		n += sc[k].n;
	slots = big_malloc((n + 1) * sizeof(*slots));
	if (!head || !pos || !slots)
		goto out;
	memset(head, 0xff, (m->nstacks + 1) * sizeof(int));
	for (k = 0; k < PIECES; k++) {
		for (j = 0; j < sc[k].n; j++) {
			const int64_t *row = sc[k].rows + TL_COLS * j;
			int stack = row[1] == SCAN_NULL ? -1 : idmap_find(&m->ids->stacks, row[1]);
			int thread, metric, q;
			int context = context_index(&m->ids->contexts, row[3]);

			if (stack < 0)
				continue;
			if (m->schema_version < 2) {
				metric = 0;
			} else {
				struct loader l = { .m = m, .metric_ids = m->ids->metric_ids };

				metric = metric_find(&l, row[2], &last);
			}
			if (metric < 0)
				continue;
			if (m->metrics[metric].aggregation == MODEL_AGG_PEAK)
				continue;
			thread = row[0] == SCAN_NULL ? -1 : idmap_find(&m->ids->threads, row[0]);
			q = head[stack];
			while (q >= 0 && (slots[q].thread != thread || slots[q].metric != metric ||
					  slots[q].context != context))
				q = slots[q].next;
			if (q < 0) {
				q = (int)nslots++;
				slots[q] =
					(struct slot){ thread, metric, context, head[stack], 0, 0 };
				head[stack] = q;
				pos[(size_t)metric * nt + (size_t)(thread + 1) + 1]++;
			}
			slots[q].count++;
			slots[q].value = sat_add_i64(slots[q].value, sat_mul_i64(row[4], scale));
		}
	}
	rows = alloc_rows(nslots, sizeof(*rows));
	if (!rows)
		goto out;
	/* A counting sort by (metric, thread); stacks in order within each. */
	for (i = 1; i <= nbuckets; i++)
		pos[i] += pos[i - 1];
	for (i = 0; i < m->nstacks; i++) {
		int q;

		for (q = head[i]; q >= 0; q = slots[q].next)
			rows[pos[(size_t)slots[q].metric * nt + (size_t)(slots[q].thread + 1)]++] =
				(struct model_sample){
					.thread = slots[q].thread,
					.stack = (int)i,
					.metric = slots[q].metric,
					.context = slots[q].context,
					.count = slots[q].count,
					.value = slots[q].value,
				};
	}
	free(m->samples);
	m->samples = rows;
	m->nsamples = nslots;
	rc = 0;
out:
	free(head);
	free(pos);
	free(slots);
	return rc;
}

int model_load_time_range(struct model *m, int64_t from_ns, int64_t to_ns, bool *skipped, char *err,
			  size_t err_size)
{
	struct loader l = { .m = m, .err = err, .err_size = err_size };
	struct scan sc[PIECES];
	struct scan_job *jobs[PIECES];
	struct scan_jobs set = { .jobs = jobs, .n = PIECES, .db_path = m->db_path };
	int64_t lo, hi, total = model_meta_int(m, "samples_total", 0);
	const char *sql =
		m->schema_version < 2
			? "SELECT thread_id, stack_id, 0, 0, weight FROM timeline "
			  "WHERE time_ns BETWEEN ?1 AND ?2"
			: "SELECT thread_id, stack_id, metric_id, context_id, value FROM timeline "
			  "WHERE time_ns BETWEEN ?1 AND ?2";
	uint64_t step;
	size_t expect = 0, k;
	int rc;

	if (m->nparts)
		return model_job_time_range(m, from_ns, to_ns, skipped, err, err_size);
	/* A window's peak is not a sum of its events: peak metrics are left out, all of them. */
	for (k = 0; skipped && k < m->nmetrics; k++)
		if (m->metrics[k].aggregation == MODEL_AGG_PEAK)
			skipped[k] = true;
	if (!time_range(&l, &lo, &hi))
		return load_error(&l, "cannot read the timeline of database '%s'", m->db_path);
	if (to_ns <= from_ns || to_ns - 1 < lo || from_ns > hi) {
		lo = 1; /* nothing in range */
		hi = 0;
	} else {
		/* Rows expected, were samples spread evenly over time. */
		if (hi > lo && total > 0)
			expect = (size_t)((double)total *
					  ((double)(to_ns - 1 < hi ? to_ns - 1 : hi) -
					   (double)(from_ns > lo ? from_ns : lo)) /
					  ((double)hi - (double)lo) / PIECES);
		if (from_ns > lo)
			lo = from_ns;
		if (to_ns - 1 < hi)
			hi = to_ns - 1;
	}
	/* Piece k starts at lo + k * step; the last one ends at hi. An empty range: [1, 0]. */
	step = lo <= hi ? ((uint64_t)hi - (uint64_t)lo) / PIECES : 0;
	for (k = 0; k < PIECES; k++) {
		int64_t start = (int64_t)((uint64_t)lo + k * step);
		int64_t end = k + 1 < PIECES ? (int64_t)((uint64_t)start + step) - 1 : hi;

		scan_init(&sc[k], sql, TL_COLS, 0x3, start, end, expect + 1024);
		jobs[k] = &sc[k].job;
	}
	scan_jobs_start(&set);
	rc = scan_jobs_finish(&set, m->db);
	for (k = 0; rc && k < PIECES; k++)
		if (sc[k].job.rc) {
			rc = job_error(&l, &sc[k].job);
			break;
		}
	if (!rc)
		rc = aggregate_timeline(m, sc);
	if (rc == -ENOMEM)
		snprintf(err, err_size, "cannot load the timeline of database '%s': %s", m->db_path,
			 strerror(ENOMEM));
	for (k = 0; k < PIECES; k++)
		scan_release(&sc[k]);
	return rc;
}

int model_load_events(struct model *m, int64_t from_ns, int64_t to_ns, struct model_event **out,
		      size_t *n, char *err, size_t err_size)
{
	struct loader l = { .m = m,
			    .err = err,
			    .err_size = err_size,
			    .metric_ids = m->ids ? m->ids->metric_ids : NULL };
	const char *sql =
		m->schema_version < 2
			? "SELECT time_ns, thread_id, stack_id, 0, weight FROM timeline "
			  "WHERE time_ns >= ?1 AND time_ns < ?2"
			: "SELECT time_ns, thread_id, stack_id, metric_id, value FROM timeline "
			  "WHERE time_ns >= ?1 AND time_ns < ?2";
	/* Schema 1 stores weights: one weight is one sampling interval. */
	int64_t scale = m->schema_version < 2 ? m->interval_ns : 1;
	struct model_event *ev = NULL;
	size_t cap = 0, k = 0;
	sqlite3_stmt *st;
	int rc, last = -1;

	if (m->nparts)
		return model_job_events(m, from_ns, to_ns, out, n, err, err_size);
	*out = NULL;
	*n = 0;
	if ((rc = prepare(&l, sql, &st)))
		return rc;
	sqlite3_bind_int64(st, 1, from_ns);
	sqlite3_bind_int64(st, 2, to_ns);
	FOR_EACH_ROW(&l, st, rc)
	{
		int stack = column_ref(st, 2, &m->ids->stacks);
		int metric = m->schema_version < 2
				     ? 0
				     : metric_find(&l, sqlite3_column_int64(st, 3), &last);

		if (stack < 0 || metric < 0)
			continue;
		if (GROW(ev, k + 1, cap)) {
			rc = -ENOMEM;
			break;
		}
		ev[k++] = (struct model_event){
			.time_ns = sqlite3_column_int64(st, 0),
			.value = sqlite3_column_int64(st, 4) * scale,
			.thread = column_ref(st, 1, &m->ids->threads),
			.stack = stack,
			.metric = metric,
		};
	}
	sqlite3_finalize(st);
	if (rc == -ENOMEM)
		snprintf(err, err_size, "cannot load the timeline of database '%s': %s", m->db_path,
			 strerror(ENOMEM));
	if (rc) {
		free(ev);
		return rc;
	}
	*out = ev;
	*n = k;
	return 0;
}

int model_scan_timeline(struct model *m, int64_t to_ns, model_timeline_fn fn, void *ctx, char *err,
			size_t err_size)
{
	struct loader l = {
		.m = m, .err = err, .err_size = err_size, .metric_ids = m->ids->metric_ids
	};
	bool v1 = m->schema_version < 2;
	sqlite3_stmt *st;
	int rc, last = -1;

	rc = prepare(&l,
		     v1 ? "SELECT time_ns, thread_id, stack_id, 0, 0, weight FROM timeline "
			  "WHERE time_ns < ?1 ORDER BY time_ns"
			: "SELECT time_ns, thread_id, stack_id, metric_id, context_id, value "
			  "FROM timeline WHERE time_ns < ?1 ORDER BY time_ns",
		     &st);
	if (rc)
		return rc;
	sqlite3_bind_int64(st, 1, to_ns);
	FOR_EACH_ROW(&l, st, rc)
	{
		struct model_sample s = { .count = 1 };

		s.stack = sqlite3_column_type(st, 2) == SQLITE_NULL
				  ? -1
				  : idmap_find(&m->ids->stacks, sqlite3_column_int64(st, 2));
		s.metric = v1 ? 0 : metric_find(&l, sqlite3_column_int64(st, 3), &last);
		if (s.stack < 0 || s.metric < 0)
			continue;
		s.thread = sqlite3_column_type(st, 1) == SQLITE_NULL
				   ? -1
				   : idmap_find(&m->ids->threads, sqlite3_column_int64(st, 1));
		s.context = context_index(&m->ids->contexts, sqlite3_column_int64(st, 4));
		s.value = sqlite3_column_int64(st, 5) * (v1 ? m->interval_ns : 1);
		if ((rc = fn(ctx, &s, sqlite3_column_int64(st, 0))))
			break;
	}
	sqlite3_finalize(st);
	return rc;
}

void model_free(struct model *m)
{
	struct model_arena *a, *next;

	model_job_free(m);
	if (m->db)
		sqlite3_close(m->db);
	if (m->ids) {
		idmap_release(&m->ids->stacks);
		idmap_release(&m->ids->threads);
		idmap_release(&m->ids->contexts);
		free(m->ids->metric_ids);
		free(m->ids);
	}
	for (a = m->arena; a; a = next) {
		next = a->next;
		free(a);
	}
	free(m->db_path);
	free(m->meta);
	free(m->modules);
	free(m->files);
	free(m->functions);
	free(m->frames);
	free(m->stacks);
	free(m->stack_order);
	free(m->processes);
	free(m->threads);
	free(m->samples);
	free(m->pynotes);
	free(m->metrics);
	free(m->contexts);
	free(m->wait_kinds);
	free(m->sync_objects);
	free(m->nodes);
	free(m->regions);
	memset(m, 0, sizeof(*m));
}
