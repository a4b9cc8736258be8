/* SPDX-License-Identifier: MIT */
/* The result directory's names: every path inside it, a raw stream's name, DIR's own name. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/result-dir.h"
#include "common/result-private.h"

/*
 * The path builder. Only async-signal-safe code from here up to result_short_hostname(): no
 * stdio, no malloc, no locale (the agent builds paths in its signal handler).
 */
struct pathbuf {
	char *buf;
	size_t size, len;
	bool overflow;
};

static void pathbuf_add_mem(struct pathbuf *p, const char *s, size_t n)
{
	if (p->overflow || n >= p->size - p->len) {
		p->overflow = true;
		return;
	}
	memcpy(p->buf + p->len, s, n);
	p->len += n;
	p->buf[p->len] = '\0';
}

static void pathbuf_add(struct pathbuf *p, const char *s)
{
	pathbuf_add_mem(p, s, strlen(s));
}

static void pathbuf_add_int(struct pathbuf *p, long long v)
{
	char digits[24];
	size_t i = sizeof(digits);
	/* Through unsigned so that the most negative value does not overflow. */
	unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;

	do {
		digits[--i] = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	if (v < 0)
		digits[--i] = '-';
	pathbuf_add_mem(p, digits + i, sizeof(digits) - i);
}

static bool is_hex(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f') ||
		      (*s >= 'A' && *s <= 'F')))
			return false;
	return true;
}

/* A single path component that climbs nowhere. */
static bool is_component(const char *s)
{
	return *s && !strchr(s, '/') && strcmp(s, ".") != 0 && strcmp(s, "..") != 0;
}

/* What follows "DIR/" in a path of each kind, in this order: head, fields, tail. */
enum layout_field {
	LAYOUT_ARCHIVE = 1 << 0, /* <build-id>/<last component of name> */
	LAYOUT_PID = 1 << 1,     /* <pid> */
	LAYOUT_TID = 1 << 2,     /* .<tid> */
	LAYOUT_NAME = 1 << 3,    /* .<name> when name != NULL: the exec generation ("x1") that
				    keeps the files of one pid apart across exec */
};

static const struct {
	const char *head;
	unsigned fields; /* enum layout_field */
	const char *tail;
} layout[] = {
	[RESULT_PATH_DIR] = { "", 0, "" },
	[RESULT_PATH_JOB] = { RESULT_JOB_FILE, 0, "" },
	[RESULT_PATH_META_DIR] = { "meta", 0, "" },
	[RESULT_PATH_META] = { "meta/", LAYOUT_PID, ".meta" },
	[RESULT_PATH_RAW_DIR] = { "raw", 0, "" },
	[RESULT_PATH_RAW] = { "raw/", LAYOUT_PID | LAYOUT_TID | LAYOUT_NAME, ".praw" },
	[RESULT_PATH_RAW_PROC] = { "raw/", LAYOUT_PID | LAYOUT_NAME, ".proc.praw" },
	[RESULT_PATH_RAW_MEM] = { "raw/", LAYOUT_PID | LAYOUT_NAME, ".pmem" },
	[RESULT_PATH_LOG_DIR] = { "log", 0, "" },
	[RESULT_PATH_LOG] = { "log/agent.", LAYOUT_PID, ".log" },
	[RESULT_PATH_ARCHIVE_DIR] = { "archive", 0, "" },
	[RESULT_PATH_ARCHIVE] = { "archive/", LAYOUT_ARCHIVE, "" },
	[RESULT_PATH_DB] = { "result.db", 0, "" },
	[RESULT_PATH_DB_TMP] = { ".result.db.tmp.", LAYOUT_PID, "" },
	[RESULT_PATH_JOB_TMP] = { RESULT_JOB_TMP_PREFIX, LAYOUT_PID, "" },
	[RESULT_PATH_DATA_USED] = { "log/.data-used", 0, "" },
};
_Static_assert(sizeof(layout) / sizeof(layout[0]) == RESULT_PATH_DATA_USED + 1,
	       "every result_path_kind has its layout");

int result_path(char *buf, size_t size, const char *dir, enum result_path_kind kind, pid_t pid,
		pid_t tid, const char *build_id, const char *name)
{
	struct pathbuf p = { .buf = buf, .size = size };
	const char *base = NULL;
	unsigned fields;
	size_t dlen;

	if (!buf || !size)
		return -ENAMETOOLONG;
	buf[0] = '\0';
	if (!dir || !*dir || (unsigned)kind >= sizeof(layout) / sizeof(layout[0]))
		return -EINVAL;
	fields = layout[kind].fields;
	if (fields & LAYOUT_NAME && name && !is_component(name))
		return -EINVAL;
	if (fields & LAYOUT_ARCHIVE) {
		if (!build_id || !is_hex(build_id) || !name)
			return -EINVAL;
		/* A path names its file by the last component: archive/<id>/libc.so.6. */
		base = strrchr(name, '/');
		base = base ? base + 1 : name;
		if (!is_component(base))
			return -EINVAL;
	}

	/* "res/" and "res" name the same directory; do not build "res//raw". */
	dlen = strlen(dir);
	while (dlen > 1 && dir[dlen - 1] == '/')
		dlen--;
	pathbuf_add_mem(&p, dir, dlen);
	if (kind != RESULT_PATH_DIR && dir[dlen - 1] != '/')
		pathbuf_add(&p, "/");
	pathbuf_add(&p, layout[kind].head);
	if (fields & LAYOUT_ARCHIVE) {
		pathbuf_add(&p, build_id);
		pathbuf_add(&p, "/");
		pathbuf_add(&p, base);
	}
	if (fields & LAYOUT_PID)
		pathbuf_add_int(&p, pid);
	if (fields & LAYOUT_TID) {
		pathbuf_add(&p, ".");
		pathbuf_add_int(&p, tid);
	}
	if (fields & LAYOUT_NAME && name) {
		pathbuf_add(&p, ".");
		pathbuf_add(&p, name);
	}
	pathbuf_add(&p, layout[kind].tail);
	if (p.overflow || p.len >= PATH_MAX) {
		buf[0] = '\0';
		return -ENAMETOOLONG;
	}
	return (int)p.len;
}

bool result_path_exists(const char *dir, enum result_path_kind kind)
{
	char path[PATH_MAX];
	struct stat st;

	if (result_path(path, sizeof(path), dir, kind, 0, 0, NULL, NULL) < 0)
		return false;
	return lstat(path, &st) == 0;
}

const char *result_path_split(const char *path, char *parent, size_t size)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		snprintf(parent, size, ".");
	else
		snprintf(parent, size, "%.*s", (int)(slash - path + (slash == path)), path);
	return slash ? slash + 1 : path;
}

/* A decimal number without sign or leading zero (but "0") at *s, up to a dot. */
static bool parse_num(const char **s, unsigned long long max, unsigned long long *out)
{
	const char *p = *s;
	unsigned long long v = 0;

	if (*p < '0' || *p > '9' || (*p == '0' && p[1] >= '0' && p[1] <= '9'))
		return false;
	for (; *p >= '0' && *p <= '9'; p++) {
		v = v * 10 + (unsigned)(*p - '0');
		if (v > max)
			return false;
	}
	*s = p;
	*out = v;
	return true;
}

int result_raw_name_parse(const char *path, struct result_raw_name *out)
{
	const char *s = strrchr(path, '/');
	unsigned long long v;

	s = s ? s + 1 : path;
	memset(out, 0, sizeof(*out));
	if (!parse_num(&s, INT_MAX, &v) || *s++ != '.')
		return -EINVAL;
	out->pid = (pid_t)v;
	if (!strcmp(s, "praw"))
		return -EINVAL;
	if (*s >= '0' && *s <= '9') {
		if (!parse_num(&s, INT_MAX, &v) || *s++ != '.')
			return -EINVAL;
		out->tid = (pid_t)v;
	} else if (strncmp(s, "proc.", 5) && *s != 'x') {
		return -EINVAL;
	}
	if (*s == 'x') {
		s++;
		if (!parse_num(&s, UINT32_MAX, &v) || *s++ != '.')
			return -EINVAL;
		out->generation = (uint32_t)v;
	}
	if (!out->tid) {
		if (strncmp(s, "proc.", 5))
			return -EINVAL;
		s += 5;
		out->process = true;
	}
	return strcmp(s, "praw") ? -EINVAL : 0;
}

const char *result_analysis_suffix(const char *analysis)
{
	static const struct {
		const char *analysis, *suffix;
	} map[] = {
		{ "hotspots", "hs" },
		{ "memory-consumption", "mc" },
		{ "threading", "tr" },
		{ "locksandwaits", "tr" },
	};
	size_t i;

	if (!analysis)
		return NULL;
	for (i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (!strcmp(map[i].analysis, analysis))
			return map[i].suffix;
	return NULL;
}

void result_short_hostname(char *buf, size_t size)
{
	const char *env = getenv("PCOLLECT_HOSTNAME");
	char host[256];
	size_t i;

	if (!size)
		return;
	if (env && *env) {
		snprintf(buf, size, "%s", env);
	} else {
		if (gethostname(host, sizeof(host)) || !host[0])
			snprintf(host, sizeof(host), "localhost");
		host[sizeof(host) - 1] = '\0';
		host[strcspn(host, ".")] = '\0';
		snprintf(buf, size, "%s", host);
	}
	/* The name becomes part of a path component. */
	for (i = 0; buf[i]; i++)
		if (buf[i] == '/')
			buf[i] = '_';
}

int result_dir_name(char *buf, size_t size, const char *r, const char *analysis)
{
	const char *suffix;
	long max = -1;
	DIR *d;
	struct dirent *e;
	int n;

	if (!size)
		return -ENAMETOOLONG;
	buf[0] = '\0';
	if (r) {
		size_t len = strlen(r);

		if (!len)
			return -EINVAL;
		while (len > 1 && r[len - 1] == '/')
			len--;
		if (result_in_parallel_job(NULL)) {
			char host[256];

			result_short_hostname(host, sizeof(host));
			n = snprintf(buf, size, "%.*s.%s", (int)len, r, host);
		} else {
			n = snprintf(buf, size, "%.*s", (int)len, r);
		}
		if (n < 0 || (size_t)n >= size) {
			buf[0] = '\0';
			return -ENAMETOOLONG;
		}
		return 0;
	}

	suffix = result_analysis_suffix(analysis);
	if (!suffix)
		suffix = "";
	/*
	 * One past the highest number in use by any analysis, as VTune does: numbers then sort
	 * in the order the results were collected, even after one is removed.
	 */
	d = opendir(".");
	if (!d)
		return -errno;
	while ((errno = 0, e = readdir(d))) {
		const char *p = e->d_name;
		char *end;
		long v;

		if (p[0] != 'r' || p[1] < '0' || p[1] > '9' || p[2] < '0' || p[2] > '9' ||
		    p[3] < '0' || p[3] > '9')
			continue;
		v = strtol(p + 1, &end, 10);
		if (v > max && v < 1000000)
			max = v;
	}
	if (errno) {
		int errsv = errno;

		closedir(d);
		return -errsv;
	}
	closedir(d);

	for (max++; max < 1000000; max++) {
		struct stat st;

		n = snprintf(buf, size, "r%03ld%s", max, suffix);
		if (n < 0 || (size_t)n >= size) {
			buf[0] = '\0';
			return -ENAMETOOLONG;
		}
		if (lstat(buf, &st) && errno == ENOENT)
			return 0;
	}
	buf[0] = '\0';
	return -EEXIST;
}
