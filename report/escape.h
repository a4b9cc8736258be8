/* SPDX-License-Identifier: MIT */
/* Names made harmless where they are shown: a terminal, a spreadsheet, a line-based file. */
#ifndef PCOLLECT_REPORT_ESCAPE_H
#define PCOLLECT_REPORT_ESCAPE_H

#include <stdbool.h>
#include <stddef.h>

#include "report/outbuf.h"
#include "report/table.h"

/*
 * A result's names are data from the profiled program or from whoever wrote the result: a
 * function named "\033]0;title\a" must not set the terminal's title, nor a newline end a
 * callgrind record. Escaped, the bytes a terminal or a line-based format acts on are written
 * as visible text: "\n", "\r", "\t", and "\xNN" for the other C0 controls, DEL, the C1
 * controls (U+0080 to U+009F, each of their two UTF-8 bytes) and bytes that are not UTF-8. A
 * backslash stays as it is. The length of s (len bytes) escaped; len when nothing changes.
 */
size_t escape_len(const char *s, size_t len);

/* s escaped into out (escape_len() + 1 bytes: the string ends with a NUL); its length. */
size_t escape_write(char *out, const char *s, size_t len);

/* s (len bytes) escaped onto b. */
void escape_put(struct outbuf *b, const char *s, size_t len);

/*
 * Whether a spreadsheet would take the CSV cell s as a formula (OWASP's rule: it starts with
 * '=', '+', '-', '@', a tab or a carriage return), a plain number such as "-1.5" excepted.
 */
bool escape_csv_formula(const char *s);

enum escape_table_how {
	ESCAPE_CONTROLS = 1 << 0, /* control characters escaped (escape_len()) */
	ESCAPE_FORMULAS = 1 << 1, /* text cells taken for formulas get a leading "'" */
};

/*
 * A table's text (headers, cells, notes) as a renderer may print it. Sets *shown to t when
 * nothing needs escaping, else to copy, a shallow copy of t with escaped strings that
 * escape_table_release() frees (t itself stays untouched and must outlive it). Returns 0 or
 * -ENOMEM.
 */
int escape_table(const struct table *t, unsigned how, struct table *copy,
		 const struct table **shown);
void escape_table_release(struct table *copy);

#endif
