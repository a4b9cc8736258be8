/* SPDX-License-Identifier: MIT */
/* The code objects of one stream, by id, from RAW_REC_PY_CODE records. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "common/grow.h"
#include "finalizer/python/python.h"
#include "finalizer/str-pool.h"

void pycode_table_init(struct pycode_table *t)
{
	memset(t, 0, sizeof(*t));
}

static void code_free(struct pycode *c)
{
	if (!c)
		return;
	free(c->filename);
	free(c->name);
	free(c->linetable);
	free(c);
}

void pycode_table_release(struct pycode_table *t)
{
	size_t i;

	for (i = 0; i < t->cap; i++)
		code_free(t->by_id[i]);
	free(t->by_id);
	pycode_table_init(t);
}

/* Ids are dense from 1 in each stream; far-off ids (a damaged record) are refused. */
#define MAX_ID (1u << 26)

int pycode_table_add_record(struct pycode_table *t, const uint8_t *payload, size_t len)
{
	struct raw_py_code rc;
	struct pycode *c;

	if (raw_py_read_code(payload, len, &rc) < 0 || rc.id >= MAX_ID ||
	    (rc.id < t->cap && t->by_id[rc.id])) {
		t->rejected++;
		return -EINVAL;
	}
	if (rc.id >= t->cap) {
		size_t old = t->cap;

		if (GROW(t->by_id, (size_t)rc.id + 1, t->cap))
			return -ENOMEM;
		memset(t->by_id + old, 0, (t->cap - old) * sizeof(*t->by_id)); /* ids not seen */
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->id = rc.id;
	c->version = rc.version;
	c->flags = rc.flags;
	c->firstlineno = rc.firstlineno;
	c->code_size = rc.code_size;
	c->filename = str_dup_mem(rc.filename.s, rc.filename.len);
	c->name = str_dup_mem(rc.name.s, rc.name.len);
	c->linetable_len = rc.linetable.len;
	c->linetable = malloc(rc.linetable.len ? rc.linetable.len : 1);
	if (!c->filename || !c->name || !c->linetable) {
		code_free(c);
		return -ENOMEM;
	}
	memcpy(c->linetable, rc.linetable.s, rc.linetable.len);
	t->by_id[rc.id] = c;
	t->count++;
	return 0;
}

const struct pycode *pycode_table_get(const struct pycode_table *t, uint64_t id)
{
	return id < t->cap ? t->by_id[id] : NULL;
}

int pycode_line(const struct pycode *c, uint32_t offset)
{
	int line = pyline_find(c->version, c->linetable, c->linetable_len, c->firstlineno, offset);

	return line < 0 ? -1 : line;
}
