/* SPDX-License-Identifier: MIT */
/* Decoding CPython line tables: 3.10 co_linetable pairs and the 3.11+ location table. */
#include "finalizer/python/python.h"

/*
 * Both decoders follow CPython's own (Objects/codeobject.c, advance() and
 * PyLineTable_NextAddressRange()), so pyline_find() answers what PyCode_Addr2Line() does:
 *
 * 3.10 (Objects/lnotab_notes.txt): pairs (sdelta:u8, ldelta:s8). Each pair ends a range
 * sdelta bytes long after the previous one; ldelta is added to the line, and -128 means the
 * range has no line (the line is not changed). Empty ranges (sdelta 0) only carry line deltas.
 *
 * 3.11+ (Objects/locations.md): entries start with a byte 1CCCCLLL: code C, length L+1 code
 * units (2 bytes each). C = 15: no location; 14: long form (svarint line delta, varint end
 * line delta, varint column+1, varint end column+1); 13: no columns (svarint line delta);
 * 10-12: one line, line delta C-10, then two column bytes; 0-9: short form, same line, one
 * column byte. Varints are 6 bits a byte, least significant first, 0x40 = more follow;
 * svarints hold the sign in bit 0.
 */

#define NO_LINE (-1)

static unsigned minor_of(uint32_t version)
{
	return (version >> 24) == 3 ? (version >> 16) & 0xff : 0;
}

/* The 3.11+ varint at p (below end): its value, p moved past it. */
static uint32_t varint6(const uint8_t **p, const uint8_t *end, bool *bad)
{
	uint32_t v, shift = 0;
	uint8_t b;

	if (*p >= end) {
		*bad = true;
		return 0;
	}
	b = *(*p)++;
	v = b & 63;
	while (b & 64) {
		if (*p >= end || shift > 24) {
			*bad = true;
			return v;
		}
		b = *(*p)++;
		shift += 6;
		v |= (uint32_t)(b & 63) << shift;
	}
	return v;
}

static int svarint6(const uint8_t **p, const uint8_t *end, bool *bad)
{
	uint32_t u = varint6(p, end, bad);

	return (u & 1) ? -(int)(u >> 1) : (int)(u >> 1);
}

/*
 * Iterate over a table's ranges. Returns 1 with *r set, 0 at the end, -1 on a table that
 * ends inside an entry.
 */
struct cursor {
	unsigned minor;
	const uint8_t *p, *end;
	uint32_t addr; /* bytes: end of the last range */
	int line;      /* the computed line */
};

static int next_range(struct cursor *c, struct pyline_range *r)
{
	bool bad = false;

	for (;;) {
		if (c->p >= c->end)
			return 0;
		r->start = c->addr;
		if (c->minor == 10) {
			int ldelta;

			if (c->end - c->p < 2)
				return -1;
			c->addr += c->p[0];
			ldelta = (int8_t)c->p[1];
			c->p += 2;
			if (ldelta == -128) {
				r->line = NO_LINE;
			} else {
				c->line += ldelta;
				r->line = c->line;
			}
		} else {
			uint8_t b = *c->p++;
			unsigned code = (b >> 3) & 15;

			if (!(b & 0x80))
				return -1;
			c->addr += ((b & 7) + 1) * 2;
			if (code == 15) {
				r->line = NO_LINE;
			} else {
				if (code == 14 || code == 13)
					c->line += svarint6(&c->p, c->end, &bad);
				else if (code == 11 || code == 12)
					c->line += (int)code - 10;
				r->line = c->line;
			}
			/* the rest of the entry (columns) up to the next entry byte */
			while (c->p < c->end && !(*c->p & 0x80))
				c->p++;
			if (bad)
				return -1;
		}
		r->end = c->addr;
		if (r->end > r->start)
			return 1;
	}
}

static int cursor_init(struct cursor *c, uint32_t version, const uint8_t *table, size_t len,
		       int firstlineno)
{
	c->minor = minor_of(version);
	if (c->minor < 10)
		return -2;
	c->p = table;
	c->end = table + len;
	c->addr = 0;
	c->line = firstlineno;
	return 0;
}

int pyline_find(uint32_t version, const uint8_t *table, size_t len, int firstlineno,
		uint32_t offset)
{
	struct pyline_range r;
	struct cursor c;
	int ret;

	if (cursor_init(&c, version, table, len, firstlineno) < 0)
		return -2;
	while ((ret = next_range(&c, &r)) > 0)
		if (offset >= r.start && offset < r.end)
			return r.line;
	return NO_LINE;
}

int pyline_ranges(uint32_t version, const uint8_t *table, size_t len, int firstlineno,
		  struct pyline_range *out, size_t cap)
{
	struct pyline_range r;
	struct cursor c;
	size_t n = 0;
	int ret;

	if (cursor_init(&c, version, table, len, firstlineno) < 0)
		return -2;
	while ((ret = next_range(&c, &r)) > 0) {
		if (n < cap)
			out[n] = r;
		n++;
	}
	if (ret < 0)
		return -1;
	return n > INT32_MAX ? INT32_MAX : (int)n;
}
