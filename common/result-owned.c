/* SPDX-License-Identifier: MIT */
/* Whether a path to write names a file a result owns: reports never write over their input. */
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

/* The entries of a result directory the tools make, and what each is (for the message). */
static const struct {
	const char *name;
	bool prefix; /* name is a prefix: temporary files with a pid after it */
	const char *what;
} owned[] = {
	{ "result.db", false, "the database (result.db)" },
	{ "result.db-", true, "a journal of the database" },
	{ ".result.db.tmp.", true, "a database pfinalize is writing" },
	{ "raw", false, "the raw streams (raw/)" },
	{ "meta", false, "the collection metadata (meta/)" },
	{ "log", false, "the logs (log/)" },
	{ "archive", false, "the archived binaries (archive/)" },
	{ "source-cache", false, "the source cache (source-cache/)" },
	{ "snapshots", false, "the snapshots (snapshots/, pcollect -command snapshot)" },
	{ RESULT_JOB_FILE, false, "the job file (pcollect.job)" },
	{ RESULT_JOB_TMP_PREFIX, true, "a job file being written" },
};

static const char *owned_entry(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(owned) / sizeof(owned[0]); i++)
		if (owned[i].prefix ? !strncmp(name, owned[i].name, strlen(owned[i].name))
				    : !strcmp(name, owned[i].name))
			return owned[i].what;
	return NULL;
}

/*
 * The file open(path, O_WRONLY | O_CREAT) would write: symbolic links followed, also one
 * that leads to a file not there yet (open() would create it), at most 40 of them.
 */
static int write_target(const char *path, char *out, size_t size)
{
	char cur[PATH_MAX], link[PATH_MAX];
	struct stat st;
	int hops;

	if (snprintf(cur, sizeof(cur), "%s", path) >= (int)sizeof(cur))
		return -ENAMETOOLONG;
	for (hops = 0; hops < 40; hops++) {
		ssize_t n;
		char *slash;

		if (lstat(cur, &st) || !S_ISLNK(st.st_mode))
			break;
		n = readlink(cur, link, sizeof(link) - 1);
		if (n < 0)
			return -errno;
		link[n] = '\0';
		slash = strrchr(cur, '/');
		if (link[0] == '/' || !slash) {
			memcpy(cur, link, (size_t)n + 1);
		} else if ((size_t)(slash - cur) + 1 + (size_t)n + 1 > sizeof(cur)) {
			return -ENAMETOOLONG;
		} else {
			memcpy(slash + 1, link, (size_t)n + 1);
		}
	}
	if (snprintf(out, size, "%s", cur) >= (int)size)
		return -ENAMETOOLONG;
	return 0;
}

static bool same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/*
 * A hard link to one of the result's files, found under dir's owned entries (at most depth
 * levels of folders, and 100,000 entries: a result holds one stream per thread).
 */
static bool linked_inside(const char *dir, const struct stat *target, int depth, long *budget)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	bool found = false;

	if (!d)
		return false;
	while (!found && (e = readdir(d)) && (*budget)-- > 0) {
		char p[PATH_MAX];
		struct stat st;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (snprintf(p, sizeof(p), "%s/%s", dir, e->d_name) >= (int)sizeof(p) ||
		    lstat(p, &st))
			continue;
		if (S_ISDIR(st.st_mode))
			found = depth > 0 && linked_inside(p, target, depth - 1, budget);
		else
			found = same_file(&st, target);
	}
	closedir(d);
	return found;
}

static bool hard_link_of_owned(const char *dir, const struct stat *target, const char **what)
{
	long budget = 100000;
	size_t i;

	for (i = 0; i < sizeof(owned) / sizeof(owned[0]); i++) {
		char p[PATH_MAX];
		struct stat st;

		if (owned[i].prefix ||
		    snprintf(p, sizeof(p), "%s/%s", dir, owned[i].name) >= (int)sizeof(p) ||
		    lstat(p, &st))
			continue;
		if (S_ISDIR(st.st_mode) ? linked_inside(p, target, 2, &budget)
					: same_file(&st, target)) {
			*what = owned[i].what;
			return true;
		}
	}
	return false;
}

int result_dir_owns(const char *dir, const char *path, char *why, size_t size)
{
	char target[PATH_MAX], parent[PATH_MAX], real[PATH_MAX], child[NAME_MAX + 1];
	const char *what = NULL, *base;
	struct stat dst, tst, st;
	char *slash;
	int ret;

	if (stat(dir, &dst) || !S_ISDIR(dst.st_mode))
		return 0; /* no such result: nothing of it to write over */
	if ((ret = write_target(path, target, sizeof(target))))
		return ret;
	/* The folder the file is in, with every link and ".." resolved. */
	base = result_path_split(target, parent, sizeof(parent));
	if (!realpath(parent, real))
		return 0; /* the write fails on its own, and says why */
	/* A directory, or a name too long: the write fails on its own. */
	if (!strcmp(base, ".") || !strcmp(base, "..") || !*base || strlen(base) > NAME_MAX)
		return 0;
	memcpy(child, base, strlen(base) + 1);
	/* Up from that folder: the entry of the result directory the file is under, if any. */
	for (;;) {
		if (!stat(real, &st) && same_file(&st, &dst)) {
			what = owned_entry(child);
			break;
		}
		if (!strcmp(real, "/"))
			break;
		slash = strrchr(real, '/');
		snprintf(child, sizeof(child), "%.*s", NAME_MAX, slash + 1);
		if (slash == real)
			slash[1] = '\0';
		else
			*slash = '\0';
	}
	/* Another name of one of its files (a hard link) is the same file. */
	if (!what && !stat(target, &tst) && S_ISREG(tst.st_mode) && tst.st_nlink > 1)
		hard_link_of_owned(dir, &tst, &what);
	if (!what)
		return 0;
	snprintf(why, size, "%s", what);
	return 1;
}
