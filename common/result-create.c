/* SPDX-License-Identifier: MIT */
/* Creating a result directory race-free: claimed by one job, joined by its ranks, else refused. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/io.h"
#include "common/log.h"
#include "common/result-dir.h"
#include "common/result-private.h"

/* How often a rank that finds the directory without its job file looks again. */
#define JOB_POLL_NS (10L * 1000 * 1000)

/* The subdirectories of a result, which result_dir_remove_empty() removes. */
static const struct {
	enum result_path_kind kind;
	bool made; /* by result_dir_create(); -archive makes archive/ when it copies a binary */
} subdirs[] = {
	{ RESULT_PATH_META_DIR, true },
	{ RESULT_PATH_RAW_DIR, true },
	{ RESULT_PATH_LOG_DIR, true },
	{ RESULT_PATH_ARCHIVE_DIR, false },
};
#define NSUBDIRS (sizeof(subdirs) / sizeof(subdirs[0]))

/* The message of every failure to create: rc (-errno) returned. */
static int create_error(char *err, size_t err_size, const char *path, int rc)
{
	err_set(err, err_size, "cannot create result directory '%s': %s", path, strerror(-rc));
	return rc;
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
		    !strncmp(e->d_name, RESULT_JOB_TMP_PREFIX, strlen(RESULT_JOB_TMP_PREFIX)))
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

/* Create path (O_EXCL) with exactly mode and write line into it. Returns 0 or -errno. */
static int write_new(const char *path, const char *line, size_t len, mode_t mode)
{
	int fd = result_create_file(path, mode), rc;

	if (fd < 0)
		return fd;
	rc = io_write_all(fd, line, len);
	if (close(fd) && !rc)
		rc = -errno;
	return rc;
}

/*
 * Claim dir for job id: write the id to a private file, then link() it to pcollect.job so
 * that the job file appears whole or not at all, and only one claimer wins.
 * Returns 0 when claimed, -EEXIST when someone else holds the claim, or -errno.
 */
static int job_claim(const char *dir, const char *id, mode_t mode)
{
	char path[PATH_MAX], tmp[PATH_MAX], line[512];
	int rc, len;

	if (result_path(path, sizeof(path), dir, RESULT_PATH_JOB, 0, 0, NULL, NULL) < 0 ||
	    result_path(tmp, sizeof(tmp), dir, RESULT_PATH_JOB_TMP, getpid(), 0, NULL, NULL) < 0)
		return -ENAMETOOLONG;
	len = snprintf(line, sizeof(line), "%s\n", id);
	if (len < 0 || (size_t)len >= sizeof(line))
		return -EINVAL;

	unlink(tmp); /* left by a crashed process that had our pid */
	rc = write_new(tmp, line, (size_t)len, mode);
	if (!rc && link(tmp, path)) {
		rc = -errno;
		/*
		 * No hard links here (some network and FUSE file systems). O_EXCL still makes
		 * one winner; readers wait for the final newline before trusting the content.
		 */
		if (rc == -EPERM || rc == -ENOSYS || rc == -EOPNOTSUPP || rc == -EMLINK)
			rc = write_new(path, line, (size_t)len, mode);
	}
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
	if (result_dir_is_result(dir) || result_path_exists(dir, RESULT_PATH_META_DIR))
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
	return create_error(err, err_size, dir, rc);
}

int result_dir_check_owner(const char *dir, const struct stat *st, char *err, size_t err_size)
{
	if (st->st_uid == geteuid())
		return 0;
	err_set(err, err_size,
		"result directory '%s' belongs to another user (uid %u), who could change it "
		"under us; choose another -r, or copy it and use the copy",
		dir, (unsigned)st->st_uid);
	return -EPERM;
}

/*
 * The subdirectory name of the result open as dfd: made (or found, made by a rank that
 * joined) without following a link, a directory of the caller's own, with dfd's mode.
 */
static int make_subdir(int dfd, const struct stat *st, const char *name, const char *path,
		       char *err, size_t err_size)
{
	struct stat sub;
	int fd, rc;

	/* Ranks that joined make the same subdirectories: EEXIST is success. */
	if (mkdirat(dfd, name, 0700) && errno != EEXIST)
		return create_error(err, err_size, path, -errno);
	fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return create_error(err, err_size, path, errno == ENOTDIR ? -ELOOP : -errno);
	if (fstat(fd, &sub))
		rc = create_error(err, err_size, path, -errno);
	else
		rc = result_dir_check_owner(path, &sub, err, err_size);
	/* The directory's own mode (a joined rank did not choose it), whatever the umask. */
	if (!rc && (sub.st_mode ^ st->st_mode) & 0777 && fchmod(fd, st->st_mode & 0777))
		rc = create_error(err, err_size, path, -errno);
	close(fd);
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
	char id[256], path[PATH_MAX];
	bool parallel = result_in_parallel_job(NULL);
	bool made = false;
	struct stat st;
	size_t i;
	int rc, dfd;

	if (created)
		*created = false;
	if (err && err_size)
		err[0] = '\0';
	if (!dir || !*dir)
		return create_error(err, err_size, "", -EINVAL);
	/* The longest path a collection makes in it must fit. */
	if (result_path(path, sizeof(path), dir, RESULT_PATH_RAW, INT_MAX, INT_MAX, NULL, NULL) < 0)
		return create_error(err, err_size, dir, -ENAMETOOLONG);
	result_job_id(id, sizeof(id));

	if (!mkdir(dir, result_dir_mode(mode)))
		made = true;
	else if (errno != EEXIST || stat(dir, &st))
		return create_error(err, err_size, dir, -errno);
	else if (!S_ISDIR(st.st_mode))
		return create_error(err, err_size, dir, -ENOTDIR);
	/*
	 * Another user's directory (made beforehand, mode 777) stays theirs to change: they
	 * could put a link in place of raw/ and have us create our files where they chose.
	 */
	else if ((rc = result_dir_check_owner(dir, &st, err, err_size)))
		return rc;
	if (created)
		*created = made;

	rc = join_existing(dir, id, parallel, made, wait_ns, mode, err, err_size);
	if (rc)
		return rc;

	/* From here on relative to the directory itself: a name swapped meanwhile is not used. */
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0 || fstat(dfd, &st)) {
		rc = -errno;
		if (dfd >= 0)
			close(dfd);
		return create_error(err, err_size, dir, rc);
	}
	if ((rc = result_dir_check_owner(dir, &st, err, err_size))) {
		close(dfd);
		return rc;
	}
	for (i = 0; i < NSUBDIRS && !rc; i++) {
		if (!subdirs[i].made)
			continue;
		result_path(path, sizeof(path), dir, subdirs[i].kind, 0, 0, NULL, NULL);
		rc = make_subdir(dfd, &st, strrchr(path, '/') + 1, path, err, err_size);
	}
	close(dfd);
	return rc;
}

void result_dir_remove_empty(const char *dir)
{
	char path[PATH_MAX];
	struct dirent *e;
	bool other = false;
	size_t i;
	DIR *d;

	if (!dir || !*dir)
		return;
	/* Look before removing anything, so that a directory with data is left whole. */
	for (i = 0; i < NSUBDIRS; i++) {
		int rc;

		if (result_path(path, sizeof(path), dir, subdirs[i].kind, 0, 0, NULL, NULL) < 0)
			return;
		rc = dir_is_empty(path);
		if (rc == 0 || (rc < 0 && rc != -ENOENT))
			return;
	}
	if (result_path_exists(dir, RESULT_PATH_DB))
		return;
	for (i = 0; i < NSUBDIRS; i++) {
		result_path(path, sizeof(path), dir, subdirs[i].kind, 0, 0, NULL, NULL);
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
		    strcmp(e->d_name, RESULT_JOB_FILE))
			other = true;
	closedir(d);
	if (other)
		return;
	if (result_path(path, sizeof(path), dir, RESULT_PATH_JOB, 0, 0, NULL, NULL) < 0)
		return;
	unlink(path);
	rmdir(dir);
}
