/* SPDX-License-Identifier: MIT */
/* CSV rendering of a table: every column, nothing shortened, RFC 4180 quoting. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "report/outbuf.h"
#include "report/table.h"

static bool machine_visible(const struct table_col *c)
{
	return !(c->flags & TABLE_TEXT_ONLY);
}

/* RFC 4180 quoting: only when needed, doubling quotes. */
static void csv_field(struct outbuf *b, const char *s, size_t len, char delimiter)
{
	const char *p, *end = s + len;

	for (p = s; p < end; p++)
		if (*p == delimiter || *p == '"' || *p == '\r' || *p == '\n')
			break;
	if (p == end) {
		outbuf_put(b, s, len);
		return;
	}
	outbuf_putc(b, '"');
	for (p = s; p < end; p++) {
		if (*p == '"')
			outbuf_putc(b, '"');
		outbuf_putc(b, *p);
	}
	outbuf_putc(b, '"');
}

int table_render_csv(const struct table *t, FILE *f, char delimiter)
{
	char num[TABLE_NUM_MAX];
	const char *s;
	struct outbuf b;
	size_t i, r;
	bool first = true;
	int rc;

	outbuf_init(&b, f);
	for (i = 0; i < t->ncols; i++) {
		if (!machine_visible(&t->cols[i]))
			continue;
		if (!first)
			outbuf_putc(&b, delimiter);
		csv_field(&b, t->cols[i].name, strlen(t->cols[i].name), delimiter);
		first = false;
	}
	outbuf_putc(&b, '\n');
	for (r = 0; r < t->nrows; r++) {
		if (t->rowflags[r] & (TABLE_ROW_SEPARATOR | TABLE_ROW_TEXT_ONLY))
			continue;
		first = true;
		for (i = 0; i < t->ncols; i++) {
			size_t len;

			if (!machine_visible(&t->cols[i]))
				continue;
			if (!first)
				outbuf_putc(&b, delimiter);
			len = table_cell_text(t, r, (int)i, false, num, &s);
			csv_field(&b, s, len, delimiter);
			first = false;
		}
		outbuf_putc(&b, '\n');
		outbuf_spill(&b);
	}
	rc = outbuf_finish(&b);
	outbuf_release(&b);
	return rc;
}
