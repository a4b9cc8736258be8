/* SPDX-License-Identifier: MIT */
/* A DWARF 2-5 line table read straight from .debug_line: header, file table, rows. */
#ifndef PCOLLECT_FINALIZER_LINE_TABLE_H
#define PCOLLECT_FINALIZER_LINE_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * libdwarf's dwarf_srclines_b() allocates an object per row; a unit's table has tens of
 * thousands of rows, of which a profile wants a handful. This reader runs the line program
 * in place and hands each row to a callback. Unknown versions and malformed tables are
 * refused (the caller falls back to libdwarf), never guessed.
 */

/* The sections a line table refers to (uncompressed bytes; NULL/0 when absent). */
struct line_sections {
	const uint8_t *line, *line_str, *str;
	size_t line_size, line_str_size, str_size;
};

struct line_file {
	const char *name; /* as in the table: relative or absolute */
	uint64_t dir;     /* directory number */
};

struct line_table {
	unsigned version;
	const uint8_t *program, *end; /* the line program */
	uint8_t addr_size;
	uint8_t min_inst, max_ops, default_is_stmt, line_range, opcode_base;
	int8_t line_base;
	const uint8_t *std_lengths; /* operand counts of the standard opcodes 1..base-1 */
	const char **dirs;          /* directory number -> name (DWARF 5: 0 is the
				       compilation directory; before: 0 is implicit) */
	size_t ndirs;
	struct line_file *files; /* file number - file_base -> entry */
	size_t nfiles;
	unsigned file_base; /* 0 in DWARF 5, 1 before */
};

/* Parse the table at offset of s->line; addr_size is the unit's. 0, -EINVAL or -ENOMEM. */
int line_table_parse(struct line_table *t, const struct line_sections *s, uint64_t offset,
		     unsigned addr_size);
void line_table_release(struct line_table *t);

/* The entry of file number n (as DW_AT_decl_file and the rows give it), or NULL. */
const struct line_file *line_table_file(const struct line_table *t, uint64_t n);

/* A row: address, file number, line; end_sequence rows end the previous row's range. */
typedef void (*line_row_fn)(void *ctx, uint64_t addr, uint64_t file, uint64_t line,
			    bool end_sequence);

/* Run the program, calling fn for every row in order. 0 or -EINVAL (rows given stand). */
int line_table_run(const struct line_table *t, line_row_fn fn, void *ctx);

#endif
