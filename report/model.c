/* SPDX-License-Identifier: MIT */
/* A loaded model: its databases, metrics and meta by name, and its end. */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "common/metric.h"
#include "common/str.h"
#include "report/model-private.h"

const char *model_strdup(struct model *m, const char *s)
{
	return arena_strdup(&m->arena, s);
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
	return m->ids ? model_context_index(m, id) : -1;
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

int model_find_metric(const struct model *m, const char *name)
{
	return (int)str_find_field(m->metrics, m->nmetrics, sizeof(*m->metrics),
				   offsetof(struct model_metric, name), name, true);
}

int model_metric(const struct model *m, enum metric_id id)
{
	return model_find_metric(m, metric_name(id));
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

/* What the loader does not read from a table of its own. */
static const size_t model_derived[] = {
	offsetof(struct model, db_path),    offsetof(struct model, stack_order),
	offsetof(struct model, wait_kinds), offsetof(struct model, sync_objects),
	offsetof(struct model, nodes),      offsetof(struct model, regions),
	offsetof(struct model, db_views),   offsetof(struct model, runs),
};

static void model_free_array(struct model *m, size_t offset)
{
	void *rows;

	memcpy(&rows, (char *)m + offset, sizeof(rows));
	free(rows);
}

void model_free(struct model *m)
{
	size_t i;

	model_job_free(m);
	if (m->db)
		sqlite3_close(m->db);
	for (i = 0; m->ids && i < MAP_COUNT; i++)
		idmap_release(&m->ids->map[i]);
	free(m->ids);
	arena_release(&m->arena);
	/* The rows of each table the loader reads, by the same descriptions. */
	for (i = 0; i < model_ntables; i++)
		model_free_array(m, model_tables[i]->rows);
	model_free_array(m, model_samples_table.rows);
	for (i = 0; i < sizeof(model_derived) / sizeof(model_derived[0]); i++)
		model_free_array(m, model_derived[i]);
	memset(m, 0, sizeof(*m));
}
