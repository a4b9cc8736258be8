/* SPDX-License-Identifier: MIT */
/* Text rendering of a table: aligned columns that fit the terminal width. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "report/outbuf.h"
#include "report/table.h"

#define MAX_HEADER_LINES 4
#define GAP              2

struct text_col {
	int col;
	size_t width, minw, natural;
	const char *parts[MAX_HEADER_LINES];
	size_t part_len[MAX_HEADER_LINES];
	int nparts;
	bool left;
};

/* "CPU Time:Self %" -> "CPU Time" / "Self %"; with words, also at blanks: "CPU" / "Time". */
static void split_header(struct text_col *c, const char *name, bool words)
{
	const char *p = name, *cut;

	c->nparts = 0;
	while (c->nparts < MAX_HEADER_LINES - 1 && (cut = strpbrk(p, words ? ": " : ":"))) {
		/* "Self %" stays whole: a lone "%" line says nothing. */
		if (*cut == ' ' && cut[1] == '%')
			break;
		c->parts[c->nparts] = p;
		c->part_len[c->nparts++] = (size_t)(cut - p);
		p = cut + 1;
	}
	c->parts[c->nparts] = p;
	c->part_len[c->nparts++] = strlen(p);
}

static bool visible(const struct table_col *c)
{
	return !(c->flags & TABLE_MACHINE);
}

/* Width 0: no limit. */
#define NO_LIMIT ((size_t)-1 / 4)

/* Indentation of tree cells: two blanks a level, one when the tree is deep. */
static size_t indent_of(int depth, int step)
{
	return depth > 0 ? (size_t)depth * (size_t)step : 0;
}

static void fit_width(struct text_col *cols, size_t n, size_t width)
{
	size_t total = 0, i;

	for (i = 0; i < n; i++)
		total += cols[i].width + (i ? GAP : 0);
	while (total > width) {
		struct text_col *widest = NULL;

		for (i = 0; i < n; i++)
			if (cols[i].width > cols[i].minw &&
			    (!widest || cols[i].width > widest->width))
				widest = &cols[i];
		if (!widest)
			break;
		widest->width--;
		total--;
	}
}

/* A cell's text fitted to its room: head, then "..." when dots, then tail. */
struct fitted {
	const char *head, *tail;
	size_t nhead, ntail;
	bool dots;
};

static size_t fitted_len(const struct fitted *f)
{
	return f->nhead + (f->dots ? 3 : 0) + f->ntail;
}

/* s (len bytes) shortened to room in the middle: "abc...xyz" (table_shorten_middle). */
static void fit_middle(struct fitted *f, const char *s, size_t len, size_t room)
{
	memset(f, 0, sizeof(*f));
	f->head = s;
	if (len <= room || room < 5) {
		f->nhead = len <= room ? len : room;
		return;
	}
	f->nhead = (room - 3 + 1) / 2;
	f->ntail = room - 3 - f->nhead;
	f->tail = s + len - f->ntail;
	f->dots = true;
}

static void put_fitted(struct outbuf *b, const struct fitted *f)
{
	outbuf_put(b, f->head, f->nhead);
	if (f->dots)
		outbuf_put(b, "...", 3);
	outbuf_put(b, f->tail, f->ntail);
}

static void print_cell(struct outbuf *b, const struct table *t, size_t row,
		       const struct text_col *c, int step, bool last)
{
	const struct table_col *tc = &t->cols[c->col];
	char num[TABLE_NUM_MAX];
	const char *s;
	size_t len = table_cell_text(t, row, c->col, true, num, &s), indent = 0, room = c->width;
	struct fitted f;

	if (tc->flags & TABLE_TREE) {
		size_t keep = len < 8 ? len : 8;

		indent = indent_of(t->depth[row], step);
		/* Keep at least 8 characters of the name; deep trees lose indentation first. */
		if (indent + keep > room)
			indent = room > keep ? room - keep : 0;
		room -= indent;
	}
	if (tc->flags & TABLE_CUT_END) {
		memset(&f, 0, sizeof(f));
		f.head = s;
		f.nhead = len < room ? len : room;
	} else if ((tc->flags & (TABLE_KEEP_END | TABLE_NAME)) && len > room && room > 3) {
		memset(&f, 0, sizeof(f));
		f.dots = true;
		f.ntail = room - 3;
		f.tail = s + len - f.ntail;
	} else {
		fit_middle(&f, s, len, room);
	}
	if (c->left) {
		outbuf_pad(b, indent);
		put_fitted(b, &f);
		if (!last)
			outbuf_pad(b, room - fitted_len(&f));
	} else {
		outbuf_pad(b, c->width - fitted_len(&f));
		put_fitted(b, &f);
	}
}

/*
 * The widest cell of every column, per indentation step of tree columns (1 and 2 blanks a
 * level): widest[i * 2 + step - 1].
 */
static void measure(const struct table *t, size_t *widest)
{
	size_t r, i;

	memset(widest, 0, t->ncols * 2 * sizeof(*widest));
	for (r = 0; r < t->nrows; r++) {
		if (t->rowflags[r] & TABLE_ROW_SEPARATOR)
			continue;
		for (i = 0; i < t->ncols; i++) {
			size_t len, *w = &widest[i * 2];

			if (!visible(&t->cols[i]))
				continue;
			len = table_cell_len(t, r, (int)i, true);
			if (t->cols[i].flags & TABLE_TREE) {
				if (len + indent_of(t->depth[r], 1) > w[0])
					w[0] = len + indent_of(t->depth[r], 1);
				len += indent_of(t->depth[r], 2);
			} else if (len > w[0]) {
				w[0] = len;
			}
			if (len > w[1])
				w[1] = len;
		}
	}
}

/*
 * Column widths for tree indentation step; false when a tree column had to be shortened.
 * Columns dropped[i] are left out; words splits headers at blanks too.
 */
static bool layout(const struct table *t, const size_t *widest, const bool *dropped,
		   struct text_col *cols, size_t *ncols, int *nlines, size_t width, int step,
		   bool words)
{
	size_t n = 0, i;
	bool fits = true;

	*nlines = 1;
	for (i = 0; i < t->ncols; i++) {
		struct text_col *c = &cols[n];
		size_t natural;
		int p;

		if (!visible(&t->cols[i]) || dropped[i])
			continue;
		memset(c, 0, sizeof(*c));
		c->col = (int)i;
		c->left = t->cols[i].type == TABLE_TEXT;
		split_header(c, t->cols[i].name, words);
		if (c->nparts > *nlines)
			*nlines = c->nparts;
		for (p = 0; p < c->nparts; p++)
			if (c->part_len[p] > c->minw)
				c->minw = c->part_len[p];
		c->width = c->minw;
		if (widest[i * 2 + (size_t)step - 1] > c->width)
			c->width = widest[i * 2 + (size_t)step - 1];
		natural = c->width;
		if (width == NO_LIMIT) {
			c->minw = c->width; /* nothing is shortened */
		} else if (t->cols[i].flags & TABLE_TREE) {
			/* Trees keep their shape longest: other columns shrink first. */
			if (c->minw < 40)
				c->minw = 40;
		} else if (t->cols[i].flags & TABLE_NAME) {
			/* Enough of a qualified name's end to tell rows apart. */
			if (c->minw < 30)
				c->minw = 30;
		} else if (t->cols[i].flags &
			   (TABLE_SHRINK | TABLE_CUT_END | TABLE_KEEP_END | TABLE_NAME)) {
			if (c->minw < 10)
				c->minw = 10;
		} else {
			c->minw = c->width;
		}
		if (c->minw > c->width)
			c->minw = c->width;
		c->natural = natural;
		n++;
	}
	fit_width(cols, n, width);
	for (i = 0; i < n; i++)
		if ((t->cols[cols[i].col].flags & TABLE_TREE) && cols[i].width < cols[i].natural)
			fits = false;
	*ncols = n;
	return fits;
}

/* A line of text, note or header part, ending the line. */
static void put_line(struct outbuf *b, const char *s)
{
	const char *nl;

	/* Every line loses its trailing blanks, notes with several lines too. */
	while ((nl = strchr(s, '\n'))) {
		outbuf_put(b, s, (size_t)(nl - s));
		outbuf_newline(b);
		s = nl + 1;
	}
	outbuf_puts(b, s);
	outbuf_newline(b);
}

/* The narrowest the columns can be: the sum of their minimum widths and the gaps. */
static size_t min_width(const struct text_col *cols, size_t n)
{
	size_t total = 0, i;

	for (i = 0; i < n; i++)
		total += cols[i].minw + (i ? GAP : 0);
	return total;
}

/* The rightmost column not yet dropped with one of flags, or -1. */
static int rightmost(const struct table *t, const bool *dropped, unsigned flags)
{
	size_t i;

	for (i = t->ncols; i-- > 0;)
		if ((t->cols[i].flags & flags) && visible(&t->cols[i]) && !dropped[i])
			return (int)i;
	return -1;
}

/*
 * While even the narrowest layout is too wide: leave out the percentages (TABLE_OPTIONAL),
 * then the details (TABLE_DETAIL), rightmost first, then split headers at blanks. Returns
 * whether headers split at blanks.
 */
static bool drop_optional(const struct table *t, const size_t *widest, bool *dropped,
			  struct text_col *cols, size_t width)
{
	size_t n;
	int nlines, i;

	for (;;) {
		layout(t, widest, dropped, cols, &n, &nlines, width, 1, false);
		if (min_width(cols, n) <= width)
			return false;
		if ((i = rightmost(t, dropped, TABLE_OPTIONAL)) < 0 &&
		    (i = rightmost(t, dropped, TABLE_DETAIL)) < 0)
			return true;
		dropped[i] = true;
	}
}

static void render(const struct table *t, struct outbuf *b, int width_arg)
{
	struct text_col *cols = calloc(t->ncols ? t->ncols : 1, sizeof(*cols));
	size_t *widest = calloc(t->ncols ? 2 * t->ncols : 1, sizeof(*widest));
	bool *dropped = calloc(t->ncols ? t->ncols : 1, sizeof(*dropped));
	size_t width = width_arg > 0 ? (size_t)width_arg : NO_LIMIT, n = 0, i, r;
	int nlines = 1, line, step = 2;
	bool words = false;

	if (!cols || !widest || !dropped) {
		b->failed = true;
		goto out;
	}
	measure(t, widest);
	if (width != NO_LIMIT)
		words = drop_optional(t, widest, dropped, cols, width);
	if (!layout(t, widest, dropped, cols, &n, &nlines, width, step, words))
		layout(t, widest, dropped, cols, &n, &nlines, width, step = 1, words);
	for (line = 0; line < nlines; line++) {
		for (i = 0; i < n; i++) {
			int p = cols[i].nparts - nlines + line;
			const char *s = p >= 0 ? cols[i].parts[p] : "";
			size_t len = p >= 0 ? cols[i].part_len[p] : 0;
			struct fitted f;

			fit_middle(&f, s, len, cols[i].width);
			if (i)
				outbuf_pad(b, GAP);
			if (!cols[i].left)
				outbuf_pad(b, cols[i].width - fitted_len(&f));
			put_fitted(b, &f);
			if (cols[i].left && i + 1 < n)
				outbuf_pad(b, cols[i].width - fitted_len(&f));
		}
		outbuf_newline(b);
	}
	for (i = 0; i < n; i++) {
		if (i)
			outbuf_pad(b, GAP);
		if (outbuf_grow(b, cols[i].width)) {
			memset(b->data + b->len, '-', cols[i].width);
			b->len += cols[i].width;
		}
	}
	outbuf_newline(b);
	for (r = 0; r < t->nrows; r++) {
		if (!(t->rowflags[r] & TABLE_ROW_SEPARATOR)) {
			for (i = 0; i < n; i++) {
				if (i)
					outbuf_pad(b, GAP);
				print_cell(b, t, r, &cols[i], step, i + 1 == n);
			}
		}
		outbuf_newline(b);
		outbuf_spill(b);
	}
	for (i = 0; i < t->nnotes; i++)
		put_line(b, t->notes[i]);
out:
	free(cols);
	free(widest);
	free(dropped);
}

/* Render into memory, written a megabyte at a time: no line ends in blanks. */
int table_render_text(const struct table *t, FILE *f, int width)
{
	struct outbuf b;
	int rc;

	outbuf_init(&b, f);
	render(t, &b, width);
	rc = outbuf_finish(&b);
	outbuf_release(&b);
	return rc;
}
