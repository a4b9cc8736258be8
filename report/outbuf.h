/* SPDX-License-Identifier: MIT */
/* An output buffer: renderers build a report in memory and write it in big pieces. */
#ifndef PCOLLECT_REPORT_OUTBUF_H
#define PCOLLECT_REPORT_OUTBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* What the buffer holds before outbuf_spill() passes it on (bytes). */
#define OUTBUF_CHUNK (1024 * 1024)

struct outbuf {
	char *data;
	size_t len, cap;
	size_t line_start; /* where the current line begins, for outbuf_newline() */
	FILE *sink;        /* where outbuf_spill() and outbuf_finish() write */
	bool failed;       /* an allocation failed: the output is incomplete */
	bool write_failed;
};

void outbuf_init(struct outbuf *b, FILE *sink);
void outbuf_release(struct outbuf *b);

/* Make room for n more bytes; false (and failed set) when memory runs out. */
bool outbuf_grow(struct outbuf *b, size_t n);

static inline void outbuf_put(struct outbuf *b, const char *s, size_t n)
{
	if (!n || (b->cap - b->len < n && !outbuf_grow(b, n)))
		return;
	memcpy(b->data + b->len, s, n);
	b->len += n;
}

static inline void outbuf_puts(struct outbuf *b, const char *s)
{
	outbuf_put(b, s, strlen(s));
}

static inline void outbuf_putc(struct outbuf *b, char c)
{
	if (b->cap == b->len && !outbuf_grow(b, 1))
		return;
	b->data[b->len++] = c;
}

/* n blanks. */
void outbuf_pad(struct outbuf *b, size_t n);

/* A decimal integer. */
void outbuf_int(struct outbuf *b, int64_t v);

/* printf into the buffer (a line's worth: at most 1 KB). */
void outbuf_printf(struct outbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The length of the UTF-8 sequence at p (at most end - p bytes), 0 when it is not one. */
size_t outbuf_utf8_len(const unsigned char *p, const unsigned char *end);

enum outbuf_json_flags {
	OUTBUF_JSON_HTML = 1 << 0, /* '<', '>' and '&' as \u escapes: safe inside <script> */
};

/*
 * s (len bytes) as a JSON string, quotes included. Bytes that are not UTF-8 become U+FFFD,
 * so the output always parses; control characters (C0, DEL, C1) are \u escapes, so a
 * terminal showing the file acts on none.
 */
void outbuf_json(struct outbuf *b, const char *s, size_t len, unsigned flags);

/* End the line, dropping the blanks it ends with. */
void outbuf_newline(struct outbuf *b);

/* Between lines: write what the buffer holds to the sink once it passes OUTBUF_CHUNK. */
void outbuf_spill(struct outbuf *b);

/* Write the rest to the sink. Returns 0, -ENOMEM when the output is incomplete, or -EIO. */
int outbuf_finish(struct outbuf *b);

#endif
