/* SPDX-License-Identifier: MIT */
/* Helpers of the Python unit tests: the interpreters tests/pythons.py finds, this source tree. */
#ifndef PCOLLECT_TESTS_UNIT_PYTHON_TEST_LIB_H
#define PCOLLECT_TESTS_UNIT_PYTHON_TEST_LIB_H

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/unit/unit.h"

/*
 * The interpreters tested are those tests/pythons.py discovers (python3.N on PATH, pyenv's
 * versions, PCOLLECT_TEST_PYTHONS): no path of any machine is written in a test. Each found
 * interpreter as that script describes it (its --tsv output).
 */
struct pytest_python {
	int minor, micro;
	bool shared;           /* runs from libpython3.N.so (libpython) */
	bool distro;           /* the distribution's build (prefix /usr) */
	char exe[PATH_MAX];    /* what to run: the interpreter or a wrapper that starts it */
	char binary[PATH_MAX]; /* the interpreter's executable file (sys.executable) */
	char prefix[PATH_MAX];
	char libpython[PATH_MAX]; /* "" when the interpreter is linked into binary */
	char include[PATH_MAX];   /* its headers' directory (may not exist) */
};

/* Copy the next tab-separated field of *s into out (cap bytes); advances *s. */
static inline void pytest_field(char **s, char *out, size_t cap)
{
	size_t n = strcspn(*s, "\t\n");

	snprintf(out, cap, "%.*s", (int)n, *s);
	*s += n + ((*s)[n] == '\t');
}

/*
 * Fill out (cap entries) with the interpreters found by root/tests/pythons.py, run by the
 * python3 on PATH. Returns how many; 0 when none is found or the script cannot run.
 */
static inline size_t pytest_find_pythons(const char *root, struct pytest_python *out, size_t cap)
{
	char cmd[PATH_MAX + 64], *line = NULL, num[32];
	size_t linecap = 0, n = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "python3 '%s/tests/pythons.py' --tsv", root);
	p = popen(cmd, "r");
	if (!p)
		return 0;
	while (n < cap && getline(&line, &linecap, p) > 0) {
		struct pytest_python *py = &out[n];
		char *s = line;

		pytest_field(&s, num, sizeof(num));
		py->minor = atoi(num);
		pytest_field(&s, num, sizeof(num));
		py->micro = atoi(num);
		pytest_field(&s, num, sizeof(num));
		py->shared = atoi(num) != 0;
		pytest_field(&s, num, sizeof(num));
		py->distro = atoi(num) != 0;
		pytest_field(&s, py->exe, sizeof(py->exe));
		pytest_field(&s, py->binary, sizeof(py->binary));
		pytest_field(&s, py->prefix, sizeof(py->prefix));
		pytest_field(&s, py->libpython, sizeof(py->libpython));
		pytest_field(&s, py->include, sizeof(py->include));
		if (py->minor > 0 && py->exe[0])
			n++;
	}
	free(line);
	pclose(p);
	return n;
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

/*
 * A Python unit test's start: find the source tree from this_file (the test's __FILE__) into
 * root (PATH_MAX bytes), then the interpreters into out (cap entries), their number in *n.
 * Returns 0, or 77 (what main() returns: skipped) with the reason printed.
 */
static inline int pytest_init(const char *this_file, char *root, struct pytest_python *out,
			      size_t cap, size_t *n)
{
	*n = 0;
	if (pytest_source_root(this_file, root, PATH_MAX) < 0) {
		printf("skipped: cannot find the source tree from '%s'\n", this_file);
		return 77;
	}
	*n = pytest_find_pythons(root, out, cap);
	return 0;
}

/*
 * Runs check() on every interpreter found (py, n of them) of a version known() accepts, and
 * says how many it checked ("N of M interpreters of a known version <done>"). Returns how many
 * check() passed; *nknown: how many there were.
 */
static inline size_t pytest_check_known(const struct pytest_python *py, size_t n,
					bool (*known)(int minor),
					bool (*check)(const struct pytest_python *py),
					const char *done, size_t *nknown)
{
	size_t i, checked = 0;

	*nknown = 0;
	for (i = 0; i < n; i++) {
		if (!known(py[i].minor))
			continue;
		(*nknown)++;
		checked += check(&py[i]);
	}
	printf("\n    %zu of %zu interpreters of a known version %s", checked, *nknown, done);
	return checked;
}

/*
 * Runs the tests as the suite suite_name (unit_run()); a pass that checked nothing against an
 * interpreter (*checked still 0) is a skip: returns 77, having said that no interpreter of
 * what was found among the npythons interpreters, and what was checked without one.
 */
static inline int pytest_run(const char *suite_name, const struct unit_test *tests,
			     const size_t *checked, const char *what, size_t npythons,
			     const char *without)
{
	int rc = unit_run(suite_name, tests, NULL, NULL);

	if (rc == 0 && *checked == 0) {
		printf("skipped: no %s found (tests/pythons.py, %zu interpreters): %s\n", what,
		       npythons, without);
		return 77;
	}
	return rc;
}

#endif
