/* SPDX-License-Identifier: MIT */
/* The table views fill: columns, typed cells, tree depths, sorting. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
#include "report/bigmem.h"
#include "report/radix.h"
#include "report/table.h"

static char *table_strdup(struct table *t, const char *s)
{
	char *p = arena_strdup(&t->arena, s);

	if (!p)
		t->failed = true;
	return p;
}

void table_init(struct table *t)
{
	memset(t, 0, sizeof(*t));
}

void table_release(struct table *t)
{
	size_t i;

	for (i = 0; i < t->ncols; i++)
		free(t->cols[i].name);
	for (i = 0; i < t->nnotes; i++)
		free(t->notes[i]);
	arena_release(&t->arena);
	free(t->notes);
	free(t->cols);
	free(t->cells);
	free(t->depth);
	free(t->rowflags);
	memset(t, 0, sizeof(*t));
}

int table_add_col(struct table *t, const char *name, enum table_type type, unsigned flags)
{
	struct table_col *c;

	if (GROW(t->cols, t->ncols + 1, t->colcap)) {
		t->failed = true;
		return -1;
	}
	c = t->cols;
	c[t->ncols].name = strdup(name);
	c[t->ncols].type = type;
	c[t->ncols].flags = flags;
	if (!c[t->ncols].name)
		t->failed = true;
	return (int)t->ncols++;
}

int table_find_col(const struct table *t, const char *name)
{
	size_t i;

	for (i = 0; i < t->ncols; i++)
		if (!strcmp(t->cols[i].name, name))
			return (int)i;
	return -1;
}

/* Room for cap rows. Returns false (and sets failed) when memory runs out. */
static bool table_grow(struct table *t, size_t cap)
{
	/* The cells are the big array: on huge pages (report/bigmem.h). */
	struct table_cell *cells = big_realloc(t->cells, cap * t->ncols * sizeof(*cells));

	if (cells)
		t->cells = cells;
	if (!cells || GROW(t->depth, cap, t->depthcap) || GROW(t->rowflags, cap, t->flagcap)) {
		t->failed = true;
		return false;
	}
	t->cap = cap;
	return true;
}

void table_reserve(struct table *t, size_t rows)
{
	if (!t->failed && t->nrows + rows > t->cap)
		table_grow(t, t->nrows + rows);
}

size_t table_add_row(struct table *t, int depth)
{
	if (t->nrows == t->cap && !table_grow(t, t->cap ? 2 * t->cap : 64)) {
		/* Keep writing into the last row rather than crash; the caller sees failed. */
		return t->nrows ? t->nrows - 1 : 0;
	}
	memset(&t->cells[t->nrows * t->ncols], 0, t->ncols * sizeof(*t->cells));
	t->depth[t->nrows] = depth;
	t->rowflags[t->nrows] = 0;
	return t->nrows++;
}

void table_add_separator(struct table *t)
{
	size_t r = table_add_row(t, 0);

	if (!t->failed)
		t->rowflags[r] |= TABLE_ROW_SEPARATOR;
}

void table_set_row_flags(struct table *t, size_t row, unsigned flags)
{
	if (!t->failed && row < t->nrows)
		t->rowflags[row] |= (unsigned char)flags;
}

static struct table_cell *cell(struct table *t, size_t row, int col)
{
	if (t->failed || col < 0 || (size_t)col >= t->ncols || row >= t->nrows)
		return NULL;
	return &t->cells[row * t->ncols + (size_t)col];
}

void table_set_text(struct table *t, size_t row, int col, const char *s)
{
	struct table_cell *c = cell(t, row, col);

	if (c && s && (c->v.s = table_strdup(t, s)))
		c->set = true;
}

void table_set_text_ref(struct table *t, size_t row, int col, const char *s)
{
	struct table_cell *c = cell(t, row, col);

	if (c && s) {
		c->v.s = s;
		c->set = true;
	}
}

void table_set_int(struct table *t, size_t row, int col, int64_t v)
{
	struct table_cell *c = cell(t, row, col);

	if (c) {
		c->v.i = v;
		c->set = true;
	}
}

void table_set_time(struct table *t, size_t row, int col, int64_t ns)
{
	table_set_int(t, row, col, ns);
}

void table_set_pct(struct table *t, size_t row, int col, double pct)
{
	struct table_cell *c = cell(t, row, col);

	if (c) {
		c->v.d = pct;
		c->set = true;
	}
}

void table_add_note(struct table *t, const char *fmt, ...)
{
	va_list ap;

	if (GROW(t->notes, t->nnotes + 1, t->notecap)) {
		t->failed = true;
		return;
	}
	va_start(ap, fmt);
	if (vasprintf(&t->notes[t->nnotes], fmt, ap) < 0)
		t->failed = true;
	else
		t->nnotes++;
	va_end(ap);
}

/*
 * Sorting: the rows' order is found first, then the cells move once. Number columns sort
 * by radix on their values (times, counts, percentages); text columns, and percentages with
 * a NaN, by comparisons. Ties keep the rows' order.
 */
struct sort_key {
	union {
		int64_t i;
		double d;
		const char *s;
	} v;
	size_t row;
	int set;
};

static int key_cmp_tail(const struct sort_key *a, const struct sort_key *b)
{
	return a->row < b->row ? -1 : a->row > b->row;
}

static int key_cmp_int(const void *pa, const void *pb)
{
	const struct sort_key *a = pa, *b = pb;

	if (a->set != b->set)
		return a->set ? -1 : 1;
	if (a->set && a->v.i != b->v.i)
		return a->v.i > b->v.i ? -1 : 1;
	return key_cmp_tail(a, b);
}

static int key_cmp_pct(const void *pa, const void *pb)
{
	const struct sort_key *a = pa, *b = pb;

	if (a->set != b->set)
		return a->set ? -1 : 1;
	if (a->set && (a->v.d > b->v.d || a->v.d < b->v.d))
		return a->v.d > b->v.d ? -1 : 1;
	return key_cmp_tail(a, b);
}

static int key_cmp_text(const void *pa, const void *pb)
{
	const struct sort_key *a = pa, *b = pb;
	int r;

	if (a->set != b->set)
		return a->set ? -1 : 1;
	if (a->set && (r = strcmp(a->v.s, b->v.s)))
		return r;
	return key_cmp_tail(a, b);
}

/* Rows by a number column: set cells first, largest first, ties in row order. */
static int sort_rows_radix(const struct table *t, int col, struct sort_key *keys)
{
	struct radix_item *items = big_malloc(t->nrows * sizeof(*items));
	size_t i, n = 0, unset = 0;
	int rc;

	if (!items)
		return -ENOMEM;
	for (i = 0; i < t->nrows; i++) {
		const struct table_cell *c = &t->cells[i * t->ncols + (size_t)col];

		if (!c->set) {
			keys[unset++].row = i; /* parked at the front, moved to the end below */
			continue;
		}
		if (t->cols[col].type == TABLE_PCT && isnan(c->v.d)) {
			free(items);
			return -EINVAL; /* no order for NaN: the comparison sort decides */
		}
		items[n].key = t->cols[col].type == TABLE_PCT ? radix_key_desc_double(c->v.d)
							      : radix_key_desc_int(c->v.i);
		items[n++].val = i;
	}
	rc = radix_sort(items, n);
	if (!rc) {
		memmove(keys + n, keys, unset * sizeof(*keys));
		for (i = 0; i < n; i++)
			keys[i].row = items[i].val;
	}
	free(items);
	return rc;
}

/* Put row keys[i].row at row i for every i, in place: each cycle of the order moves once. */
static void permute_rows(struct table *t, struct sort_key *keys, struct table_cell *tmp)
{
	size_t w = t->ncols * sizeof(*t->cells), i, j, src;

	for (i = 0; i < t->nrows; i++) {
		if (keys[i].row == i)
			continue;
		memcpy(tmp, &t->cells[i * t->ncols], w);
		for (j = i; (src = keys[j].row) != i; j = src) {
			memcpy(&t->cells[j * t->ncols], &t->cells[src * t->ncols], w);
			keys[j].row = j;
		}
		memcpy(&t->cells[j * t->ncols], tmp, w);
		keys[j].row = j;
	}
}

void table_sort(struct table *t, int col)
{
	int (*cmp)(const void *, const void *);
	struct table_cell *tmp;
	struct sort_key *keys;
	size_t i;

	if (t->failed || col < 0 || (size_t)col >= t->ncols || t->nrows < 2)
		return;
	keys = big_malloc(t->nrows * sizeof(*keys));
	tmp = malloc(t->ncols * sizeof(*tmp));
	if (!keys || !tmp) {
		free(keys);
		free(tmp);
		return;
	}
	if (t->cols[col].type == TABLE_TEXT || sort_rows_radix(t, col, keys)) {
		for (i = 0; i < t->nrows; i++) {
			const struct table_cell *c = &t->cells[i * t->ncols + (size_t)col];

			keys[i].row = i;
			keys[i].set = c->set;
			keys[i].v.i = 0;
			if (!c->set)
				continue;
			if (t->cols[col].type == TABLE_TEXT)
				keys[i].v.s = c->v.s;
			else if (t->cols[col].type == TABLE_PCT)
				keys[i].v.d = c->v.d;
			else
				keys[i].v.i = c->v.i;
		}
		cmp = t->cols[col].type == TABLE_TEXT  ? key_cmp_text
		      : t->cols[col].type == TABLE_PCT ? key_cmp_pct
						       : key_cmp_int;
		qsort(keys, t->nrows, sizeof(*keys), cmp);
	}
	permute_rows(t, keys, tmp);
	free(tmp);
	free(keys);
}

void table_truncate(struct table *t, size_t n)
{
	size_t i, kept = 0;

	for (i = 0; i < t->nrows; i++) {
		if (t->rowflags[i] & (TABLE_ROW_SEPARATOR | TABLE_ROW_TEXT_ONLY))
			continue;
		if (kept++ == n) {
			t->nrows = i;
			return;
		}
	}
}

/* Decimal digits of v at the end of buf[0..TABLE_NUM_MAX); returns where they start. */
static char *digits(char *end, uint64_t v)
{
	do
		*--end = (char)('0' + v % 10);
	while (v /= 10);
	return end;
}

/*
 * pct with one decimal as printf's "%.1f" prints it, without printf: the nearest tenth,
 * computed in integers. Where one multiplication cannot decide (tenths within 1e-6 of a
 * rounding boundary; huge, negative zero and non-finite values), snprintf does it.
 */
static size_t format_pct(double pct, bool text, char *buf)
{
	char tmp[TABLE_NUM_MAX], *end = tmp + sizeof(tmp), *p = end;
	double a = pct < 0 ? -pct : pct, y, f;
	uint64_t tenths;
	size_t n;

	y = a * 10.0;
	if (!(y < 1e9) || (pct == 0 && signbit(pct)))
		return (size_t)snprintf(buf, TABLE_NUM_MAX, "%.1f%s", pct, text ? "%" : "");
	f = floor(y);
	if (y - f > 0.5 - 1e-6 && y - f < 0.5 + 1e-6)
		return (size_t)snprintf(buf, TABLE_NUM_MAX, "%.1f%s", pct, text ? "%" : "");
	tenths = (uint64_t)f + (y - f > 0.5);
	if (text)
		*--p = '%';
	*--p = (char)('0' + tenths % 10);
	*--p = '.';
	p = digits(p, tenths / 10);
	if (pct < 0)
		*--p = '-';
	n = (size_t)(end - p);
	memcpy(buf, p, n);
	buf[n] = '\0';
	return n;
}

/* Bytes as text reads them, in binary units: "512 B", "1.5 KiB", "12.3 MiB", "-2.0 GiB". */
static size_t format_bytes(int64_t v, char *buf)
{
	static const char *const units[] = { "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	uint64_t a = v < 0 ? -(uint64_t)v : (uint64_t)v;
	double x = (double)a;
	int u = -1;

	if (a < 1024)
		return (size_t)snprintf(buf, TABLE_NUM_MAX, "%lld B", (long long)v);
	while (x >= 1024 && u < 5) {
		x /= 1024;
		u++;
	}
	/* 1023.95 KiB rounds to "1024.0 KiB": say "1.0 MiB" instead. */
	if (x >= 1023.95 && u < 5) {
		x /= 1024;
		u++;
	}
	return (size_t)snprintf(buf, TABLE_NUM_MAX, "%s%.1f %s", v < 0 ? "-" : "", x, units[u]);
}

size_t table_cell_text(const struct table *t, size_t row, int col, bool text, char *buf,
		       const char **s)
{
	const struct table_cell *c = &t->cells[row * t->ncols + (size_t)col];
	char tmp[TABLE_NUM_MAX], *end = tmp + sizeof(tmp), *p = end;
	uint64_t u;
	size_t n;

	*s = buf;
	if (!c->set) {
		*buf = '\0';
		return 0;
	}
	switch (t->cols[col].type) {
	case TABLE_TEXT:
		*s = c->v.s;
		return strlen(c->v.s);
	case TABLE_TIME:
		/* Round half away from zero in integers so text and CSV agree digit for digit. */
		u = (c->v.i < 0 ? -(uint64_t)c->v.i : (uint64_t)c->v.i) + 500000;
		if (text)
			*--p = 's';
		p = digits(p, u / 1000000 % 1000 + 1000);
		*p = '.'; /* the 1 of 1000 keeps the leading zeros; it becomes the point */
		p = digits(p, u / 1000000000);
		if (c->v.i < 0)
			*--p = '-';
		break;
	case TABLE_PCT:
		return format_pct(c->v.d, text, buf);
	case TABLE_BYTES:
	case TABLE_INT:
		/* Text reads bytes in units; CSV and JSON give the exact number. */
		if (text && t->cols[col].type == TABLE_BYTES)
			return format_bytes(c->v.i, buf);
		u = c->v.i < 0 ? -(uint64_t)c->v.i : (uint64_t)c->v.i;
		p = digits(p, u);
		if (c->v.i < 0)
			*--p = '-';
		break;
	}
	n = (size_t)(end - p);
	memcpy(buf, p, n);
	buf[n] = '\0';
	return n;
}

/* Decimal digits of v. */
static size_t ndigits(uint64_t v)
{
	size_t n = 1;

	for (; v >= 10000; v /= 10000)
		n += 4;
	return n + (v >= 10) + (v >= 100) + (v >= 1000);
}

size_t table_cell_len(const struct table *t, size_t row, int col, bool text)
{
	const struct table_cell *c = &t->cells[row * t->ncols + (size_t)col];
	char num[TABLE_NUM_MAX];
	const char *s;
	uint64_t u;

	if (!c->set)
		return 0;
	switch (t->cols[col].type) {
	case TABLE_TEXT:
		return strlen(c->v.s);
	case TABLE_TIME:
		u = (c->v.i < 0 ? -(uint64_t)c->v.i : (uint64_t)c->v.i) + 500000;
		return (c->v.i < 0) + ndigits(u / 1000000000) + 4 + text;
	case TABLE_INT:
		u = c->v.i < 0 ? -(uint64_t)c->v.i : (uint64_t)c->v.i;
		return (c->v.i < 0) + ndigits(u);
	case TABLE_PCT:
	case TABLE_BYTES:
		break;
	}
	return table_cell_text(t, row, col, text, num, &s);
}

void table_format_cell(const struct table *t, size_t row, int col, bool text, char *buf,
		       size_t size)
{
	char num[TABLE_NUM_MAX];
	const char *s;
	size_t n = table_cell_text(t, row, col, text, num, &s);

	if (!size)
		return;
	if (n >= size)
		n = size - 1;
	memcpy(buf, s, n);
	buf[n] = '\0';
}

void table_shorten_middle(const char *s, size_t width, char *buf, size_t size)
{
	size_t len = strlen(s), head, tail;

	if (!size)
		return;
	if (len <= width || width < 5) {
		snprintf(buf, size, "%.*s", (int)(len <= width ? len : width), s);
		return;
	}
	head = (width - 3 + 1) / 2;
	tail = width - 3 - head;
	snprintf(buf, size, "%.*s...%s", (int)head, s, s + len - tail);
}
