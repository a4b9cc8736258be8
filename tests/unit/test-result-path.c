/* SPDX-License-Identifier: MIT */
/* Unit tests of common/result-path.c: every path in a result, raw stream names, DIR's own name. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/result-dir.h"
#include "tests/unit/result-fixture.h"
#include "tests/unit/unit.h"

static void check_path(const char *dir, enum result_path_kind kind, pid_t pid, pid_t tid,
		       const char *build_id, const char *name, const char *want)
{
	char buf[PATH_MAX];
	int n = result_path(buf, sizeof(buf), dir, kind, pid, tid, build_id, name);

	CU_ASSERT_STRING_EQUAL(buf, want);
	CU_ASSERT_EQUAL(n, (int)strlen(want));
}

static void test_result_path_every_kind(void)
{
	check_path("res", RESULT_PATH_DIR, 1, 2, NULL, NULL, "res");
	check_path("res", RESULT_PATH_JOB, 1, 2, NULL, NULL, "res/pcollect.job");
	check_path("res", RESULT_PATH_META_DIR, 1, 2, NULL, NULL, "res/meta");
	check_path("res", RESULT_PATH_META, 1234, 2, NULL, NULL, "res/meta/1234.meta");
	check_path("res", RESULT_PATH_RAW_DIR, 1, 2, NULL, NULL, "res/raw");
	check_path("res", RESULT_PATH_RAW, 1234, 5678, NULL, NULL, "res/raw/1234.5678.praw");
	check_path("res", RESULT_PATH_RAW, 1234, 1234, NULL, "x1", "res/raw/1234.1234.x1.praw");
	check_path("res", RESULT_PATH_RAW_PROC, 1234, 0, NULL, NULL, "res/raw/1234.proc.praw");
	check_path("res", RESULT_PATH_RAW_PROC, 1234, 0, NULL, "x2", "res/raw/1234.x2.proc.praw");
	check_path("res", RESULT_PATH_LOG_DIR, 1, 2, NULL, NULL, "res/log");
	check_path("res", RESULT_PATH_LOG, 1234, 2, NULL, NULL, "res/log/agent.1234.log");
	check_path("res", RESULT_PATH_ARCHIVE_DIR, 1, 2, NULL, NULL, "res/archive");
	check_path("res", RESULT_PATH_ARCHIVE, 1, 2, "0a1b2c3d4e5f", "libm.so.6",
		   "res/archive/0a1b2c3d4e5f/libm.so.6");
	check_path("res", RESULT_PATH_DB, 1, 2, NULL, NULL, "res/result.db");
	check_path("res", RESULT_PATH_DB_TMP, 1234, 2, NULL, NULL, "res/.result.db.tmp.1234");
	check_path("res", RESULT_PATH_JOB_TMP, 1234, 2, NULL, NULL, "res/.pcollect.job.1234");
	check_path("res", RESULT_PATH_DATA_USED, 0, 0, NULL, NULL, "res/log/.data-used");
}

static void test_result_path_numbers_and_dirs(void)
{
	check_path("/a/b", RESULT_PATH_RAW, 0, 0, NULL, NULL, "/a/b/raw/0.0.praw");
	check_path("r000hs", RESULT_PATH_RAW, INT_MAX, INT_MAX, NULL, NULL,
		   "r000hs/raw/2147483647.2147483647.praw");
	check_path("r", RESULT_PATH_META, -1, 0, NULL, NULL, "r/meta/-1.meta");
	check_path("r", RESULT_PATH_META, INT_MIN, 0, NULL, NULL, "r/meta/-2147483648.meta");
	check_path("r", RESULT_PATH_LOG, 10, 0, NULL, NULL, "r/log/agent.10.log");
	/* A trailing slash names the same directory. */
	check_path("res/", RESULT_PATH_RAW_DIR, 0, 0, NULL, NULL, "res/raw");
	check_path("res//", RESULT_PATH_DIR, 0, 0, NULL, NULL, "res");
	check_path("/", RESULT_PATH_DB, 0, 0, NULL, NULL, "/result.db");
	/* The archive keeps the last component of a path. */
	check_path("res", RESULT_PATH_ARCHIVE, 0, 0, "ABCDEF", "/usr/lib/x86_64/libc.so.6",
		   "res/archive/ABCDEF/libc.so.6");
}

static void test_result_path_too_long(void)
{
	static char longdir[PATH_MAX + 16], big[2 * PATH_MAX];
	char buf[64];

	/* "res/raw/1.2.praw" is 16 bytes and needs 17. */
	CU_ASSERT_EQUAL(result_path(buf, 17, "res", RESULT_PATH_RAW, 1, 2, NULL, NULL), 16);
	CU_ASSERT_STRING_EQUAL(buf, "res/raw/1.2.praw");
	CU_ASSERT_EQUAL(result_path(buf, 16, "res", RESULT_PATH_RAW, 1, 2, NULL, NULL),
			-ENAMETOOLONG);
	CU_ASSERT_STRING_EQUAL(buf, "");
	CU_ASSERT_EQUAL(result_path(buf, 17, "res", RESULT_PATH_RAW, 1, 2, NULL, "x1"),
			-ENAMETOOLONG);
	CU_ASSERT_EQUAL(result_path(buf, 20, "res", RESULT_PATH_RAW, 1, 2, NULL, "x1"), 19);
	CU_ASSERT_EQUAL(result_path(buf, 9, "res", RESULT_PATH_RAW, 1, 2, NULL, NULL),
			-ENAMETOOLONG);
	CU_ASSERT_EQUAL(result_path(buf, 0, "res", RESULT_PATH_DIR, 1, 2, NULL, NULL),
			-ENAMETOOLONG);
	CU_ASSERT_EQUAL(result_path(buf, 3, "res", RESULT_PATH_DIR, 1, 2, NULL, NULL),
			-ENAMETOOLONG);
	CU_ASSERT_EQUAL(result_path(buf, 4, "res", RESULT_PATH_DIR, 1, 2, NULL, NULL), 3);
	/* Past PATH_MAX even with room in the buffer. */
	memset(longdir, 'd', PATH_MAX - 4);
	longdir[PATH_MAX - 4] = '\0';
	CU_ASSERT_EQUAL(result_path(big, sizeof(big), longdir, RESULT_PATH_DIR, 0, 0, NULL, NULL),
			PATH_MAX - 4);
	CU_ASSERT_EQUAL(result_path(big, sizeof(big), longdir, RESULT_PATH_RAW, 1, 2, NULL, NULL),
			-ENAMETOOLONG);
	CU_ASSERT_EQUAL(result_path(big, sizeof(big), longdir, RESULT_PATH_ARCHIVE, 1, 2, "ab",
				    "x"),
			-ENAMETOOLONG);
}

static void test_result_path_invalid(void)
{
	char buf[PATH_MAX];

	CU_ASSERT_EQUAL(result_path(buf, sizeof(buf), NULL, RESULT_PATH_DIR, 0, 0, NULL, NULL),
			-EINVAL);
	CU_ASSERT_EQUAL(result_path(buf, sizeof(buf), "", RESULT_PATH_DIR, 0, 0, NULL, NULL),
			-EINVAL);
	CU_ASSERT_EQUAL(result_path(buf, sizeof(buf), "res", (enum result_path_kind)99, 0, 0, NULL,
				    NULL),
			-EINVAL);
	CU_ASSERT_EQUAL(result_path(buf, sizeof(buf), "res", RESULT_PATH_ARCHIVE, 0, 0, NULL,
				    "libc.so.6"),
			-EINVAL);
	CU_ASSERT_EQUAL(result_path(buf, sizeof(buf), "res", RESULT_PATH_ARCHIVE, 0, 0, "ab", NULL),
			-EINVAL);
	/* Nothing may climb out of archive/. */
	CU_ASSERT_EQUAL(result_path(buf, sizeof(buf), "res", RESULT_PATH_ARCHIVE, 0, 0, "..", "x"),
			-EINVAL);
	CU_ASSERT_EQUAL(result_path(buf, sizeof(buf), "res", RESULT_PATH_ARCHIVE, 0, 0, "ab/../..",
				    "x"),
			-EINVAL);
	CU_ASSERT_EQUAL(result_path(buf, sizeof(buf), "res", RESULT_PATH_ARCHIVE, 0, 0, "ab", ".."),
			-EINVAL);
	CU_ASSERT_EQUAL(result_path(buf, sizeof(buf), "res", RESULT_PATH_ARCHIVE, 0, 0, "ab",
				    "/usr/lib/"),
			-EINVAL);
	CU_ASSERT_EQUAL(result_path(buf, sizeof(buf), "res", RESULT_PATH_ARCHIVE, 0, 0, "", "x"),
			-EINVAL);
	/* The exec generation of a raw stream is one component. */
	CU_ASSERT_EQUAL(result_path(buf, sizeof(buf), "res", RESULT_PATH_RAW, 1, 1, NULL, "x/1"),
			-EINVAL);
	CU_ASSERT_EQUAL(result_path(buf, sizeof(buf), "res", RESULT_PATH_RAW, 1, 1, NULL, ""),
			-EINVAL);
	CU_ASSERT_EQUAL(result_path(buf, sizeof(buf), "res", RESULT_PATH_RAW, 1, 1, NULL, ".."),
			-EINVAL);
	CU_ASSERT_STRING_EQUAL(buf, "");
}

static void test_result_path_suffix(void)
{
	CU_ASSERT_STRING_EQUAL(result_analysis_suffix("hotspots"), "hs");
	CU_ASSERT_STRING_EQUAL(result_analysis_suffix("memory-consumption"), "mc");
	CU_ASSERT_STRING_EQUAL(result_analysis_suffix("threading"), "tr");
	CU_ASSERT_STRING_EQUAL(result_analysis_suffix("locksandwaits"), "tr");
	CU_ASSERT_PTR_NULL(result_analysis_suffix("hotspot"));
	CU_ASSERT_PTR_NULL(result_analysis_suffix(NULL));
}

static void test_result_path_hostname(void)
{
	/* PCOLLECT_HOSTNAME as a name fit for a directory, cut to the buffer. */
	static const struct {
		const char *value, *want;
		size_t size;
	} cases[] = {
		{ "node12", "node12", 256 },
		{ "a/b", "a_b", 256 },
		{ "node12", "nod", 4 },
	};
	char host[256], want[256];
	size_t i;

	env_clear();
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		setenv("PCOLLECT_HOSTNAME", cases[i].value, 1);
		result_short_hostname(host, cases[i].size);
		CU_ASSERT_STRING_EQUAL(host, cases[i].want);
	}

	unsetenv("PCOLLECT_HOSTNAME");
	CU_ASSERT_EQUAL_FATAL(gethostname(want, sizeof(want)), 0);
	want[strcspn(want, ".")] = '\0';
	result_short_hostname(host, sizeof(host));
	CU_ASSERT_STRING_EQUAL(host, want);
	CU_ASSERT_PTR_NULL(strchr(host, '.'));
}

static void test_result_path_name_given(void)
{
	char name[PATH_MAX], small[8];

	env_clear();
	CU_ASSERT_EQUAL(result_dir_name(name, sizeof(name), "res", "hotspots"), 0);
	CU_ASSERT_STRING_EQUAL(name, "res");
	CU_ASSERT_EQUAL(result_dir_name(name, sizeof(name), "/data/res/", "hotspots"), 0);
	CU_ASSERT_STRING_EQUAL(name, "/data/res");
	CU_ASSERT_EQUAL(result_dir_name(name, sizeof(name), "", "hotspots"), -EINVAL);
	CU_ASSERT_EQUAL(result_dir_name(small, sizeof(small), "12345678", NULL), -ENAMETOOLONG);

	setenv("PCOLLECT_HOSTNAME", "node7", 1);
	/* The host name only matters inside a parallel job. */
	CU_ASSERT_EQUAL(result_dir_name(name, sizeof(name), "res", "hotspots"), 0);
	CU_ASSERT_STRING_EQUAL(name, "res");
	setenv("PMI_RANK", "0", 1);
	CU_ASSERT_EQUAL(result_dir_name(name, sizeof(name), "res", "hotspots"), 0);
	CU_ASSERT_STRING_EQUAL(name, "res.node7");
	CU_ASSERT_EQUAL(result_dir_name(name, sizeof(name), "out/res/", NULL), 0);
	CU_ASSERT_STRING_EQUAL(name, "out/res.node7");
	CU_ASSERT_EQUAL(result_dir_name(small, sizeof(small), "res", NULL), -ENAMETOOLONG);
	env_clear();
}

static void test_result_path_name_each_rank_variable(void)
{
	static const char *const ranks[] = { "PMI_RANK", "PMIX_RANK", "OMPI_COMM_WORLD_RANK",
					     "SLURM_PROCID" };
	char name[PATH_MAX];
	size_t i;

	for (i = 0; i < sizeof(ranks) / sizeof(ranks[0]); i++) {
		env_clear();
		setenv("PCOLLECT_HOSTNAME", "nodeB", 1);
		setenv(ranks[i], "12", 1);
		CU_ASSERT_EQUAL(result_dir_name(name, sizeof(name), "res", NULL), 0);
		CU_ASSERT_STRING_EQUAL(name, "res.nodeB");
	}
	env_clear();
}

static void test_result_path_name_numbering(void)
{
	const char *dir = tmp_path(0, "numbering");
	char name[64];

	env_clear();
	CU_ASSERT_EQUAL_FATAL(mkdir(dir, 0755), 0);
	CU_ASSERT_EQUAL_FATAL(chdir(dir), 0);

	CU_ASSERT_EQUAL(result_dir_name(name, sizeof(name), NULL, "hotspots"), 0);
	CU_ASSERT_STRING_EQUAL(name, "r000hs");
	CU_ASSERT_EQUAL(mkdir("r000hs", 0755), 0);
	CU_ASSERT_EQUAL(mkdir("r001hs", 0755), 0);
	CU_ASSERT_EQUAL(result_dir_name(name, sizeof(name), NULL, "hotspots"), 0);
	CU_ASSERT_STRING_EQUAL(name, "r002hs");
	/* One sequence for every analysis, as VTune numbers them. */
	CU_ASSERT_EQUAL(result_dir_name(name, sizeof(name), NULL, "memory-consumption"), 0);
	CU_ASSERT_STRING_EQUAL(name, "r002mc");
	CU_ASSERT_EQUAL(result_dir_name(name, sizeof(name), NULL, "locksandwaits"), 0);
	CU_ASSERT_STRING_EQUAL(name, "r002tr");
	/* Names that only look alike do not count. */
	touch(".", "readme");
	touch(".", "r12x");
	CU_ASSERT_EQUAL(mkdir("r5", 0755), 0);
	CU_ASSERT_EQUAL(result_dir_name(name, sizeof(name), NULL, "threading"), 0);
	CU_ASSERT_STRING_EQUAL(name, "r002tr");
	/* After a gap, one past the highest: the order of collection stays visible. */
	CU_ASSERT_EQUAL(mkdir("r007mc", 0755), 0);
	CU_ASSERT_EQUAL(result_dir_name(name, sizeof(name), NULL, "hotspots"), 0);
	CU_ASSERT_STRING_EQUAL(name, "r008hs");
	CU_ASSERT_EQUAL(mkdir("r999hs", 0755), 0);
	CU_ASSERT_EQUAL(result_dir_name(name, sizeof(name), NULL, "hotspots"), 0);
	CU_ASSERT_STRING_EQUAL(name, "r1000hs");
	CU_ASSERT_EQUAL(result_dir_name(name, 6, NULL, "hotspots"), -ENAMETOOLONG);

	CU_ASSERT_EQUAL(fchdir(fixture_cwd), 0);
}

/* Every name result_path() makes reads back; anything else is refused. */
static void test_result_path_raw_name_parse(void)
{
	static const struct {
		const char *name;
		pid_t pid, tid;
		uint32_t gen;
		bool process;
	} names[] = {
		{ "res/raw/1234.5678.praw", 1234, 5678, 0, false },
		{ "1234.1234.x3.praw", 1234, 1234, 3, false },
		{ "/a/b/77.proc.praw", 77, 0, 0, true },
		{ "77.x12.proc.praw", 77, 0, 12, true },
	};
	static const char *const refused[] = {
		"77.praw",       "77.5.proc.praw", "077.5.praw",         "77.5.x.praw",
		"77.5.praw.tmp", "a.praw",         "99999999999.1.praw", "1.2.x1.proc.praw",
	};
	struct result_raw_name n;
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		CU_ASSERT_EQUAL(result_raw_name_parse(names[i].name, &n), 0);
		CU_ASSERT_EQUAL(n.pid, names[i].pid);
		CU_ASSERT_EQUAL(n.tid, names[i].tid);
		CU_ASSERT_EQUAL(n.generation, names[i].gen);
		CU_ASSERT_EQUAL(n.process, names[i].process);
	}
	for (i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
		CU_ASSERT_NOT_EQUAL(result_raw_name_parse(refused[i], &n), 0);
}

UNIT_MAIN("result-path", fixture_init, fixture_clean,
	  {
		  { "path_every_kind", test_result_path_every_kind },
		  { "path_numbers_and_dirs", test_result_path_numbers_and_dirs },
		  { "path_too_long", test_result_path_too_long },
		  { "path_invalid", test_result_path_invalid },
		  { "suffix", test_result_path_suffix },
		  { "hostname", test_result_path_hostname },
		  { "name_given", test_result_path_name_given },
		  { "name_each_rank_variable", test_result_path_name_each_rank_variable },
		  { "name_numbering", test_result_path_name_numbering },
		  { "raw_name_parse", test_result_path_raw_name_parse },
	  })
