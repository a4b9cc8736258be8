/* SPDX-License-Identifier: MIT */
/* Unit tests of common/result-owned.c: the files a report may not write over. */
#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/result-dir.h"
#include "tests/unit/result-fixture.h"
#include "tests/unit/unit.h"

/* What a report may not write over: the table of result_dir_owns()'s cases. */
static void test_result_owned_owns(void)
{
	static const struct {
		const char *path; /* under fixture_dir */
		const char *why;  /* NULL: free to write */
	} cases[] = {
		{ "owns/result.db", "the database (result.db)" },
		{ "owns/result.db-journal", "a journal of the database" },
		{ "owns/.result.db.tmp.42", "a database pfinalize is writing" },
		{ "owns/raw/1.1.praw", "the raw streams (raw/)" },
		{ "owns/raw/new.txt", "the raw streams (raw/)" },
		{ "owns/raw", "the raw streams (raw/)" },
		{ "owns/meta/../log/x", "the logs (log/)" },
		{ "owns/./archive/x", "the archived binaries (archive/)" },
		{ "owns/pcollect.job", "the job file (pcollect.job)" },
		{ "owns/.pcollect.job.7", "a job file being written" },
		{ "owns-alias/result.db", "the database (result.db)" },
		{ "owns/raw/../result.db", "the database (result.db)" },
		{ "link-to-db", "the database (result.db)" },
		{ "dangling-into-meta", "the collection metadata (meta/)" },
		{ "hard-link-to-db", "the database (result.db)" },
		{ "owns/report.txt", NULL },
		{ "owns/result.dbx", NULL },
		{ "elsewhere.txt", NULL },
		{ "no-such-dir/x", NULL },
	};
	const char *dir = tmp_path(0, "owns");
	char why[128], path[PATH_MAX];
	size_t i;

	CU_ASSERT_EQUAL_FATAL(mkdir(dir, 0755), 0);
	make_dir("owns/raw");
	make_dir("owns/meta");
	make_dir("owns/log");
	make_dir("owns/archive");
	touch(dir, "result.db");
	touch(dir, "raw/1.1.praw");
	CU_ASSERT_EQUAL(symlink(dir, tmp_path(1, "owns-alias")), 0);
	CU_ASSERT_EQUAL(symlink(tmp_path(2, "owns/result.db"), tmp_path(1, "link-to-db")), 0);
	CU_ASSERT_EQUAL(symlink("owns/meta/new.meta", tmp_path(1, "dangling-into-meta")), 0);
	CU_ASSERT_EQUAL(link(tmp_path(2, "owns/result.db"), tmp_path(1, "hard-link-to-db")), 0);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int ret;

		snprintf(path, sizeof(path), "%s", tmp_path(1, cases[i].path));
		why[0] = '\0';
		ret = result_dir_owns(dir, path, why, sizeof(why));
		CU_ASSERT_EQUAL(ret, cases[i].why ? 1 : 0);
		if (cases[i].why)
			CU_ASSERT_STRING_EQUAL(why, cases[i].why);
		if (ret != (cases[i].why ? 1 : 0))
			fprintf(stderr, "%s: %d '%s'\n", cases[i].path, ret, why);
	}
	/* Not a result directory at all: it owns nothing. */
	CU_ASSERT_EQUAL(result_dir_owns(tmp_path(0, "no-such-result"), path, why, sizeof(why)), 0);
}

UNIT_MAIN("result-owned", fixture_init, fixture_clean,
	  {
		  { "owns", test_result_owned_owns },
	  })
