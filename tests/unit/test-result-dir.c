/* SPDX-License-Identifier: MIT */
/* Unit tests of common/result-dir.c: paths, names, parallel jobs and race-free creation. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/result-dir.h"
#include "tests/unit/unit.h"

static char tmpdir[] = "/tmp/test-result-dir.XXXXXX";
static int start_cwd = -1;

static const char *const job_vars[] = {
	"PMI_RANK",
	"PMIX_RANK",
	"OMPI_COMM_WORLD_RANK",
	"SLURM_PROCID",
	"SLURM_JOB_ID",
	"SLURM_STEP_ID",
	"PMIX_NAMESPACE",
	"OMPI_MCA_ess_base_jobid",
	"PCOLLECT_HOSTNAME",
	"PMI_SIZE",
	"PMIX_SIZE",
	"OMPI_COMM_WORLD_SIZE",
	"SLURM_NTASKS",
};

/* Tests run outside any parallel job unless they say otherwise, even under Slurm. */
static void env_clear(void)
{
	size_t i;

	for (i = 0; i < sizeof(job_vars) / sizeof(job_vars[0]); i++)
		unsetenv(job_vars[i]);
}

/* tmpdir/name, in a static buffer of its own per slot. */
static const char *tmp_path(int slot, const char *name)
{
	static char paths[4][256];

	snprintf(paths[slot], sizeof(paths[slot]), "%s/%s", tmpdir, name);
	return paths[slot];
}

static bool exists(const char *dir, const char *name)
{
	char path[1024];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return lstat(path, &st) == 0;
}

static void touch(const char *dir, const char *name)
{
	char path[1024];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CU_ASSERT(fd >= 0);
	if (fd >= 0)
		close(fd);
}

/* Make dir look like the user made it long ago. */
static void make_old(const char *dir)
{
	struct timeval tv[2] = { { .tv_sec = time(NULL) - 3600 }, { .tv_sec = time(NULL) - 3600 } };

	CU_ASSERT_EQUAL(utimes(dir, tv), 0);
}

static int suite_init(void)
{
	env_clear();
	start_cwd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return mkdtemp(tmpdir) && start_cwd >= 0 ? 0 : -1;
}

static int suite_clean(void)
{
	int rc;

	if (start_cwd >= 0 && fchdir(start_cwd) == 0)
		close(start_cwd);
	rc = unit_remove_tree(tmpdir);
	env_clear();
	return rc;
}

static void check_path(const char *dir, enum result_path_kind kind, pid_t pid, pid_t tid,
		       const char *build_id, const char *name, const char *want)
{
	char buf[PATH_MAX];
	int n = result_path(buf, sizeof(buf), dir, kind, pid, tid, build_id, name);

	CU_ASSERT_STRING_EQUAL(buf, want);
	CU_ASSERT_EQUAL(n, (int)strlen(want));
}

static void test_result_dir_path_every_kind(void)
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

static void test_result_dir_path_numbers_and_dirs(void)
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

static void test_result_dir_path_too_long(void)
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

static void test_result_dir_path_invalid(void)
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

static void test_result_dir_suffix(void)
{
	CU_ASSERT_STRING_EQUAL(result_analysis_suffix("hotspots"), "hs");
	CU_ASSERT_STRING_EQUAL(result_analysis_suffix("memory-consumption"), "mc");
	CU_ASSERT_STRING_EQUAL(result_analysis_suffix("threading"), "tr");
	CU_ASSERT_STRING_EQUAL(result_analysis_suffix("locksandwaits"), "tr");
	CU_ASSERT_PTR_NULL(result_analysis_suffix("hotspot"));
	CU_ASSERT_PTR_NULL(result_analysis_suffix(NULL));
}

static void test_result_dir_rank_variables(void)
{
	static const char *const ranks[] = { "PMI_RANK", "PMIX_RANK", "OMPI_COMM_WORLD_RANK",
					     "SLURM_PROCID" };
	size_t i;
	int rank = 7;

	env_clear();
	CU_ASSERT_FALSE(result_in_parallel_job(&rank));
	CU_ASSERT_EQUAL(rank, -1);
	CU_ASSERT_FALSE(result_in_parallel_job(NULL));
	for (i = 0; i < sizeof(ranks) / sizeof(ranks[0]); i++) {
		env_clear();
		setenv(ranks[i], "3", 1);
		rank = -5;
		CU_ASSERT_TRUE(result_in_parallel_job(&rank));
		CU_ASSERT_EQUAL(rank, 3);
		setenv(ranks[i], "not-a-number", 1);
		CU_ASSERT_TRUE(result_in_parallel_job(&rank));
		CU_ASSERT_EQUAL(rank, -1);
		/* An empty variable is no job. */
		setenv(ranks[i], "", 1);
		CU_ASSERT_FALSE(result_in_parallel_job(&rank));
	}
	env_clear();
}

/* Under a launcher: rank and size as a pair of one launcher's variables. */
static void test_result_dir_rank_size(void)
{
	static const char *const pairs[][2] = {
		{ "PMI_RANK", "PMI_SIZE" },
		{ "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE" },
		{ "SLURM_PROCID", "SLURM_NTASKS" },
		{ "PMIX_RANK", "PMIX_SIZE" },
	};
	int rank = -7, size = -7;
	size_t i;

	env_clear();
	CU_ASSERT_FALSE(result_job_rank_size(&rank, &size));
	for (i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
		env_clear();
		setenv(pairs[i][0], "3", 1);
		CU_ASSERT_FALSE(result_job_rank_size(&rank, &size)); /* no size */
		setenv(pairs[i][1], "8", 1);
		CU_ASSERT_TRUE(result_job_rank_size(&rank, &size));
		CU_ASSERT(rank == 3 && size == 8);
		setenv(pairs[i][1], "3", 1); /* a rank past the size is no launch */
		CU_ASSERT_FALSE(result_job_rank_size(&rank, &size));
		setenv(pairs[i][1], "x", 1);
		CU_ASSERT_FALSE(result_job_rank_size(&rank, &size));
	}
	/* Variables of two launchers: the first pair that holds wins (PMI before Slurm). */
	env_clear();
	setenv("SLURM_PROCID", "1", 1);
	setenv("SLURM_NTASKS", "2", 1);
	setenv("PMI_RANK", "5", 1);
	setenv("PMI_SIZE", "6", 1);
	CU_ASSERT_TRUE(result_job_rank_size(&rank, &size));
	CU_ASSERT(rank == 5 && size == 6);
	env_clear();
}

/* A job's results res.<host> beside res: the results among them, in name order. */
static void test_result_dir_job_parts(void)
{
	char **parts, hosts[512];
	size_t n;

	CU_ASSERT_EQUAL(mkdir(tmp_path(0, "job.b"), 0700), 0);
	CU_ASSERT_EQUAL(mkdir(tmp_path(0, "job.b/raw"), 0700), 0);
	CU_ASSERT_EQUAL(mkdir(tmp_path(0, "job.a"), 0700), 0);
	touch(tmp_path(0, "job.a"), "result.db");
	CU_ASSERT_EQUAL(mkdir(tmp_path(0, "job.notresult"), 0700), 0);
	CU_ASSERT_EQUAL(mkdir(tmp_path(0, "jobx.c"), 0700), 0);
	CU_ASSERT_EQUAL(mkdir(tmp_path(0, "jobx.c/raw"), 0700), 0);
	CU_ASSERT_EQUAL(result_dir_job_parts(tmp_path(0, "job"), &parts, &n), 0);
	CU_ASSERT_FATAL(n == 2);
	CU_ASSERT_STRING_EQUAL(parts[0], tmp_path(1, "job.a"));
	CU_ASSERT_STRING_EQUAL(parts[1], tmp_path(1, "job.b"));
	result_dir_list_free(parts, n);
	/* A trailing slash names the same job; the names for messages. */
	snprintf(hosts, sizeof(hosts), "%s/", tmp_path(0, "job"));
	CU_ASSERT_EQUAL(result_dir_job_parts(hosts, &parts, &n), 0);
	CU_ASSERT(n == 2);
	result_dir_list_free(parts, n);
	CU_ASSERT_EQUAL(result_dir_host_variants(tmp_path(0, "job"), hosts, sizeof(hosts)), 2);
	CU_ASSERT(strstr(hosts, "job.a, ") && strstr(hosts, "job.b"));
	/* None: 0 parts, no error. */
	CU_ASSERT_EQUAL(result_dir_job_parts(tmp_path(0, "nojob"), &parts, &n), 0);
	CU_ASSERT(n == 0 && parts == NULL);
}

static void test_result_dir_hostname(void)
{
	char host[256], want[256], small[4];

	env_clear();
	setenv("PCOLLECT_HOSTNAME", "node12", 1);
	result_short_hostname(host, sizeof(host));
	CU_ASSERT_STRING_EQUAL(host, "node12");
	setenv("PCOLLECT_HOSTNAME", "a/b", 1);
	result_short_hostname(host, sizeof(host));
	CU_ASSERT_STRING_EQUAL(host, "a_b");
	setenv("PCOLLECT_HOSTNAME", "node12", 1);
	result_short_hostname(small, sizeof(small));
	CU_ASSERT_STRING_EQUAL(small, "nod");

	unsetenv("PCOLLECT_HOSTNAME");
	CU_ASSERT_EQUAL_FATAL(gethostname(want, sizeof(want)), 0);
	want[strcspn(want, ".")] = '\0';
	result_short_hostname(host, sizeof(host));
	CU_ASSERT_STRING_EQUAL(host, want);
	CU_ASSERT_PTR_NULL(strchr(host, '.'));
}

static void test_result_dir_job_id(void)
{
	char id[256], want[64];

	env_clear();
	result_job_id(id, sizeof(id));
	snprintf(want, sizeof(want), "ppid:%ld", (long)getppid());
	CU_ASSERT_STRING_EQUAL(id, want);

	setenv("SLURM_JOB_ID", "77", 1);
	result_job_id(id, sizeof(id));
	CU_ASSERT_STRING_EQUAL(id, "slurm:77");
	setenv("SLURM_STEP_ID", "3", 1);
	result_job_id(id, sizeof(id));
	CU_ASSERT_STRING_EQUAL(id, "slurm:77.3");
	setenv("PMIX_NAMESPACE", "prterun-x-1@1", 1);
	setenv("OMPI_MCA_ess_base_jobid", "123", 1);
	result_job_id(id, sizeof(id));
	CU_ASSERT_STRING_EQUAL(id, "slurm:77.3,pmix:prterun-x-1@1,ompi:123");
	env_clear();
	setenv("OMPI_MCA_ess_base_jobid", "9\n9", 1);
	result_job_id(id, sizeof(id));
	CU_ASSERT_STRING_EQUAL(id, "ompi:9");
	env_clear();
}

static void test_result_dir_name_given(void)
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

static void test_result_dir_name_each_rank_variable(void)
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

static void test_result_dir_name_numbering(void)
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

	CU_ASSERT_EQUAL(fchdir(start_cwd), 0);
}

static void test_result_dir_create_new(void)
{
	const char *dir = tmp_path(0, "new");
	char err[512], job[256], want[1024];
	bool created = false;
	FILE *f;

	env_clear();
	CU_ASSERT_EQUAL_FATAL(result_dir_create(dir, RESULT_MODE_PRIVATE, &created, err,
						sizeof(err)),
			      0);
	CU_ASSERT_TRUE(created);
	CU_ASSERT_TRUE(exists(dir, "meta"));
	CU_ASSERT_TRUE(exists(dir, "raw"));
	CU_ASSERT_TRUE(exists(dir, "log"));
	CU_ASSERT_TRUE(exists(dir, "pcollect.job"));
	CU_ASSERT_TRUE(result_dir_is_result(dir));

	/* The job file is one line: the job identity. */
	snprintf(want, sizeof(want), "%s/pcollect.job", dir);
	f = fopen(want, "r");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	CU_ASSERT_PTR_NOT_NULL(fgets(job, sizeof(job), f));
	fclose(f);
	result_job_id(want, sizeof(want));
	CU_ASSERT_EQUAL(job[strlen(job) - 1], '\n');
	job[strlen(job) - 1] = '\0';
	CU_ASSERT_STRING_EQUAL(job, want);
}

static void test_result_dir_create_existing_result_refused(void)
{
	const char *dir = tmp_path(0, "twice");
	char err[512], want[PATH_MAX + 128];
	bool created = true;

	env_clear();
	CU_ASSERT_EQUAL_FATAL(result_dir_create(dir, RESULT_MODE_PRIVATE, &created, err,
						sizeof(err)),
			      0);
	touch(dir, "raw/1.1.praw");
	/* Outside a parallel job even our own job's directory is not reused. */
	CU_ASSERT_EQUAL(result_dir_create(dir, RESULT_MODE_PRIVATE, &created, err, sizeof(err)),
			-EEXIST);
	CU_ASSERT_FALSE(created);
	snprintf(want, sizeof(want),
		 "result directory '%s' already holds collected data; choose another -r or remove "
		 "it",
		 dir);
	CU_ASSERT_STRING_EQUAL(err, want);
	CU_ASSERT_TRUE(exists(dir, "raw/1.1.praw"));

	/* A finalized result without a job file (copied from elsewhere) is refused too. */
	dir = tmp_path(1, "finalized");
	CU_ASSERT_EQUAL_FATAL(mkdir(dir, 0755), 0);
	touch(dir, "result.db");
	make_old(dir);
	CU_ASSERT_EQUAL(result_dir_create(dir, RESULT_MODE_PRIVATE, &created, err, sizeof(err)),
			-EEXIST);
	snprintf(want, sizeof(want),
		 "result directory '%s' already holds collected data; choose another -r or remove "
		 "it",
		 dir);
	CU_ASSERT_STRING_EQUAL(err, want);
}

static void test_result_dir_create_empty_existing_used(void)
{
	const char *dir = tmp_path(0, "empty");
	char err[512];
	bool created = true;

	env_clear();
	CU_ASSERT_EQUAL_FATAL(mkdir(dir, 0755), 0);
	CU_ASSERT_EQUAL(result_dir_create(dir, RESULT_MODE_PRIVATE, &created, err, sizeof(err)), 0);
	CU_ASSERT_FALSE(created);
	CU_ASSERT_TRUE(exists(dir, "raw"));
	CU_ASSERT_TRUE(exists(dir, "pcollect.job"));
}

static void test_result_dir_create_nonempty_refused(void)
{
	const char *dir = tmp_path(0, "nonempty");
	char err[512], want[PATH_MAX + 128];
	bool created = true;

	env_clear();
	CU_ASSERT_EQUAL_FATAL(mkdir(dir, 0755), 0);
	touch(dir, "notes.txt");
	CU_ASSERT_EQUAL(result_dir_create(dir, RESULT_MODE_PRIVATE, &created, err, sizeof(err)),
			-EEXIST);
	CU_ASSERT_FALSE(created);
	snprintf(want, sizeof(want),
		 "result directory '%s' is not empty; choose another -r or remove it", dir);
	CU_ASSERT_STRING_EQUAL(err, want);
	CU_ASSERT_FALSE(exists(dir, "raw"));
	CU_ASSERT_FALSE(exists(dir, "pcollect.job"));
}

static void test_result_dir_create_errors(void)
{
	char err[512], want[PATH_MAX + 128], big[PATH_MAX + 8];
	const char *dir;
	bool created = true;

	env_clear();
	dir = tmp_path(0, "missing/res");
	CU_ASSERT_EQUAL(result_dir_create(dir, RESULT_MODE_PRIVATE, &created, err, sizeof(err)),
			-ENOENT);
	CU_ASSERT_FALSE(created);
	snprintf(want, sizeof(want),
		 "cannot create result directory '%s': No such file or directory", dir);
	CU_ASSERT_STRING_EQUAL(err, want);

	dir = tmp_path(0, "a-file");
	touch(tmpdir, "a-file");
	CU_ASSERT_EQUAL(result_dir_create(dir, RESULT_MODE_PRIVATE, &created, err, sizeof(err)),
			-ENOTDIR);
	snprintf(want, sizeof(want), "cannot create result directory '%s': Not a directory", dir);
	CU_ASSERT_STRING_EQUAL(err, want);

	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	CU_ASSERT_EQUAL(result_dir_create(big, RESULT_MODE_PRIVATE, &created, err, sizeof(err)),
			-ENAMETOOLONG);
	CU_ASSERT_EQUAL(result_dir_create("", RESULT_MODE_PRIVATE, &created, err, sizeof(err)),
			-EINVAL);

	/* Root may write anywhere: the permission check only means something otherwise. */
	if (geteuid() == 0) {
		printf("(permission check skipped: running as root) ");
	} else {
		const char *ro = tmp_path(1, "read-only");

		CU_ASSERT_EQUAL_FATAL(mkdir(ro, 0555), 0);
		dir = tmp_path(0, "read-only/res");
		CU_ASSERT_EQUAL(result_dir_create(dir, RESULT_MODE_PRIVATE, &created, err,
						  sizeof(err)),
				-EACCES);
		snprintf(want, sizeof(want),
			 "cannot create result directory '%s': Permission denied", dir);
		CU_ASSERT_STRING_EQUAL(err, want);
		chmod(ro, 0755);
	}
}

/* Exit codes of the racing children. */
enum { RACE_JOINED = 0, RACE_CREATED = 10, RACE_REFUSED = 20, RACE_FAILED = 30 };

/*
 * Fork n ranks of one job that wait on a pipe, then all call result_dir_create() at once on
 * "-r base" in this node. Returns how many created it; *ok counts the successes.
 */
static int race(const char *base, const char *slurm_job, int n, int *ok)
{
	int gate[2], i, ncreated = 0;
	pid_t pids[64];

	*ok = 0;
	CU_ASSERT_FATAL(n <= 64 && pipe(gate) == 0);
	fflush(NULL);
	for (i = 0; i < n; i++) {
		pids[i] = fork();
		if (pids[i] == 0) {
			char name[PATH_MAX], err[512], rank[16], c;
			bool created = false;
			int rc;

			close(gate[1]);
			env_clear();
			snprintf(rank, sizeof(rank), "%d", i);
			setenv(i % 2 ? "PMI_RANK" : "OMPI_COMM_WORLD_RANK", rank, 1);
			setenv("PCOLLECT_HOSTNAME", "nodeA", 1);
			if (slurm_job) {
				setenv("SLURM_JOB_ID", slurm_job, 1);
				setenv("SLURM_STEP_ID", "0", 1);
			}
			/* Blocks until the parent closes the pipe: every rank starts together. */
			while (read(gate[0], &c, 1) < 0 && errno == EINTR)
				;
			if (result_dir_name(name, sizeof(name), base, "hotspots"))
				_exit(RACE_FAILED);
			rc = result_dir_create(name, RESULT_MODE_PRIVATE, &created, err,
					       sizeof(err));
			if (rc == -EEXIST)
				_exit(RACE_REFUSED);
			if (rc)
				_exit(RACE_FAILED);
			_exit(created ? RACE_CREATED : RACE_JOINED);
		}
		CU_ASSERT_FATAL(pids[i] > 0);
	}
	close(gate[0]);
	close(gate[1]);
	for (i = 0; i < n; i++) {
		int status = 0;

		CU_ASSERT(waitpid(pids[i], &status, 0) == pids[i]);
		CU_ASSERT(WIFEXITED(status));
		if (!WIFEXITED(status))
			continue;
		if (WEXITSTATUS(status) == RACE_CREATED)
			ncreated++;
		if (WEXITSTATUS(status) == RACE_CREATED || WEXITSTATUS(status) == RACE_JOINED)
			(*ok)++;
	}
	return ncreated;
}

static void test_result_dir_create_parallel_race(void)
{
	char base[256], dir[512], err[1024], want[1024];
	bool created = true;
	int round, ok;

	for (round = 0; round < 6; round++) {
		snprintf(base, sizeof(base), "%s/race%d", tmpdir, round);
		snprintf(dir, sizeof(dir), "%s.nodeA", base);
		/* Odd rounds have no job variables: the ranks share their parent, this test. */
		CU_ASSERT_EQUAL(race(base, round % 2 ? NULL : "4242", 16, &ok), 1);
		CU_ASSERT_EQUAL(ok, 16);
		CU_ASSERT_TRUE(exists(dir, "raw"));
		CU_ASSERT_TRUE(exists(dir, "meta"));
		CU_ASSERT_TRUE(exists(dir, "log"));
		CU_ASSERT_TRUE(exists(dir, "pcollect.job"));
	}

	/* A late rank of the same job joins a directory that already has data. */
	snprintf(base, sizeof(base), "%s/race0", tmpdir);
	snprintf(dir, sizeof(dir), "%s.nodeA", base);
	touch(dir, "raw/1.1.praw");
	env_clear();
	setenv("PMI_RANK", "17", 1);
	setenv("SLURM_JOB_ID", "4242", 1);
	setenv("SLURM_STEP_ID", "0", 1);
	CU_ASSERT_EQUAL(result_dir_create(dir, RESULT_MODE_PRIVATE, &created, err, sizeof(err)), 0);
	CU_ASSERT_FALSE(created);

	/* Another job (a later run with the same -r) is refused, nothing is touched. */
	setenv("SLURM_JOB_ID", "4243", 1);
	CU_ASSERT_EQUAL(result_dir_create(dir, RESULT_MODE_PRIVATE, &created, err, sizeof(err)),
			-EEXIST);
	CU_ASSERT_FALSE(created);
	snprintf(want, sizeof(want),
		 "result directory '%s' already holds collected data; choose another -r or remove "
		 "it",
		 dir);
	CU_ASSERT_STRING_EQUAL(err, want);
	CU_ASSERT_TRUE(exists(dir, "raw/1.1.praw"));

	/* All ranks of that other job are refused as well. */
	CU_ASSERT_EQUAL(race(base, "4243", 8, &ok), 0);
	CU_ASSERT_EQUAL(ok, 0);
	env_clear();
}

/* The wait for another rank's job file, shortened: the rule is the same at any length. */
#define SHORT_WAIT_NS (200LL * 1000 * 1000)

static double seconds_since(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (double)(t1.tv_sec - t0->tv_sec) + (double)(t1.tv_nsec - t0->tv_nsec) * 1e-9;
}

static void test_result_dir_create_parallel_existing_dirs(void)
{
	const char *dir = tmp_path(0, "par-empty");
	char err[512];
	bool created = true;
	struct timespec t0;

	env_clear();
	setenv("PMIX_RANK", "0", 1);
	setenv("PMIX_NAMESPACE", "ns1", 1);

	/* An empty directory the user made long ago is claimed at once: long before a wait of
	   a minute would end, however busy the machine. */
	CU_ASSERT_EQUAL_FATAL(mkdir(dir, 0755), 0);
	make_old(dir);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	CU_ASSERT_EQUAL(result_dir_create_timed(dir, RESULT_MODE_PRIVATE, 60LL * 1000000000,
						&created, err, sizeof(err)),
			0);
	CU_ASSERT(seconds_since(&t0) < 30.0);
	CU_ASSERT_FALSE(created);
	CU_ASSERT_TRUE(exists(dir, "raw"));

	/* A directory made a moment ago may be another rank's: wait for its job file first. */
	dir = tmp_path(0, "par-fresh");
	CU_ASSERT_EQUAL_FATAL(mkdir(dir, 0755), 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	CU_ASSERT_EQUAL(result_dir_create_timed(dir, RESULT_MODE_PRIVATE, SHORT_WAIT_NS, &created,
						err, sizeof(err)),
			0);
	CU_ASSERT(seconds_since(&t0) >= SHORT_WAIT_NS * 1e-9);
	CU_ASSERT_TRUE(exists(dir, "pcollect.job"));

	/* A non-empty directory nobody claimed is refused, after the same wait. */
	dir = tmp_path(0, "par-foreign");
	CU_ASSERT_EQUAL_FATAL(mkdir(dir, 0755), 0);
	touch(dir, "notes.txt");
	make_old(dir);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	CU_ASSERT_EQUAL(result_dir_create_timed(dir, RESULT_MODE_PRIVATE, SHORT_WAIT_NS, &created,
						err, sizeof(err)),
			-EEXIST);
	CU_ASSERT(seconds_since(&t0) >= SHORT_WAIT_NS * 1e-9);
	CU_ASSERT_FALSE(exists(dir, "raw"));
	CU_ASSERT_FALSE(exists(dir, "pcollect.job"));

	/* A half-written claim left by a crashed rank does not count as content. */
	dir = tmp_path(0, "par-stale");
	CU_ASSERT_EQUAL_FATAL(mkdir(dir, 0755), 0);
	touch(dir, ".pcollect.job.99999");
	make_old(dir);
	CU_ASSERT_EQUAL(result_dir_create_timed(dir, RESULT_MODE_PRIVATE, SHORT_WAIT_NS, &created,
						err, sizeof(err)),
			0);
	env_clear();
}

static void test_result_dir_is_result(void)
{
	const char *dir = tmp_path(0, "is-result");

	CU_ASSERT_FALSE(result_dir_is_result(dir));
	CU_ASSERT_EQUAL_FATAL(mkdir(dir, 0755), 0);
	CU_ASSERT_FALSE(result_dir_is_result(dir));
	touch(dir, "result.db");
	CU_ASSERT_TRUE(result_dir_is_result(dir));
	dir = tmp_path(0, "is-result2");
	CU_ASSERT_EQUAL_FATAL(mkdir(dir, 0755), 0);
	CU_ASSERT_EQUAL(mkdir(tmp_path(1, "is-result2/raw"), 0755), 0);
	CU_ASSERT_TRUE(result_dir_is_result(dir));
}

static void test_result_dir_remove_empty(void)
{
	const char *dir = tmp_path(0, "remove");
	char err[512];
	bool created;
	struct stat st;

	env_clear();
	CU_ASSERT_EQUAL_FATAL(result_dir_create(dir, RESULT_MODE_PRIVATE, &created, err,
						sizeof(err)),
			      0);
	result_dir_remove_empty(dir);
	CU_ASSERT_NOT_EQUAL(lstat(dir, &st), 0);

	/* Data stays, and so does every directory around it. */
	dir = tmp_path(0, "remove-data");
	CU_ASSERT_EQUAL_FATAL(result_dir_create(dir, RESULT_MODE_PRIVATE, &created, err,
						sizeof(err)),
			      0);
	touch(dir, "raw/1.2.praw");
	result_dir_remove_empty(dir);
	CU_ASSERT_TRUE(exists(dir, "raw/1.2.praw"));
	CU_ASSERT_TRUE(exists(dir, "meta"));
	CU_ASSERT_TRUE(exists(dir, "log"));
	CU_ASSERT_TRUE(exists(dir, "pcollect.job"));

	/* A file of the user's keeps the directory. */
	dir = tmp_path(0, "remove-user");
	CU_ASSERT_EQUAL_FATAL(mkdir(dir, 0755), 0);
	touch(dir, "notes.txt");
	result_dir_remove_empty(dir);
	CU_ASSERT_TRUE(exists(dir, "notes.txt"));
	result_dir_remove_empty(tmp_path(0, "does-not-exist"));
}

/* What a report may not write over: the table of result_dir_owns()'s cases. */
static void test_result_dir_owns(void)
{
	static const struct {
		const char *path; /* under tmpdir */
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
	CU_ASSERT_EQUAL(mkdir(tmp_path(1, "owns/raw"), 0755), 0);
	CU_ASSERT_EQUAL(mkdir(tmp_path(1, "owns/meta"), 0755), 0);
	CU_ASSERT_EQUAL(mkdir(tmp_path(1, "owns/log"), 0755), 0);
	CU_ASSERT_EQUAL(mkdir(tmp_path(1, "owns/archive"), 0755), 0);
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

/* Every name result_path() makes reads back; anything else is refused. */
static void test_result_dir_raw_name_parse(void)
{
	static const struct {
		const char *name;
		int ok;
		pid_t pid, tid;
		uint32_t gen;
		bool process;
	} cases[] = {
		{ "res/raw/1234.5678.praw", 1, 1234, 5678, 0, false },
		{ "1234.1234.x3.praw", 1, 1234, 1234, 3, false },
		{ "/a/b/77.proc.praw", 1, 77, 0, 0, true },
		{ "77.x12.proc.praw", 1, 77, 0, 12, true },
		{ "77.praw", 0, 0, 0, 0, false },
		{ "77.5.proc.praw", 0, 0, 0, 0, false },
		{ "077.5.praw", 0, 0, 0, 0, false },
		{ "77.5.x.praw", 0, 0, 0, 0, false },
		{ "77.5.praw.tmp", 0, 0, 0, 0, false },
		{ "a.praw", 0, 0, 0, 0, false },
		{ "99999999999.1.praw", 0, 0, 0, 0, false },
		{ "1.2.x1.proc.praw", 0, 0, 0, 0, false },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct result_raw_name n;
		int rc = result_raw_name_parse(cases[i].name, &n);

		CU_ASSERT_EQUAL(rc == 0, cases[i].ok);
		if (rc || !cases[i].ok)
			continue;
		CU_ASSERT_EQUAL(n.pid, cases[i].pid);
		CU_ASSERT_EQUAL(n.tid, cases[i].tid);
		CU_ASSERT_EQUAL(n.generation, cases[i].gen);
		CU_ASSERT_EQUAL(n.process, cases[i].process);
	}
}

/* Private by default whatever the umask; group-readable on request. */
static void test_result_dir_modes(void)
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
static void test_result_dir_open_file(void)
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
	CU_ASSERT_EQUAL(result_open_file(tmpdir, true, 0, &st), -EISDIR);
	touch(tmpdir, "big-file");
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

int main(void)
{
	static const struct unit_test tests[] = {
		{ "path_every_kind", test_result_dir_path_every_kind },
		{ "path_numbers_and_dirs", test_result_dir_path_numbers_and_dirs },
		{ "path_too_long", test_result_dir_path_too_long },
		{ "path_invalid", test_result_dir_path_invalid },
		{ "suffix", test_result_dir_suffix },
		{ "rank_variables", test_result_dir_rank_variables },
		{ "rank_size", test_result_dir_rank_size },
		{ "job_parts", test_result_dir_job_parts },
		{ "hostname", test_result_dir_hostname },
		{ "job_id", test_result_dir_job_id },
		{ "name_given", test_result_dir_name_given },
		{ "name_each_rank_variable", test_result_dir_name_each_rank_variable },
		{ "name_numbering", test_result_dir_name_numbering },
		{ "create_new", test_result_dir_create_new },
		{ "create_existing_result_refused",
		  test_result_dir_create_existing_result_refused },
		{ "create_empty_existing_used", test_result_dir_create_empty_existing_used },
		{ "create_nonempty_refused", test_result_dir_create_nonempty_refused },
		{ "create_errors", test_result_dir_create_errors },
		{ "create_parallel_race", test_result_dir_create_parallel_race },
		{ "create_parallel_existing_dirs", test_result_dir_create_parallel_existing_dirs },
		{ "is_result", test_result_dir_is_result },
		{ "remove_empty", test_result_dir_remove_empty },
		{ "owns", test_result_dir_owns },
		{ "raw_name_parse", test_result_dir_raw_name_parse },
		{ "modes", test_result_dir_modes },
		{ "open_file", test_result_dir_open_file },
		{ NULL, NULL },
	};

	return unit_run("result-dir", tests, suite_init, suite_clean);
}
