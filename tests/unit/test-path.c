/* SPDX-License-Identifier: MIT */
/* Unit tests of common/path.c: path_clean() and path_join() against tables of known answers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/path.h"
#include "tests/unit/unit.h"

struct path_case {
	const char *in, *want;
};

/* Go's filepath.Clean answers, plus the shapes DWARF line tables give. */
static const struct path_case clean_cases[] = {
	/* Already clean. "" has no room for ".": it stays as it is. */
	{ "", "" },
	{ ".", "." },
	{ "/", "/" },
	{ "abc", "abc" },
	{ "abc/def", "abc/def" },
	{ "/abc/def", "/abc/def" },
	{ "..", ".." },
	{ "../..", "../.." },
	{ "../../abc", "../../abc" },
	/* Doubled and trailing slashes. */
	{ "//", "/" },
	{ "//abc", "/abc" },
	{ "abc//def//ghi", "abc/def/ghi" },
	{ "abc/", "abc" },
	{ "/abc/", "/abc" },
	{ "abc///", "abc" },
	/* "." segments. */
	{ "./", "." },
	{ "/./", "/" },
	{ "abc/./def", "abc/def" },
	{ "./abc/def", "abc/def" },
	{ "abc/.", "abc" },
	/* ".." segments. */
	{ "abc/def/ghi/../jkl", "abc/def/jkl" },
	{ "abc/def/../ghi/../jkl", "abc/jkl" },
	{ "abc/def/..", "abc" },
	{ "abc/def/../..", "." },
	{ "/abc/def/../..", "/" },
	{ "abc/def/../../..", ".." },
	{ "/abc/def/../../..", "/" },
	{ "abc/def/../../../ghi/jkl/../../../mno", "../../mno" },
	{ "/../abc", "/abc" },
	{ "/..", "/" },
	{ "a/../../b", "../b" },
	{ "../a/..", ".." },
	{ "../a/../..", "../.." },
	/* Combinations. */
	{ "abc/./../def", "def" },
	{ "abc//./../def", "def" },
	{ "abc/../../././../def", "../../def" },
	/* Names that only look like "." or "..". */
	{ "...", "..." },
	{ "a/..b/c", "a/..b/c" },
	{ "a/.b/..", "a" },
	{ ".../..", "." },
	/* What build systems write into line tables. */
	{ "/b/../tests/x.c", "/tests/x.c" },
	{ "./csu/../sysdeps/x.h", "sysdeps/x.h" },
	{ "/build/glibc-x/string/../sysdeps/x86_64/multiarch/memmove.S",
	  "/build/glibc-x/sysdeps/x86_64/multiarch/memmove.S" },
	{ "/home/u/proj/build/../src/./main.c", "/home/u/proj/src/main.c" },
};

static void test_path_clean_table(void)
{
	size_t i;

	for (i = 0; i < sizeof(clean_cases) / sizeof(clean_cases[0]); i++) {
		const struct path_case *c = &clean_cases[i];
		char *p = strdup(c->in);

		CU_ASSERT_PTR_NOT_NULL_FATAL(p);
		path_clean(p);
		if (strcmp(p, c->want))
			fprintf(stderr, "path_clean('%s') = '%s', want '%s'\n", c->in, p, c->want);
		CU_ASSERT_STRING_EQUAL(p, c->want);
		free(p);
	}
}

/* A clean path stays as it is: cleaning twice gives the first answer. */
static void test_path_clean_idempotent(void)
{
	size_t i;

	for (i = 0; i < sizeof(clean_cases) / sizeof(clean_cases[0]); i++) {
		char *p = strdup(clean_cases[i].want);

		CU_ASSERT_PTR_NOT_NULL_FATAL(p);
		path_clean(p);
		CU_ASSERT_STRING_EQUAL(p, clean_cases[i].want);
		free(p);
	}
}

static const struct {
	const char *dir, *name, *want;
} join_cases[] = {
	{ "a", "b", "a/b" },
	{ "/usr/src", "x.c", "/usr/src/x.c" },
	{ "/usr/src/", "x.c", "/usr/src/x.c" },
	{ "/", "x.c", "/x.c" },
	{ "", "x.c", "x.c" },
	{ "a", "", "a/" },
	{ "build", "../src/x.c", "build/../src/x.c" }, /* joined, not cleaned */
	{ "a//", "b", "a//b" },                        /* only the last '/' counts */
};

static void test_path_join_table(void)
{
	size_t i;

	for (i = 0; i < sizeof(join_cases) / sizeof(join_cases[0]); i++) {
		char *p = path_join(join_cases[i].dir, join_cases[i].name);

		CU_ASSERT_PTR_NOT_NULL_FATAL(p);
		if (strcmp(p, join_cases[i].want))
			fprintf(stderr, "path_join('%s', '%s') = '%s', want '%s'\n",
				join_cases[i].dir, join_cases[i].name, p, join_cases[i].want);
		CU_ASSERT_STRING_EQUAL(p, join_cases[i].want);
		free(p);
	}
}

UNIT_MAIN("path", UNIT_TEST("clean_table", test_path_clean_table),
	  UNIT_TEST("clean_idempotent", test_path_clean_idempotent),
	  UNIT_TEST("join_table", test_path_join_table))
