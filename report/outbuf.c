/* SPDX-License-Identifier: MIT */
/* An output buffer: renderers build a report in memory and write it in big pieces. */
#include <errno.h>
#include <stdlib.h>

#include "report/bigmem.h"
#include "report/outbuf.h"

void outbuf_init(struct outbuf *b, FILE *sink)
{
	memset(b, 0, sizeof(*b));
	b->sink = sink;
}

void outbuf_release(struct outbuf *b)
{
	free(b->data);
	memset(b, 0, sizeof(*b));
}

bool outbuf_grow(struct outbuf *b, size_t n)
{
	/* One chunk and a line or two: a spilled buffer never grows again. */
	size_t cap = b->cap ? b->cap : OUTBUF_CHUNK + 64 * 1024;
	char *data;

	if (b->failed)
		return false;
	if (b->data && b->cap - b->len >= n)
		return true;
	while (cap - b->len < n)
		cap *= 2;
	data = big_realloc(b->data, cap);
	if (!data) {
		b->failed = true;
		return false;
	}
	b->data = data;
	b->cap = cap;
	return true;
}

void outbuf_pad(struct outbuf *b, size_t n)
{
	if (!n || (b->cap - b->len < n && !outbuf_grow(b, n)))
		return;
	memset(b->data + b->len, ' ', n);
	b->len += n;
}

void outbuf_newline(struct outbuf *b)
{
	while (b->len > b->line_start && b->data[b->len - 1] == ' ')
		b->len--;
	outbuf_putc(b, '\n');
	b->line_start = b->len;
}

static void outbuf_flush(struct outbuf *b)
{
	if (b->len && !b->failed && !b->write_failed &&
	    fwrite(b->data, 1, b->len, b->sink) != b->len)
		b->write_failed = true;
	b->len = b->line_start = 0;
}

void outbuf_spill(struct outbuf *b)
{
	if (b->len >= OUTBUF_CHUNK)
		outbuf_flush(b);
}

int outbuf_finish(struct outbuf *b)
{
	outbuf_flush(b);
	if (b->failed)
		return -ENOMEM;
	return b->write_failed || ferror(b->sink) ? -EIO : 0;
}
