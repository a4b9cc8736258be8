/* SPDX-License-Identifier: MIT */
/* A result's files: who may read them (modes), creating one exactly so, opening one safely. */
#include <errno.h>
#include <fcntl.h>
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
