/* SPDX-License-Identifier: MIT */
/* Unit tests of finalizer/line-table.c: DWARF 4 and 5 line tables assembled byte by byte. */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "finalizer/line-table.h"
#include "tests/unit/unit.h"

struct lt_row {
	uint64_t addr, file, line;
	bool end;
};

struct lt_rows {
	struct lt_row v[8];
	int n;
};

static void lt_take(void *ctx, uint64_t addr, uint64_t file, uint64_t line, bool end)
{
	struct lt_rows *r = ctx;

	if (r->n < 8)
		r->v[r->n++] = (struct lt_row){ addr, file, line, end };
}

/* The program shared by both versions: two rows and the end. The first row takes the file
   register's initial value, 1 (DWARF 5 6.2.2), not the primary source file. */
static const uint8_t lt_program[] = {
	0x00, 0x09, 0x02, 0x00, 0x10, 0, 0, 0, 0, 0, 0, /* DW_LNE_set_address 0x1000 */
	26,                                             /* special: line += 8, a row */
	0x02, 0x04,                                     /* DW_LNS_advance_pc 4 */
	0x04, 0x02,                                     /* DW_LNS_set_file 2 */
	0x03, 0x05,                                     /* DW_LNS_advance_line 5 */
	0x01,                                           /* DW_LNS_copy */
	0x02, 0x08,                                     /* DW_LNS_advance_pc 8 */
	0x00, 0x01, 0x01,                               /* DW_LNE_end_sequence */
};

/* Assemble a line table: unit length, version, header (after its length field), program. */
static size_t lt_build(uint8_t *out, unsigned version, const uint8_t *hdr, size_t hlen)
{
	size_t n = 0, len = 2 + (version >= 5 ? 2 : 0) + 4 + hlen + sizeof(lt_program);

	out[n++] = (uint8_t)len;
	out[n++] = (uint8_t)(len >> 8);
	out[n++] = 0;
	out[n++] = 0;
	out[n++] = (uint8_t)version;
	out[n++] = 0;
	if (version >= 5) {
		out[n++] = 8; /* address size */
		out[n++] = 0; /* segment selector size */
	}
	out[n++] = (uint8_t)hlen;
	out[n++] = 0;
	out[n++] = 0;
	out[n++] = 0;
	memcpy(out + n, hdr, hlen);
	n += hlen;
	memcpy(out + n, lt_program, sizeof(lt_program));
	return n + sizeof(lt_program);
}

static void test_line_table_parse_and_run(void)
{
	/* min_inst 1, max_ops 1, is_stmt 1, line_base -5, line_range 14, opcode_base 13. */
	static const uint8_t common[] = {
		1, 1, 1, 0xfb, 14, 13, 0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1
	};
	static const uint8_t
		v5_tables[] = {
			1,    0x01, 0x08, /* directories: path as a string */
			2,    '/',  's',  'r', 'c', 0,   'i', 'n', 'c', 0,   2,   0x01, 0x08,
			0x02, 0x0f, /* files: path, directory number */
			3,    'm',  'a',  'i', 'n', '.', 'c', 0,   0,   'u', 't', 'i',  'l',
			'.',  'h',  0,    1,   'm', 'a', 'i', 'n', '.', 'c', 0,   0,
		};
	static const uint8_t v4_tables[] = {
		'i', 'n', 'c', 0,   0,                    /* include directories */
		'm', 'a', 'i', 'n', '.', 'c', 0, 0, 0, 0, /* files: name, dir, time, size */
		'u', 't', 'i', 'l', '.', 'h', 0, 1, 0, 0, 0,
	};
	uint8_t hdr[128], sec[256];
	struct line_sections ls = { .line = sec };
	struct line_table t;
	struct lt_rows rows;
	const struct line_file *f;
	unsigned v;

	for (v = 4; v <= 5; v++) {
		const uint8_t *tables = v == 5 ? v5_tables : v4_tables;
		size_t tlen = v == 5 ? sizeof(v5_tables) : sizeof(v4_tables);
		/* DWARF 4 has max_ops; the tables follow the standard opcode lengths. */
		memcpy(hdr, common, sizeof(common));
		memcpy(hdr + sizeof(common), tables, tlen);
		ls.line_size = lt_build(sec, v, hdr, sizeof(common) + tlen);
		CU_ASSERT_FATAL(line_table_parse(&t, &ls, 0, 8) == 0);
		CU_ASSERT(t.version == v);
		CU_ASSERT(t.file_base == (v == 5 ? 0u : 1u));
		f = line_table_file(&t, 1);
		CU_ASSERT_FATAL(f != NULL);
		CU_ASSERT_STRING_EQUAL(f->name, v == 5 ? "util.h" : "main.c");
		f = line_table_file(&t, 2);
		CU_ASSERT_FATAL(f != NULL);
		CU_ASSERT_STRING_EQUAL(f->name, v == 5 ? "main.c" : "util.h");
		CU_ASSERT_STRING_EQUAL(t.dirs[1], "inc");
		CU_ASSERT(line_table_file(&t, 3) == NULL);
		memset(&rows, 0, sizeof(rows));
		CU_ASSERT(line_table_run(&t, lt_take, &rows) == 0);
		CU_ASSERT_FATAL(rows.n == 3);
		CU_ASSERT(rows.v[0].addr == 0x1000 && rows.v[0].file == 1 && rows.v[0].line == 9 &&
			  !rows.v[0].end);
		CU_ASSERT(rows.v[1].addr == 0x1004 && rows.v[1].file == 2 && rows.v[1].line == 14 &&
			  !rows.v[1].end);
		CU_ASSERT(rows.v[2].addr == 0x100c && rows.v[2].end);
		line_table_release(&t);
		/* Cut short: refused, not guessed. */
		ls.line_size = 20;
		CU_ASSERT(line_table_parse(&t, &ls, 0, 8) != 0);
	}
	/* An unknown version is refused too. */
	ls.line_size = lt_build(sec, 6, hdr, sizeof(common));
	CU_ASSERT(line_table_parse(&t, &ls, 0, 8) != 0);
}

UNIT_MAIN("line-table", NULL, NULL,
	  {
		  { "line table", test_line_table_parse_and_run },
	  })
