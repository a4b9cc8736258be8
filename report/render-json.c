/* SPDX-License-Identifier: MIT */
/* JSON rendering of a table: {"view", "columns", "rows": [{column: value}]}, nothing shortened. */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "report/outbuf.h"
#include "report/table.h"

static bool machine_visible(const struct table_col *c)
{
	return !(c->flags & TABLE_TEXT_ONLY);
}

static void json_string(struct outbuf *b, const char *s, size_t len)
{
	outbuf_json(b, s, len, 0);
}

static void json_cstring(struct outbuf *b, const char *s)
{
	json_string(b, s, strlen(s));
}

int table_render_json(const struct table *t, FILE *f, const char *view)
{
	char num[TABLE_NUM_MAX];
	const char *s;
	struct outbuf b;
	size_t i, r;
	bool first = true, first_row = true;
	int rc;

	outbuf_init(&b, f);
	outbuf_puts(&b, "{\"view\": ");
	json_cstring(&b, view);
	outbuf_puts(&b, ", \"columns\": [");
	for (i = 0; i < t->ncols; i++) {
		if (!machine_visible(&t->cols[i]))
			continue;
		if (!first)
			outbuf_puts(&b, ", ");
		json_cstring(&b, t->cols[i].name);
		first = false;
	}
	outbuf_puts(&b, "],\n \"rows\": [");
	for (r = 0; r < t->nrows; r++) {
		if (t->rowflags[r] & (TABLE_ROW_SEPARATOR | TABLE_ROW_TEXT_ONLY))
			continue;
		outbuf_puts(&b, first_row ? "\n  {" : ",\n  {");
		first_row = false;
		first = true;
		for (i = 0; i < t->ncols; i++) {
			const struct table_cell *c = &t->cells[r * t->ncols + i];
			size_t len;

			if (!machine_visible(&t->cols[i]))
				continue;
			if (!first)
				outbuf_puts(&b, ", ");
			first = false;
			json_cstring(&b, t->cols[i].name);
			outbuf_puts(&b, ": ");
			if (!c->set) {
				outbuf_puts(&b, "null");
				continue;
			}
			len = table_cell_text(t, r, (int)i, false, num, &s);
			if (t->cols[i].type == TABLE_TEXT)
				json_string(&b, s, len);
			else
				outbuf_put(&b, s, len);
		}
		outbuf_putc(&b, '}');
		outbuf_spill(&b);
	}
	outbuf_puts(&b, "\n ]");
	if (t->nnotes) {
		outbuf_puts(&b, ",\n \"notes\": [");
		for (i = 0; i < t->nnotes; i++) {
			if (i)
				outbuf_puts(&b, ", ");
			json_cstring(&b, t->notes[i]);
		}
		outbuf_putc(&b, ']');
	}
	outbuf_puts(&b, "}\n");
	rc = outbuf_finish(&b);
	outbuf_release(&b);
	return rc;
}
