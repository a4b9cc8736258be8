/* SPDX-License-Identifier: MIT */
/* Unit tests of common/result-file.c: who may read a result's files, opening one safely. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/result-dir.h"
#include "tests/unit/result-fixture.h"
#include "tests/unit/unit.h"

/* Private by default whatever the umask; group-readable on request. */
static void test_result_file_modes(void)
{
	const char *priv = tmp_path(0, "mode-private"), *grp = tmp_path(1, "mode-group");
	char err[512], path[PATH_MAX];
	bool created;
	struct stat st;
	mode_t old = umask(0);
	int fd;

	CU_ASSERT_EQUAL_FATAL(result_dir_create(priv, RESULT_MODE_PRIVATE, &created, err,
						sizeof(err)),
			      0);
	umask(077);
	CU_ASSERT_EQUAL_FATAL(result_dir_create(grp, RESULT_MODE_GROUP, &created, err, sizeof(err)),
			      0);
	umask(old);
	CU_ASSERT(stat(priv, &st) == 0 && (st.st_mode & 0777) == 0700);
	result_path(path, sizeof(path), priv, RESULT_PATH_RAW_DIR, 0, 0, NULL, NULL);
	CU_ASSERT(stat(path, &st) == 0 && (st.st_mode & 0777) == 0700);
	result_path(path, sizeof(path), priv, RESULT_PATH_JOB, 0, 0, NULL, NULL);
	CU_ASSERT(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600);
	CU_ASSERT(stat(grp, &st) == 0 && (st.st_mode & 0777) == 0750);
	result_path(path, sizeof(path), grp, RESULT_PATH_META_DIR, 0, 0, NULL, NULL);
	CU_ASSERT(stat(path, &st) == 0 && (st.st_mode & 0777) == 0750);
	CU_ASSERT_EQUAL(result_file_mode(priv), 0600);
	CU_ASSERT_EQUAL(result_file_mode(grp), 0640);
	result_path(path, sizeof(path), grp, RESULT_PATH_DB, 0, 0, NULL, NULL);
	umask(077);
	fd = result_create_file(path, result_file_mode(grp));
	umask(old);
	CU_ASSERT_FATAL(fd >= 0);
	close(fd);
	CU_ASSERT(stat(path, &st) == 0 && (st.st_mode & 0777) == 0640);
	CU_ASSERT_EQUAL(result_create_file(path, 0600), -EEXIST);
}

/* Only regular files are read, without blocking, with the cause in words. */
static void test_result_file_open_file(void)
{
	const char *fifo = tmp_path(0, "a-fifo"), *link = tmp_path(1, "a-link");
	const char *big = tmp_path(2, "big-file");
	struct stat st;
	int fd;

	CU_ASSERT_FATAL(mkfifo(fifo, 0600) == 0);
	CU_ASSERT_EQUAL(result_open_file(fifo, true, 0, &st), -RESULT_ENOTREG);
	CU_ASSERT_EQUAL(result_open_file("/dev/zero", false, 0, &st), -RESULT_ENOTREG);
	CU_ASSERT_FATAL(symlink("/dev/zero", link) == 0);
	CU_ASSERT_EQUAL(result_open_file(link, true, 0, &st), -ELOOP);
	CU_ASSERT_EQUAL(result_open_file(link, false, 0, &st), -RESULT_ENOTREG);
	CU_ASSERT_EQUAL(result_open_file(fixture_dir, true, 0, &st), -EISDIR);
	touch(fixture_dir, "big-file");
	fd = open(big, O_WRONLY);
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT(ftruncate(fd, 4096) == 0);
	close(fd);
	CU_ASSERT_EQUAL(result_open_file(big, true, 4095, &st), -EFBIG);
	fd = result_open_file(big, true, 4096, &st);
	CU_ASSERT(fd >= 0 && st.st_size == 4096 && !(fcntl(fd, F_GETFL) & O_NONBLOCK));
	close(fd);
	CU_ASSERT(strstr(result_strerror(RESULT_ENOTREG), "not a regular file") != NULL);
	CU_ASSERT(strstr(result_strerror(ELOOP), "symbolic link") != NULL);
}

UNIT_MAIN("result-file", fixture_init, fixture_clean,
	  {
		  { "modes", test_result_file_modes },
		  { "open_file", test_result_file_open_file },
	  })
