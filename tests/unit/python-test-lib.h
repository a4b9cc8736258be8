/* SPDX-License-Identifier: MIT */
/* Helpers of the Python unit tests: finding installed interpreters and this source tree. */
#ifndef PCOLLECT_TESTS_UNIT_PYTHON_TEST_LIB_H
#define PCOLLECT_TESTS_UNIT_PYTHON_TEST_LIB_H

#include <glob.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/*
 * The interpreters tested: PCOLLECT_PYTHON_ROOT (default $PYENV_ROOT or /root/.pyenv) holds
 * versions/<v>/ with lib/libpython3.N.so.1.0, bin/python3 and include/python3.N/. Only 3.10 to
 * 3.13 are looked for; tests exit 77 when none is installed.
 */
static inline size_t pytest_find_prefixes(char out[][PATH_MAX], size_t cap)
{
	const char *root = getenv("PCOLLECT_PYTHON_ROOT");
	char pat[PATH_MAX];
	glob_t g;
	size_t i, n = 0;

	if (!root)
		root = getenv("PYENV_ROOT");
	if (!root)
		root = "/root/.pyenv";
	snprintf(pat, sizeof(pat), "%s/versions/*/lib/libpython3.1[0-3].so.1.0", root);
	if (glob(pat, 0, NULL, &g) != 0)
		return 0;
	for (i = 0; i < g.gl_pathc && n < cap; i++) {
		char *p = g.gl_pathv[i], *slash;

		snprintf(out[n], PATH_MAX, "%s", p);
		slash = strstr(out[n], "/lib/libpython");
		*slash = 0; /* the prefix */
		n++;
	}
	globfree(&g);
	return n;
}

/* 3.N's N from a prefix's library, or -1. */
static inline int pytest_prefix_minor(const char *prefix)
{
	char pat[PATH_MAX];
	glob_t g;
	int minor = -1;

	snprintf(pat, sizeof(pat), "%s/lib/libpython3.1[0-9].so.1.0", prefix);
	if (glob(pat, 0, NULL, &g) == 0) {
		const char *p = strstr(g.gl_pathv[0], "libpython3.");

		minor = atoi(p + 11);
		globfree(&g);
	}
	return minor;
}

/*
 * The source tree's root: test sources are compiled with paths relative to the build root
 * (meson) or absolute, so walk up from the executable to the directory holding build.ninja
 * and join. Returns 0 with root filled, -1 if not found.
 */
static inline int pytest_source_root(const char *this_file, char *root, size_t cap)
{
	char exe[PATH_MAX], path[PATH_MAX * 2], real[PATH_MAX];
	ssize_t n;
	char *slash;

	if (this_file[0] == '/') {
		snprintf(path, sizeof(path), "%s", this_file);
	} else {
		n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
		if (n < 0)
			return -1;
		exe[n] = 0;
		for (;;) {
			slash = strrchr(exe, '/');
			if (!slash || slash == exe)
				return -1;
			*slash = 0;
			snprintf(path, sizeof(path), "%s/build.ninja", exe);
			if (access(path, F_OK) == 0)
				break;
		}
		snprintf(path, sizeof(path), "%s/%s", exe, this_file);
	}
	if (!realpath(path, real))
		return -1;
	/* .../tests/unit/test-x.c -> ... */
	slash = strstr(real, "/tests/unit/");
	if (!slash)
		return -1;
	*slash = 0;
	snprintf(root, cap, "%s", real);
	return 0;
}

#endif
