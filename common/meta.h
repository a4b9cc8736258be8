/* SPDX-License-Identifier: MIT */
/* Collection metadata files: one "key=value" per line, written by pcollect, read by pfinalize. */
#ifndef PCOLLECT_COMMON_META_H
#define PCOLLECT_COMMON_META_H

#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

/*
 * Format (docs/result-dir.md): UTF-8 text, one entry per line, "key=value\n". Keys are
 * [a-z0-9_.-]+. In values, backslash, newline, carriage return and tab are written as \\, \n,
 * \r, \t; everything else as is. A key should not repeat (lists use argv.0, argv.1, ...);
 * when a file repeats one, the last value wins. Lines starting with '#' are comments; empty
 * lines are skipped.
 */
struct meta_entry {
	char *key;
	char *value;
};

struct meta {
	struct meta_entry *entries;
	size_t n, alloc;
};

void meta_init(struct meta *m);
void meta_release(struct meta *m);
/* Add or replace key. Copies both strings. Returns 0, -ENOMEM, or -EINVAL for a bad key. */
int meta_set(struct meta *m, const char *key, const char *value);
int meta_setf(struct meta *m, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* The value of key, or NULL. */
const char *meta_get(const struct meta *m, const char *key);
/*
 * Write all entries to path atomically (temporary file then rename), the file's mode exactly
 * mode (result_file_mode()). Returns 0 or -errno.
 */
int meta_write_file(const struct meta *m, const char *path, mode_t mode);
/*
 * Read path, adding its entries to m (replacing keys m already has). Only a regular file of at
 * most META_MAX_FILE bytes with lines of at most META_MAX_LINE bytes is read (a FIFO, a device
 * or a symbolic link is refused without blocking, result_open_file()). Returns 0 or -errno
 * (-EINVAL on a malformed line: no '=', a bad key, an unknown escape; -E2BIG for a line too
 * long; result_open_file()'s errors); on failure m is unchanged.
 */
#define META_MAX_FILE (16u << 20) /* bytes */
#define META_MAX_LINE (1u << 20)  /* bytes of one line: a command line of many arguments */
int meta_read_file(struct meta *m, const char *path);

#endif
