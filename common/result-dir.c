/* SPDX-License-Identifier: MIT */
/* The result directory: its name, its race-free creation, and every path inside it. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/grow.h"
#include "common/log.h"
#include "common/result-dir.h"

#define JOB_FILE "pcollect.job"
/* Written beside pcollect.job, then linked to it; ignored when checking for emptiness. */
#define JOB_TMP_PREFIX ".pcollect.job."
/* How often a rank that finds the directory without its job file looks again. */
#define JOB_POLL_NS (10L * 1000 * 1000)

/*
 * The path builder. Only async-signal-safe code below, up to result_analysis_suffix():
 * no stdio, no malloc, no locale.
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

int result_path(char *buf, size_t size, const char *dir, enum result_path_kind kind, pid_t pid,
		pid_t tid, const char *build_id, const char *name)
{
	struct pathbuf p = { .buf = buf, .size = size };
	size_t dlen;

	if (!buf || !size)
		return -ENAMETOOLONG;
	buf[0] = '\0';
	if (!dir || !*dir)
		return -EINVAL;
	/* "res/" and "res" name the same directory; do not build "res//raw". */
	dlen = strlen(dir);
	while (dlen > 1 && dir[dlen - 1] == '/')
		dlen--;
	pathbuf_add_mem(&p, dir, dlen);
	if (kind != RESULT_PATH_DIR && dir[dlen - 1] != '/')
		pathbuf_add(&p, "/");

	switch (kind) {
	case RESULT_PATH_DIR:
		break;
	case RESULT_PATH_JOB:
		pathbuf_add(&p, JOB_FILE);
		break;
	case RESULT_PATH_META_DIR:
		pathbuf_add(&p, "meta");
		break;
	case RESULT_PATH_META:
		pathbuf_add(&p, "meta/");
		pathbuf_add_int(&p, pid);
		pathbuf_add(&p, ".meta");
		break;
	case RESULT_PATH_RAW_DIR:
		pathbuf_add(&p, "raw");
		break;
	case RESULT_PATH_RAW:
		/* The exec generation ("x1") keeps the streams of one pid apart across exec. */
		if (name && !is_component(name))
			goto invalid;
		pathbuf_add(&p, "raw/");
		pathbuf_add_int(&p, pid);
		pathbuf_add(&p, ".");
		pathbuf_add_int(&p, tid);
		if (name) {
			pathbuf_add(&p, ".");
			pathbuf_add(&p, name);
		}
		pathbuf_add(&p, ".praw");
		break;
	case RESULT_PATH_RAW_PROC:
	case RESULT_PATH_RAW_MEM:
		/* a process image's files: <pid>[.xN].proc.praw, <pid>[.xN].pmem */
		if (name && !is_component(name))
			goto invalid;
		pathbuf_add(&p, "raw/");
		pathbuf_add_int(&p, pid);
		if (name) {
			pathbuf_add(&p, ".");
			pathbuf_add(&p, name);
		}
		pathbuf_add(&p, kind == RESULT_PATH_RAW_PROC ? ".proc.praw" : ".pmem");
		break;
	case RESULT_PATH_LOG_DIR:
		pathbuf_add(&p, "log");
		break;
	case RESULT_PATH_LOG:
		pathbuf_add(&p, "log/agent.");
		pathbuf_add_int(&p, pid);
		pathbuf_add(&p, ".log");
		break;
	case RESULT_PATH_ARCHIVE_DIR:
		pathbuf_add(&p, "archive");
		break;
	case RESULT_PATH_ARCHIVE: {
		const char *base;

		if (!build_id || !is_hex(build_id) || !name)
			goto invalid;
		/* A path names its file by the last component: archive/<id>/libc.so.6. */
		base = strrchr(name, '/');
		base = base ? base + 1 : name;
		if (!is_component(base))
			goto invalid;
		pathbuf_add(&p, "archive/");
		pathbuf_add(&p, build_id);
		pathbuf_add(&p, "/");
		pathbuf_add(&p, base);
		break;
	}
	case RESULT_PATH_DB:
		pathbuf_add(&p, "result.db");
		break;
	case RESULT_PATH_DB_TMP:
		pathbuf_add(&p, ".result.db.tmp.");
		pathbuf_add_int(&p, pid);
		break;
	case RESULT_PATH_JOB_TMP:
		pathbuf_add(&p, JOB_TMP_PREFIX);
		pathbuf_add_int(&p, pid);
		break;
	case RESULT_PATH_DATA_USED:
		pathbuf_add(&p, "log/.data-used");
		break;
	default:
		goto invalid;
	}
	if (p.overflow || p.len >= PATH_MAX) {
		buf[0] = '\0';
		return -ENAMETOOLONG;
	}
	return (int)p.len;
invalid:
	buf[0] = '\0';
	return -EINVAL;
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

mode_t result_dir_mode(enum result_mode m)
{
	return m == RESULT_MODE_GROUP ? 0750 : 0700;
}

mode_t result_file_mode_of(enum result_mode m)
{
	return m == RESULT_MODE_GROUP ? 0640 : 0600;
}

mode_t result_file_mode(const char *dir)
{
	struct stat st;

	if (dir && !stat(dir, &st) && (st.st_mode & S_IRGRP))
		return result_file_mode_of(RESULT_MODE_GROUP);
	return result_file_mode_of(RESULT_MODE_PRIVATE);
}

int result_create_file(const char *path, mode_t mode)
{
	int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode);

	if (fd < 0)
		return -errno;
	/* Exactly mode, whatever the umask. */
	if (fchmod(fd, mode)) {
		int errsv = errno;

		close(fd);
		unlink(path);
		return -errsv;
	}
	return fd;
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

static const char *const rank_vars[] = {
	"PMI_RANK",
	"PMIX_RANK",
	"OMPI_COMM_WORLD_RANK",
	"SLURM_PROCID",
};

/* A variable's value as a number from 0 to INT_MAX, or -1. */
static long env_count(const char *name)
{
	const char *v = getenv(name);
	char *end;
	long r;

	if (!v || !*v)
		return -1;
	errno = 0;
	r = strtol(v, &end, 10);
	return !*end && !errno && r >= 0 && r <= INT_MAX ? r : -1;
}

bool result_job_rank_size(int *rank, int *size)
{
	static const char *const vars[][2] = {
		{ "PMI_RANK", "PMI_SIZE" },
		{ "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE" },
		{ "SLURM_PROCID", "SLURM_NTASKS" },
		{ "PMIX_RANK", "PMIX_SIZE" },
	};
	size_t i;

	for (i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
		long r = env_count(vars[i][0]), n = env_count(vars[i][1]);

		if (r >= 0 && n > r) {
			*rank = (int)r;
			*size = (int)n;
			return true;
		}
	}
	return false;
}

bool result_in_parallel_job(int *rank)
{
	size_t i;

	if (rank)
		*rank = -1;
	for (i = 0; i < sizeof(rank_vars) / sizeof(rank_vars[0]); i++) {
		const char *v = getenv(rank_vars[i]);
		char *end;
		long r;

		if (!v || !*v)
			continue;
		errno = 0;
		r = strtol(v, &end, 10);
		if (rank && !*end && !errno && r >= 0 && r <= INT_MAX)
			*rank = (int)r;
		return true;
	}
	return false;
}

static void job_id_append(char *buf, size_t size, const char *kind, const char *a, const char *b)
{
	size_t len = strlen(buf);

	if (len >= size)
		return;
	snprintf(buf + len, size - len, "%s%s:%s%s%s", len ? "," : "", kind, a, b ? "." : "",
		 b ? b : "");
}

void result_job_id(char *buf, size_t size)
{
	const char *slurm_job = getenv("SLURM_JOB_ID");
	const char *slurm_step = getenv("SLURM_STEP_ID");
	const char *pmix = getenv("PMIX_NAMESPACE");
	const char *ompi = getenv("OMPI_MCA_ess_base_jobid");
	char ppid[32];

	if (!size)
		return;
	buf[0] = '\0';
	/*
	 * Every identity that is set, not only the first: two mpirun in one Slurm allocation
	 * share SLURM_JOB_ID but not PMIX_NAMESPACE, and must not share a directory.
	 */
	if (slurm_job && *slurm_job)
		job_id_append(buf, size, "slurm", slurm_job,
			      slurm_step && *slurm_step ? slurm_step : NULL);
	if (pmix && *pmix)
		job_id_append(buf, size, "pmix", pmix, NULL);
	if (ompi && *ompi)
		job_id_append(buf, size, "ompi", ompi, NULL);
	if (!buf[0]) {
		snprintf(ppid, sizeof(ppid), "%ld", (long)getppid());
		job_id_append(buf, size, "ppid", ppid, NULL);
	}
	/* The id is one line of pcollect.job. */
	buf[strcspn(buf, "\n")] = '\0';
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

static bool path_exists(const char *dir, enum result_path_kind kind)
{
	char path[PATH_MAX];
	struct stat st;

	if (result_path(path, sizeof(path), dir, kind, 0, 0, NULL, NULL) < 0)
		return false;
	return lstat(path, &st) == 0;
}

bool result_dir_is_result(const char *dir)
{
	return path_exists(dir, RESULT_PATH_RAW_DIR) || path_exists(dir, RESULT_PATH_DB);
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void result_dir_list_free(char **list, size_t n)
{
	size_t i;

	for (i = 0; list && i < n; i++)
		free(list[i]);
	free(list);
}

int result_dir_job_parts(const char *dir, char ***out, size_t *nout)
{
	char parent[PATH_MAX], prefix[NAME_MAX + 2], path[PATH_MAX];
	const char *slash;
	char **names = NULL;
	size_t n = 0, cap = 0, plen;
	struct dirent *e;
	int ret = 0;
	DIR *d;

	*out = NULL;
	*nout = 0;
	snprintf(path, sizeof(path), "%s", dir);
	while (strlen(path) > 1 && path[strlen(path) - 1] == '/')
		path[strlen(path) - 1] = '\0';
	slash = strrchr(path, '/');
	if (slash)
		snprintf(parent, sizeof(parent), "%.*s", (int)(slash - path + (slash == path)),
			 path);
	else
		snprintf(parent, sizeof(parent), ".");
	if (snprintf(prefix, sizeof(prefix), "%s.", slash ? slash + 1 : path) >=
	    (int)sizeof(prefix))
		return 0;
	plen = strlen(prefix);
	d = opendir(parent);
	if (!d)
		return 0;
	while ((e = readdir(d))) {
		char full[PATH_MAX * 2];

		if (strncmp(e->d_name, prefix, plen) || !e->d_name[plen])
			continue;
		snprintf(full, sizeof(full), "%s/%s", parent, e->d_name);
		if (!result_dir_is_result(full))
			continue;
		if (array_reserve(&names, &cap, n + 1, sizeof(*names)) ||
		    !(names[n] = strdup(slash ? full : e->d_name))) {
			ret = -ENOMEM;
			break;
		}
		n++;
	}
	closedir(d);
	if (ret) {
		result_dir_list_free(names, n);
		return ret;
	}
	if (n)
		qsort(names, n, sizeof(*names), name_cmp);
	*out = names;
	*nout = n;
	return 0;
}

size_t result_dir_host_variants(const char *dir, char *buf, size_t size)
{
	char **names;
	size_t n, i, len = 0;

	if (size)
		buf[0] = '\0';
	if (result_dir_job_parts(dir, &names, &n))
		return 0;
	for (i = 0; i < n; i++) {
		if (i < 10 && len < size)
			len += (size_t)snprintf(buf + len, size - len, "%s%s", i ? ", " : "",
						names[i]);
		else if (i == 10 && len < size)
			len += (size_t)snprintf(buf + len, size - len, ", ...");
	}
	result_dir_list_free(names, n);
	return n;
}

static bool dir_holds_data(const char *dir)
{
	return result_dir_is_result(dir) || path_exists(dir, RESULT_PATH_META_DIR);
}

/* 1 when dir holds nothing but half-written job files, 0 when it holds more, or -errno. */
static int dir_is_empty(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int rc = 1;

	if (!d)
		return -errno;
	while ((errno = 0, e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") ||
		    !strncmp(e->d_name, JOB_TMP_PREFIX, strlen(JOB_TMP_PREFIX)))
			continue;
		rc = 0;
		break;
	}
	if (rc && errno)
		rc = -errno;
	closedir(d);
	return rc;
}

/*
 * Read the job file into buf. Returns 1 when it holds a whole line, 0 when it does not exist
 * yet (or is still being written by a claimer that could not use link()), or -errno.
 */
static int job_read(const char *dir, char *buf, size_t size)
{
	char path[PATH_MAX];
	ssize_t n;
	size_t len = 0;
	int fd;

	if (result_path(path, sizeof(path), dir, RESULT_PATH_JOB, 0, 0, NULL, NULL) < 0)
		return -ENAMETOOLONG;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	while (len + 1 < size && (n = read(fd, buf + len, size - 1 - len)) != 0) {
		if (n < 0) {
			int errsv = errno;

			if (errsv == EINTR)
				continue;
			close(fd);
			return -errsv;
		}
		len += (size_t)n;
	}
	close(fd);
	buf[len] = '\0';
	if (!len || buf[len - 1] != '\n')
		return 0;
	buf[len - 1] = '\0';
	return 1;
}

static int write_all(int fd, const char *s, size_t len)
{
	while (len) {
		ssize_t n = write(fd, s, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		s += n;
		len -= (size_t)n;
	}
	return 0;
}

/*
 * Claim dir for job id: write the id to a private file, then link() it to pcollect.job so
 * that the job file appears whole or not at all, and only one claimer wins.
 * Returns 0 when claimed, -EEXIST when someone else holds the claim, or -errno.
 */
static int job_claim(const char *dir, const char *id, mode_t mode)
{
	char path[PATH_MAX], tmp[PATH_MAX], line[512];
	int fd, rc, len;

	if (result_path(path, sizeof(path), dir, RESULT_PATH_JOB, 0, 0, NULL, NULL) < 0 ||
	    result_path(tmp, sizeof(tmp), dir, RESULT_PATH_JOB_TMP, getpid(), 0, NULL, NULL) < 0)
		return -ENAMETOOLONG;
	len = snprintf(line, sizeof(line), "%s\n", id);
	if (len < 0 || (size_t)len >= sizeof(line))
		return -EINVAL;

	unlink(tmp); /* left by a crashed process that had our pid */
	fd = result_create_file(tmp, mode);
	if (fd < 0)
		return fd;
	rc = write_all(fd, line, (size_t)len);
	if (close(fd) && !rc)
		rc = -errno;
	if (rc)
		goto out;
	if (link(tmp, path) == 0)
		goto out;
	rc = -errno;
	if (rc == -EPERM || rc == -ENOSYS || rc == -EOPNOTSUPP || rc == -EMLINK) {
		/*
		 * No hard links here (some network and FUSE file systems). O_EXCL still makes
		 * one winner; readers wait for the final newline before trusting the content.
		 */
		fd = result_create_file(path, mode);
		if (fd < 0) {
			rc = fd;
			goto out;
		}
		rc = write_all(fd, line, (size_t)len);
		if (close(fd) && !rc)
			rc = -errno;
	}
out:
	unlink(tmp);
	return rc;
}

static long long now_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* True when dir was changed during the last wait_ns, so a claimer may be at work. */
static bool dir_recent(const char *dir, long long wait_ns)
{
	struct stat st;
	long long mtime;

	if (stat(dir, &st))
		return false;
	mtime = (long long)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
	/* Also a time in the future (clock skew on a network file system) counts as recent. */
	return now_ns(CLOCK_REALTIME) - mtime < wait_ns;
}

static void sleep_ns(long ns)
{
	struct timespec ts = { .tv_sec = 0, .tv_nsec = ns };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static int refuse_existing(const char *dir, char *err, size_t err_size)
{
	if (dir_holds_data(dir))
		err_set(err, err_size,
			"result directory '%s' already holds collected data; choose another -r "
			"or remove it",
			dir);
	else
		err_set(err, err_size,
			"result directory '%s' is not empty; choose another -r or remove it", dir);
	return -EEXIST;
}

/*
 * Claim dir (made tells whether this process just made it) or decide whether to join it.
 * Returns 0 to go on (claimed or joined), or -errno with err set.
 */
static int join_existing(const char *dir, const char *id, bool parallel, bool made,
			 long long wait_ns, enum result_mode mode, char *err, size_t err_size)
{
	long long deadline = now_ns(CLOCK_MONOTONIC) + wait_ns;
	char held[512];
	int rc;

	for (;;) {
		rc = job_read(dir, held, sizeof(held));
		if (rc < 0)
			goto fail;
		if (rc > 0) {
			if (parallel && !strcmp(held, id))
				return 0;
			return refuse_existing(dir, err, err_size);
		}

		/* No job file (yet). */
		rc = made ? 1 : dir_is_empty(dir);
		if (rc < 0)
			goto fail;
		if (!made && !rc && !parallel)
			return refuse_existing(dir, err, err_size);
		/*
		 * A rank that made the directory a moment ago is about to write the job file: wait
		 * for it rather than race it, unless the directory has been quiet long enough to
		 * be one the user made (an empty one is used). Outside a parallel job nobody
		 * can be joined: claim at once, and the loser of a race is refused.
		 */
		if (made || !parallel || (rc && !dir_recent(dir, wait_ns)) ||
		    now_ns(CLOCK_MONOTONIC) >= deadline) {
			if (!rc)
				return refuse_existing(dir, err, err_size);
			rc = job_claim(dir, id, result_file_mode_of(mode));
			if (rc == 0) {
				/* Ours now: exactly the result's mode, whatever the umask. */
				if (chmod(dir, result_dir_mode(mode))) {
					rc = -errno;
					goto fail;
				}
				return 0;
			}
			if (rc != -EEXIST)
				goto fail;
			/* Lost the claim: read the winner's id on the next turn. */
			made = false;
			deadline = now_ns(CLOCK_MONOTONIC) + wait_ns;
			continue;
		}
		sleep_ns(JOB_POLL_NS);
	}
fail:
	err_set(err, err_size, "cannot create result directory '%s': %s", dir, strerror(-rc));
	return rc;
}

int result_dir_create(const char *dir, enum result_mode mode, bool *created, char *err,
		      size_t err_size)
{
	return result_dir_create_timed(dir, mode, RESULT_DIR_JOB_WAIT_NS, created, err, err_size);
}

int result_dir_create_timed(const char *dir, enum result_mode mode, long long wait_ns,
			    bool *created, char *err, size_t err_size)
{
	static const enum result_path_kind subdirs[] = {
		RESULT_PATH_META_DIR,
		RESULT_PATH_RAW_DIR,
		RESULT_PATH_LOG_DIR,
	};
	char id[256], path[PATH_MAX];
	bool parallel = result_in_parallel_job(NULL);
	bool made = false;
	struct stat st, sub;
	size_t i;
	int rc;

	if (created)
		*created = false;
	if (err && err_size)
		err[0] = '\0';
	if (!dir || !*dir) {
		err_set(err, err_size, "cannot create result directory '': %s", strerror(EINVAL));
		return -EINVAL;
	}
	if (result_path(path, sizeof(path), dir, RESULT_PATH_RAW, INT_MAX, INT_MAX, NULL, NULL) <
	    0) {
		err_set(err, err_size, "cannot create result directory '%s': %s", dir,
			strerror(ENAMETOOLONG));
		return -ENAMETOOLONG;
	}
	result_job_id(id, sizeof(id));

	if (mkdir(dir, result_dir_mode(mode)) == 0) {
		made = true;
		if (created)
			*created = true;
	} else if (errno != EEXIST) {
		rc = -errno;
		err_set(err, err_size, "cannot create result directory '%s': %s", dir,
			strerror(-rc));
		return rc;
	} else if (stat(dir, &st)) {
		rc = -errno;
		err_set(err, err_size, "cannot create result directory '%s': %s", dir,
			strerror(-rc));
		return rc;
	} else if (!S_ISDIR(st.st_mode)) {
		err_set(err, err_size, "cannot create result directory '%s': %s", dir,
			strerror(ENOTDIR));
		return -ENOTDIR;
	}

	rc = join_existing(dir, id, parallel, made, wait_ns, mode, err, err_size);
	if (rc)
		return rc;

	for (i = 0; i < sizeof(subdirs) / sizeof(subdirs[0]); i++) {
		result_path(path, sizeof(path), dir, subdirs[i], 0, 0, NULL, NULL);
		/* Ranks that joined make the same subdirectories: EEXIST is success. */
		if (mkdir(path, 0700) && errno != EEXIST) {
			rc = -errno;
			err_set(err, err_size, "cannot create result directory '%s': %s", path,
				strerror(-rc));
			return rc;
		}
		/* The directory's own mode (a joined rank did not choose it), whatever the umask.
		 */
		if (!stat(dir, &st) && (!stat(path, &sub) || errno == ENOENT) &&
		    ((sub.st_mode & 0777) == (st.st_mode & 0777) ||
		     !chmod(path, st.st_mode & 0777)))
			continue;
		rc = -errno;
		err_set(err, err_size, "cannot create result directory '%s': %s", path,
			strerror(-rc));
		return rc;
	}
	return 0;
}

void result_dir_remove_empty(const char *dir)
{
	static const enum result_path_kind subdirs[] = {
		RESULT_PATH_META_DIR,
		RESULT_PATH_RAW_DIR,
		RESULT_PATH_LOG_DIR,
		RESULT_PATH_ARCHIVE_DIR,
	};
	char path[PATH_MAX];
	struct dirent *e;
	bool other = false;
	size_t i;
	DIR *d;

	if (!dir || !*dir)
		return;
	/* Look before removing anything, so that a directory with data is left whole. */
	for (i = 0; i < sizeof(subdirs) / sizeof(subdirs[0]); i++) {
		int rc;

		if (result_path(path, sizeof(path), dir, subdirs[i], 0, 0, NULL, NULL) < 0)
			return;
		rc = dir_is_empty(path);
		if (rc == 0 || (rc < 0 && rc != -ENOENT))
			return;
	}
	if (path_exists(dir, RESULT_PATH_DB))
		return;
	for (i = 0; i < sizeof(subdirs) / sizeof(subdirs[0]); i++) {
		result_path(path, sizeof(path), dir, subdirs[i], 0, 0, NULL, NULL);
		/* rmdir() refuses a directory that got a file meanwhile: it stays. */
		if (rmdir(path) && errno != ENOENT)
			return;
	}
	/* Only the job file may be left; unlink it only when the directory then goes too. */
	d = opendir(dir);
	if (!d)
		return;
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") &&
		    strcmp(e->d_name, JOB_FILE))
			other = true;
	closedir(d);
	if (other)
		return;
	if (result_path(path, sizeof(path), dir, RESULT_PATH_JOB, 0, 0, NULL, NULL) < 0)
		return;
	unlink(path);
	rmdir(dir);
}

int result_open_file(const char *path, bool nofollow, uint64_t max_size, struct stat *st)
{
	int fd = open(path,
		      O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY | (nofollow ? O_NOFOLLOW : 0));
	int errsv;

	if (fd < 0)
		return -errno;
	if (fstat(fd, st)) {
		errsv = errno;
		close(fd);
		return -errsv;
	}
	if (!S_ISREG(st->st_mode)) {
		close(fd);
		return S_ISDIR(st->st_mode) ? -EISDIR : -RESULT_ENOTREG;
	}
	if (max_size && (uint64_t)st->st_size > max_size) {
		close(fd);
		return -EFBIG;
	}
	/* A regular file ignores O_NONBLOCK; clear it all the same for whoever reads on. */
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	return fd;
}

const char *result_strerror(int errnum)
{
	switch (errnum) {
	case RESULT_ENOTREG:
		return "not a regular file (a FIFO or a device is not read)";
	case ELOOP:
		return "a symbolic link (not followed)";
	case EFBIG:
		return "file too large";
	default:
		return strerror(errnum);
	}
}
