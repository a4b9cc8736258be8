/* SPDX-License-Identifier: MIT */
/* An output buffer: renderers build a report in memory and write it in big pieces. */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>

#include "report/bigmem.h"
#include "report/outbuf.h"

#define OUTBUF_FIRST ((size_t)64 * 1024)

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
	/* Doubling from 64 KB to a chunk and a line or two, where a spilled buffer stops
	   growing: a short report touches no more than it writes (a first allocation of a whole
	   chunk, filled by MALLOC_PERTURB_ and rounded to a huge page, took 60% of a small
	   report's CPU time). */
	size_t cap = b->cap ? b->cap : OUTBUF_FIRST;
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

void outbuf_int(struct outbuf *b, int64_t v)
{
	char buf[24], *p = buf + sizeof(buf);
	uint64_t u = v < 0 ? -(uint64_t)v : (uint64_t)v;

	do
		*--p = (char)('0' + u % 10);
	while (u /= 10);
	if (v < 0)
		*--p = '-';
	outbuf_put(b, p, (size_t)(buf + sizeof(buf) - p));
}

void outbuf_printf(struct outbuf *b, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n > 0)
		outbuf_put(b, buf, (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1);
}

size_t outbuf_utf8_len(const unsigned char *p, const unsigned char *end)
{
	size_t n, i;
	uint32_t c;

	if (*p < 0x80)
		return 1;
	if (*p >= 0xc2 && *p <= 0xdf)
		n = 2, c = *p & 0x1f;
	else if (*p >= 0xe0 && *p <= 0xef)
		n = 3, c = *p & 0x0f;
	else if (*p >= 0xf0 && *p <= 0xf4)
		n = 4, c = *p & 0x07;
	else
		return 0;
	if ((size_t)(end - p) < n)
		return 0;
	for (i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (p[i] & 0x3f);
	}
	/* Overlong forms, surrogates and code points past U+10FFFF are not UTF-8. */
	if ((n == 3 && (c < 0x800 || (c >= 0xd800 && c <= 0xdfff))) ||
	    (n == 4 && (c < 0x10000 || c > 0x10ffff)))
		return 0;
	return n;
}

void outbuf_json(struct outbuf *b, const char *s, size_t len, unsigned flags)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)s, *end = p + len, *run;
	bool html = flags & OUTBUF_JSON_HTML;
	size_t n;

	outbuf_putc(b, '"');
	while (p < end) {
		for (run = p; p < end && *p >= 0x20 && *p < 0x7f && *p != '"' && *p != '\\' &&
			      !(html && (*p == '<' || *p == '>' || *p == '&'));
		     p++)
			;
		outbuf_put(b, (const char *)run, (size_t)(p - run));
		if (p == end)
			break;
		/* C1 controls (U+0080 to U+009F) as \u escapes, as the C0 ones and DEL: a terminal
		   showing the file acts on none of them. */
		if (*p == 0xc2 && p + 1 < end && p[1] >= 0x80 && p[1] < 0xa0) {
			char u[6] = { '\\', 'u', '0', '0', hex[p[1] >> 4], hex[p[1] & 15] };

			outbuf_put(b, u, sizeof(u));
			p += 2;
			continue;
		}
		if (*p >= 0x80) {
			if ((n = outbuf_utf8_len(p, end))) {
				outbuf_put(b, (const char *)p, n);
				p += n;
			} else {
				outbuf_put(b, "\\ufffd", 6);
				p++;
			}
			continue;
		}
		if (*p == '"' || *p == '\\') {
			outbuf_putc(b, '\\');
			outbuf_putc(b, (char)*p);
		} else if (*p == '\n') {
			outbuf_put(b, "\\n", 2);
		} else if (*p == '\t') {
			outbuf_put(b, "\\t", 2);
		} else {
			char u[6] = { '\\', 'u', '0', '0', hex[*p >> 4], hex[*p & 15] };

			outbuf_put(b, u, sizeof(u));
		}
		p++;
	}
	outbuf_putc(b, '"');
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
