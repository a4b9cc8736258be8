/* SPDX-License-Identifier: MIT */
/* The table every view fills and every renderer (text, CSV, JSON) prints. */
#ifndef PCOLLECT_REPORT_TABLE_H
#define PCOLLECT_REPORT_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "report/arena.h"

enum table_type {
	TABLE_TEXT,
	TABLE_TIME, /* ns, shown as seconds with millisecond precision */
	TABLE_PCT,  /* percent, one decimal */
	TABLE_INT,
	TABLE_BYTES, /* bytes: text "512 B", "1.5 KB", "12.3 MB" (1 KB = 1024 B); CSV/JSON exact */
};

enum table_col_flags {
	TABLE_TREE = 1 << 0,      /* text: indented by the row's depth */
	TABLE_SHRINK = 1 << 1,    /* text: shortened in the middle to fit the width */
	TABLE_CUT_END = 1 << 2,   /* text: cut at the end to fit the width (source lines) */
	TABLE_MACHINE = 1 << 3,   /* CSV and JSON only */
	TABLE_TEXT_ONLY = 1 << 4, /* text only */
	TABLE_KEEP_END = 1 << 5,  /* text: shortened from the left, "...dir/file.c" (paths) */
	TABLE_OPTIONAL = 1 << 6,  /* text: left out first when the width cannot hold every
				     column (percentages) */
	TABLE_DETAIL = 1 << 7,    /* text: left out next (a function's module, file, line) */
	TABLE_NAME = 1 << 8,      /* text: a qualified name, shortened keeping its end,
				     "...Grid<double>::relax(int)", to no fewer than 30 columns */
};

enum table_row_flags {
	TABLE_ROW_SEPARATOR = 1 << 0, /* a blank line in text; absent from CSV and JSON */
	TABLE_ROW_TEXT_ONLY = 1 << 1, /* shown in text only (continuation rows) */
};

struct table_col {
	char *name; /* stable: documented in docs/preport.md */
	enum table_type type;
	unsigned flags;
};

struct table_cell {
	union {
		const char *s; /* in the table's arena */
		int64_t i;
		double d;
	} v;
	bool set;
};

struct table {
	struct table_col *cols;
	size_t ncols, colcap;
	struct table_cell *cells; /* nrows * ncols */
	int *depth;               /* per row */
	unsigned char *rowflags;  /* per row */
	size_t nrows, cap;        /* cap: rows of cells */
	size_t depthcap, flagcap;
	char **notes; /* lines printed after the table in text */
	size_t nnotes, notecap;
	struct arena arena; /* the text cells */
	bool failed;        /* an allocation failed: the table is incomplete */
};

void table_init(struct table *t);
void table_release(struct table *t);

/* Add a column (all columns before the first row); returns its index. */
int table_add_col(struct table *t, const char *name, enum table_type type, unsigned flags);
/* The index of the column called name, or -1. */
int table_find_col(const struct table *t, const char *name);

/* Make room for rows more rows at once (a hint: tables grow as needed anyway). */
void table_reserve(struct table *t, size_t rows);
/* Append a row at tree depth depth (0 for flat tables); returns its index. */
size_t table_add_row(struct table *t, int depth);
void table_add_separator(struct table *t);
void table_set_row_flags(struct table *t, size_t row, unsigned flags);

void table_set_text(struct table *t, size_t row, int col, const char *s); /* copies s */
/* Like table_set_text() without the copy: s must outlive the table (model strings). */
void table_set_text_ref(struct table *t, size_t row, int col, const char *s);
void table_set_int(struct table *t, size_t row, int col, int64_t v);
void table_set_time(struct table *t, size_t row, int col, int64_t ns);
void table_set_pct(struct table *t, size_t row, int col, double pct);
/* A note printed under the table in text ("no samples match the filters"). */
void table_add_note(struct table *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Stable sort of the rows of a flat table by column col, descending (text ascending). */
void table_sort(struct table *t, int col);
/* Keep the first n rows (separators and text-only rows do not count). */
void table_truncate(struct table *t, size_t n);

/*
 * Render. Text fits width columns (0: no limit, nothing shortened): numbers keep their
 * digits, TABLE_OPTIONAL columns are left out (rightmost first) while the rest do not fit,
 * then names are shortened (in the middle, "very_lo...e_name", or keeping their end),
 * headers split at ':' over several lines. CSV and JSON are complete: nothing shortened,
 * every column. Return 0 or -errno of the write.
 */
int table_render_text(const struct table *t, FILE *f, int width);
int table_render_csv(const struct table *t, FILE *f, char delimiter);
int table_render_json(const struct table *t, FILE *f, const char *view);

/* Room for any number cell as table_cell_text() formats it ("%.1f" of DBL_MAX: 312 bytes). */
#define TABLE_NUM_MAX 320

/*
 * A cell as printed (text true: "1.234s", "12.3%"; false: "1.234", "12.3"): sets *s to the
 * cell's own string (text cells) or to buf (numbers; buf holds TABLE_NUM_MAX bytes) and
 * returns the length. An unset cell gives "".
 */
size_t table_cell_text(const struct table *t, size_t row, int col, bool text, char *buf,
		       const char **s);

/* The length table_cell_text() would return, counted without formatting where it can be. */
size_t table_cell_len(const struct table *t, size_t row, int col, bool text);

/* Format one cell as text renders it (time "1.234s", percent "12.3%"), into buf. */
void table_format_cell(const struct table *t, size_t row, int col, bool text, char *buf,
		       size_t size);

/* Write s shortened to width bytes, keeping its start and end: "abc...xyz". */
void table_shorten_middle(const char *s, size_t width, char *buf, size_t size);

#endif
