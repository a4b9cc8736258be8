/* SPDX-License-Identifier: MIT */
/* Collection metadata files: escaped key=value lines, written atomically, read strictly. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/grow.h"
#include "common/meta.h"
#include "common/result-dir.h"

void meta_init(struct meta *m)
{
	m->entries = NULL;
	m->n = 0;
	m->alloc = 0;
}

void meta_release(struct meta *m)
{
	size_t i;

	for (i = 0; i < m->n; i++)
		FREE_ALL(m->entries[i].key, m->entries[i].value);
	free(m->entries);
	meta_init(m);
}

static bool key_valid(const char *key, size_t len)
{
	size_t i;

	if (!len)
		return false;
	for (i = 0; i < len; i++) {
		char c = key[i];

		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
		      c == '-'))
			return false;
	}
	return true;
}

static struct meta_entry *meta_find(const struct meta *m, const char *key)
{
	size_t i;

	for (i = 0; i < m->n; i++)
		if (!strcmp(m->entries[i].key, key))
			return &m->entries[i];
	return NULL;
}

/* Takes ownership of value (freed on failure too). */
static int meta_set_owned(struct meta *m, const char *key, char *value)
{
	struct meta_entry *e = meta_find(m, key);
	char *k;

	if (e) {
		free(e->value);
		e->value = value;
		return 0;
	}
	if (GROW(m->entries, m->n + 1, m->alloc)) {
		free(value);
		return -ENOMEM;
	}
	k = strdup(key);
	if (!k) {
		free(value);
		return -ENOMEM;
	}
	m->entries[m->n].key = k;
	m->entries[m->n].value = value;
	m->n++;
	return 0;
}

int meta_set(struct meta *m, const char *key, const char *value)
{
	char *v;

	if (!key || !value || !key_valid(key, strlen(key)))
		return -EINVAL;
	v = strdup(value);
	if (!v)
		return -ENOMEM;
	return meta_set_owned(m, key, v);
}

int meta_setf(struct meta *m, const char *key, const char *fmt, ...)
{
	va_list ap;
	char *v;
	int n;

	if (!key || !key_valid(key, strlen(key)))
		return -EINVAL;
	va_start(ap, fmt);
	n = vasprintf(&v, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -ENOMEM;
	return meta_set_owned(m, key, v);
}

const char *meta_get(const struct meta *m, const char *key)
{
	const struct meta_entry *e = key ? meta_find(m, key) : NULL;

	return e ? e->value : NULL;
}

static void value_write(FILE *f, const char *v)
{
	for (; *v; v++) {
		switch (*v) {
		case '\\':
			fputs("\\\\", f);
			break;
		case '\n':
			fputs("\\n", f);
			break;
		case '\r':
			fputs("\\r", f);
			break;
		case '\t':
			fputs("\\t", f);
			break;
		default:
			putc(*v, f);
		}
	}
}

int meta_write_file(const struct meta *m, const char *path, mode_t mode)
{
	char *tmp = NULL;
	FILE *f = NULL;
	int fd = -1, rc = 0, tries;
	size_t i;

	if (asprintf(&tmp, "%s.tmp.%ld", path, (long)getpid()) < 0)
		return -ENOMEM;
	for (tries = 0; tries < 2; tries++) {
		fd = result_create_file(tmp, mode);
		if (fd >= 0 || fd != -EEXIST)
			break;
		/* Left by a crashed process that had our pid. */
		unlink(tmp);
	}
	if (fd < 0) {
		rc = fd;
		goto out;
	}
	f = fdopen(fd, "w");
	if (!f) {
		rc = -errno;
		close(fd);
		goto unlink;
	}
	for (i = 0; i < m->n; i++) {
		fputs(m->entries[i].key, f);
		putc('=', f);
		value_write(f, m->entries[i].value);
		putc('\n', f);
	}
	if (fflush(f) || ferror(f) || fsync(fileno(f))) {
		rc = errno ? -errno : -EIO;
		fclose(f);
		goto unlink;
	}
	if (fclose(f)) {
		rc = -errno;
		goto unlink;
	}
	if (rename(tmp, path)) {
		rc = -errno;
		goto unlink;
	}
	goto out;
unlink:
	unlink(tmp);
out:
	free(tmp);
	return rc;
}

/* Undo the escapes of value in place. Returns 0 or -EINVAL on an unknown escape. */
static int value_unescape(char *v)
{
	char *w = v;

	for (; *v; v++) {
		if (*v != '\\') {
			*w++ = *v;
			continue;
		}
		switch (*++v) {
		case '\\':
			*w++ = '\\';
			break;
		case 'n':
			*w++ = '\n';
			break;
		case 'r':
			*w++ = '\r';
			break;
		case 't':
			*w++ = '\t';
			break;
		default: /* includes a backslash at the end of the line */
			return -EINVAL;
		}
	}
	*w = '\0';
	return 0;
}

static int meta_parse_line(struct meta *m, char *line, size_t len)
{
	char *eq;
	char *v;

	if (len && line[len - 1] == '\n')
		line[--len] = '\0';
	/* A file edited on another system; a real carriage return is always escaped. */
	if (len && line[len - 1] == '\r')
		line[--len] = '\0';
	if (!len || line[0] == '#')
		return 0;
	if (strlen(line) != len)
		return -EINVAL; /* a NUL byte */
	eq = strchr(line, '=');
	if (!eq || !key_valid(line, (size_t)(eq - line)))
		return -EINVAL;
	*eq = '\0';
	if (value_unescape(eq + 1))
		return -EINVAL;
	v = strdup(eq + 1);
	if (!v)
		return -ENOMEM;
	return meta_set_owned(m, line, v);
}

int meta_read_file(struct meta *m, const char *path)
{
	struct meta parsed;
	struct stat st;
	char *line = NULL;
	size_t cap = 0, i, total = 0;
	ssize_t len;
	FILE *f;
	int fd, rc = 0;

	fd = result_open_file(path, true, META_MAX_FILE, &st);
	if (fd < 0)
		return fd;
	f = fdopen(fd, "re");
	if (!f) {
		rc = -errno;
		close(fd);
		return rc;
	}
	/* Parse into a scratch set so that a malformed file adds nothing to m. */
	meta_init(&parsed);
	errno = 0;
	while ((len = getline(&line, &cap, f)) >= 0) {
		/* Bounded even for a file that grows while it is read. */
		total += (size_t)len;
		if ((size_t)len > META_MAX_LINE || total > META_MAX_FILE) {
			rc = -E2BIG;
			goto out;
		}
		rc = meta_parse_line(&parsed, line, (size_t)len);
		if (rc)
			goto out;
		errno = 0;
	}
	if (ferror(f)) {
		rc = errno ? -errno : -EIO;
		goto out;
	}
	for (i = 0; i < parsed.n; i++) {
		rc = meta_set(m, parsed.entries[i].key, parsed.entries[i].value);
		if (rc)
			goto out;
	}
out:
	free(line);
	fclose(f);
	meta_release(&parsed);
	return rc;
}
