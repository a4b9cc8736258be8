/* SPDX-License-Identifier: MIT */
/* Names made harmless where they are shown: a terminal, a spreadsheet, a line-based file. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "report/escape.h"

/*
 * The bytes at p as escape_write() writes them: n bytes of input that become *out_len bytes
 * of output, the escaped form in esc when it differs (NULL: copied as they are).
 */
static size_t escape_next(const unsigned char *p, const unsigned char *end, char *esc,
			  size_t *out_len, bool *escaped)
{
	static const char hex[] = "0123456789abcdef";
	size_t n = 1, i;

	*escaped = true;
	if (*p == '\n' || *p == '\r' || *p == '\t') {
		esc[0] = '\\';
		esc[1] = *p == '\n' ? 'n' : *p == '\r' ? 'r' : 't';
		*out_len = 2;
		return 1;
	}
	if (*p >= 0x20 && *p < 0x7f) {
		*escaped = false;
		*out_len = 1;
		return 1;
	}
	if (*p >= 0x80 && (n = outbuf_utf8_len(p, end)) &&
	    !(n == 2 && p[0] == 0xc2 && p[1] < 0xa0)) {
		*escaped = false;
		*out_len = n;
		return n;
	}
	/* A C0 control or DEL (n 1), a C1 control (n 2) or a byte that is not UTF-8 (n 0). */
	if (!n)
		n = 1;
	for (i = 0; i < n; i++) {
		esc[i * 4] = '\\';
		esc[i * 4 + 1] = 'x';
		esc[i * 4 + 2] = hex[p[i] >> 4];
		esc[i * 4 + 3] = hex[p[i] & 15];
	}
	*out_len = n * 4;
	return n;
}

size_t escape_len(const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + len;
	size_t total = 0, out;
	char esc[8];
	bool escaped;

	while (p < end) {
		p += escape_next(p, end, esc, &out, &escaped);
		total += out;
	}
	return total;
}

size_t escape_write(char *out, const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + len;
	char esc[8], *o = out;
	size_t n, w;
	bool escaped;

	while (p < end) {
		n = escape_next(p, end, esc, &w, &escaped);
		memcpy(o, escaped ? esc : (const char *)p, w);
		o += w;
		p += n;
	}
	*o = '\0';
	return (size_t)(o - out);
}

void escape_put(struct outbuf *b, const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + len, *run = p;
	size_t n, w;
	char esc[8];
	bool escaped;

	while (p < end) {
		n = escape_next(p, end, esc, &w, &escaped);
		if (escaped) {
			outbuf_put(b, (const char *)run, (size_t)(p - run));
			outbuf_put(b, esc, w);
			run = p + n;
		}
		p += n;
	}
	outbuf_put(b, (const char *)run, (size_t)(p - run));
}

/* "-12", "+1.5", "-2.5e-3": a number, which a spreadsheet reads as one and never runs. */
static bool plain_number(const char *s)
{
	bool digits = false;

	if (*s == '+' || *s == '-')
		s++;
	for (; *s >= '0' && *s <= '9'; s++)
		digits = true;
	if (*s == '.')
		for (s++; *s >= '0' && *s <= '9'; s++)
			digits = true;
	if (digits && (*s == 'e' || *s == 'E')) {
		s++;
		if (*s == '+' || *s == '-')
			s++;
		if (*s < '0' || *s > '9')
			return false;
		while (*s >= '0' && *s <= '9')
			s++;
	}
	return digits && !*s;
}

bool escape_csv_formula(const char *s)
{
	return s && strchr("=+-@\t\r", *s) && *s && !plain_number(s);
}

/* Whether s changes when shown; text: a text cell or header, which may be a formula. */
static bool changes(const char *s, bool text, unsigned how)
{
	size_t len = strlen(s);

	return ((how & ESCAPE_CONTROLS) && escape_len(s, len) != len) ||
	       ((how & ESCAPE_FORMULAS) && text && escape_csv_formula(s));
}

/* s as shown, in a; NULL when memory runs out. */
static const char *shown(struct arena *a, const char *s, bool text, unsigned how)
{
	size_t len = strlen(s), elen = how & ESCAPE_CONTROLS ? escape_len(s, len) : len;
	size_t quote = (how & ESCAPE_FORMULAS) && text && escape_csv_formula(s);
	char *tmp, *p;

	if (elen == len && !quote)
		return s;
	if (!(tmp = malloc(elen + 2)))
		return NULL;
	tmp[0] = '\'';
	if (how & ESCAPE_CONTROLS)
		escape_write(tmp + quote, s, len);
	else
		memcpy(tmp + quote, s, len + 1);
	p = arena_strdup(a, tmp);
	free(tmp);
	return p;
}

static bool cell_is_text(const struct table *t, size_t r, size_t i)
{
	return t->cols[i].type == TABLE_TEXT && t->cells[r * t->ncols + i].set;
}

static bool table_changes(const struct table *t, unsigned how)
{
	size_t i, r;

	for (i = 0; i < t->ncols; i++)
		if (changes(t->cols[i].name, true, how))
			return true;
	for (r = 0; r < t->nrows; r++)
		for (i = 0; i < t->ncols; i++)
			if (cell_is_text(t, r, i) &&
			    changes(t->cells[r * t->ncols + i].v.s, true, how))
				return true;
	for (i = 0; i < t->nnotes; i++)
		if (changes(t->notes[i], false, how))
			return true;
	return false;
}

int escape_table(const struct table *t, unsigned how, struct table *copy,
		 const struct table **shown_table)
{
	size_t i, r, ncells = t->nrows * t->ncols;

	memset(copy, 0, sizeof(*copy));
	*shown_table = t;
	if (!table_changes(t, how))
		return 0;
	*copy = *t;
	memset(&copy->arena, 0, sizeof(copy->arena));
	copy->cols = calloc(t->ncols ? t->ncols : 1, sizeof(*copy->cols));
	copy->cells = malloc((ncells ? ncells : 1) * sizeof(*copy->cells));
	copy->notes = calloc(t->nnotes ? t->nnotes : 1, sizeof(*copy->notes));
	if (!copy->cols || !copy->cells || !copy->notes)
		goto fail;
	if (ncells) /* a table of no rows may have no cells at all (t->cells NULL) */
		memcpy(copy->cells, t->cells, ncells * sizeof(*copy->cells));
	for (i = 0; i < t->ncols; i++) {
		copy->cols[i] = t->cols[i];
		/* Freed with the arena, never one by one: the copy is not table_release()d. */
		if (!(copy->cols[i].name = (char *)shown(&copy->arena, t->cols[i].name, true, how)))
			goto fail;
	}
	for (r = 0; r < t->nrows; r++)
		for (i = 0; i < t->ncols; i++)
			if (cell_is_text(t, r, i) &&
			    !(copy->cells[r * t->ncols + i].v.s =
				      shown(&copy->arena, t->cells[r * t->ncols + i].v.s, true,
					    how)))
				goto fail;
	for (i = 0; i < t->nnotes; i++)
		if (!(copy->notes[i] = (char *)shown(&copy->arena, t->notes[i], false, how)))
			goto fail;
	*shown_table = copy;
	return 0;
fail:
	escape_table_release(copy);
	*shown_table = t;
	return -ENOMEM;
}

void escape_table_release(struct table *copy)
{
	free(copy->cols);
	free(copy->cells);
	free(copy->notes);
	arena_release(&copy->arena);
	memset(copy, 0, sizeof(*copy));
}
