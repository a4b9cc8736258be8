/* SPDX-License-Identifier: MIT */
/* A result's files: who may read them (modes), creating one exactly so, opening one safely. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/result-dir.h"

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

/* fd, just opened O_NONBLOCK, if it is a regular file of at most max_size bytes (0: any). */
static int result_check_open(int fd, uint64_t max_size, struct stat *st)
{
	int errsv;

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

int result_open_file(const char *path, bool nofollow, uint64_t max_size, struct stat *st)
{
	int fd = open(path,
		      O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY | (nofollow ? O_NOFOLLOW : 0));

	return fd < 0 ? -errno : result_check_open(fd, max_size, st);
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

int result_open_beneath(int dirfd, const char *rel, uint64_t max_size, struct stat *st)
{
	const char *p = rel, *next;
	char name[NAME_MAX + 1];
	int cur = dirfd, fd = -1, errsv = 0;

	for (;;) {
		size_t len;

		while (*p == '/')
			p++;
		next = p + strcspn(p, "/");
		len = (size_t)(next - p);
		if (len >= sizeof(name)) {
			errsv = ENAMETOOLONG;
			break;
		}
		memcpy(name, p, len);
		name[len] = '\0';
		while (*next == '/')
			next++;
		if (!strcmp(name, "..")) {
			errsv = EXDEV;
			break;
		}
		if (!*next) {
			/* The file: no link, no FIFO waited on, a regular file only. */
			fd = *name ? openat(cur, name,
					    O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY |
						    O_NOFOLLOW)
				   : -1;
			errsv = *name ? errno : EISDIR;
			break;
		}
		if (!len || !strcmp(name, ".")) {
			p = next;
			continue;
		}
		fd = openat(cur, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		errsv = errno;
		if (cur != dirfd)
			close(cur);
		if (fd < 0)
			return -errsv;
		cur = fd;
		p = next;
	}
	if (cur != dirfd)
		close(cur);
	if (fd < 0 || !*name)
		return -errsv;
	return result_check_open(fd, max_size, st);
}

int result_dir_identity(const char *dir, char *buf, size_t size)
{
	struct statx sx;
	int w;

	if (statx(AT_FDCWD, dir, 0, STATX_BASIC_STATS | STATX_BTIME, &sx))
		return -errno;
	if (!S_ISDIR(sx.stx_mode))
		return -ENOTDIR;
	/* Without a birth time (some file systems) the rest still tells a copy. */
	if (!(sx.stx_mask & STATX_BTIME))
		sx.stx_btime.tv_sec = 0, sx.stx_btime.tv_nsec = 0;
	w = snprintf(buf, size, "%u:%u.%u:%llu:%lld.%09u", sx.stx_uid, sx.stx_dev_major,
		     sx.stx_dev_minor, (unsigned long long)sx.stx_ino,
		     (long long)sx.stx_btime.tv_sec, sx.stx_btime.tv_nsec);
	return w < 0 || (size_t)w >= size ? -ENAMETOOLONG : 0;
}
