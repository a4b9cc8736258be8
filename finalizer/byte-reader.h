/* SPDX-License-Identifier: MIT */
/* A bounded little-endian reader for the DWARF sections (line tables, unwind tables). */
#ifndef PCOLLECT_FINALIZER_BYTE_READER_H
#define PCOLLECT_FINALIZER_BYTE_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Reading past end sets bad and gives zeros (NULL for a string); bad stays set. Inline:
   the line-table reader calls these per byte. */
struct byte_reader {
	const uint8_t *p, *end;
	bool bad;
};

static inline uint64_t byte_reader_u(struct byte_reader *r, unsigned n)
{
	uint64_t v = 0;
	unsigned i;

	if (r->bad || (size_t)(r->end - r->p) < n) {
		r->bad = true;
		return 0;
	}
	for (i = 0; i < n; i++)
		v |= (uint64_t)r->p[i] << (8 * i);
	r->p += n;
	return v;
}

/* LEB128's bits; *shift receives how many were read, *last the final byte. */
static inline uint64_t byte_reader_leb(struct byte_reader *r, unsigned *shift, uint8_t *last)
{
	uint64_t v = 0;

	*shift = 0;
	*last = 0;
	while (!r->bad) {
		if (r->p >= r->end) {
			r->bad = true;
			return 0;
		}
		*last = *r->p++;
		if (*shift < 64)
			v |= (uint64_t)(*last & 0x7f) << *shift;
		*shift += 7;
		if (!(*last & 0x80))
			break;
	}
	return v;
}

static inline uint64_t byte_reader_uleb(struct byte_reader *r)
{
	unsigned shift;
	uint8_t last;

	return byte_reader_leb(r, &shift, &last);
}

static inline int64_t byte_reader_sleb(struct byte_reader *r)
{
	unsigned shift;
	uint8_t last;
	uint64_t v = byte_reader_leb(r, &shift, &last);

	if (shift < 64 && (last & 0x40))
		v |= ~(uint64_t)0 << shift;
	return (int64_t)v;
}

static inline const char *byte_reader_str(struct byte_reader *r)
{
	const uint8_t *nul;

	if (r->bad || !(nul = memchr(r->p, 0, (size_t)(r->end - r->p)))) {
		r->bad = true;
		return NULL;
	}
	{
		const char *s = (const char *)r->p;

		r->p = nul + 1;
		return s;
	}
}

#endif
