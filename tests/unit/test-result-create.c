/* SPDX-License-Identifier: MIT */
/* Unit tests of common/result-create.c: claimed by one job, joined by its ranks, else refused. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/result-dir.h"
#include "tests/unit/result-fixture.h"
#include "tests/unit/unit.h"

static void test_result_create_new(void)
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

static void test_result_create_existing_result_refused(void)
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

static void test_result_create_empty_existing_used(void)
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

static void test_result_create_nonempty_refused(void)
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

static void test_result_create_errors(void)
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
	touch(fixture_dir, "a-file");
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

static void test_result_create_parallel_race(void)
{
	char base[256], dir[512], err[1024], want[1024];
	bool created = true;
	int round, ok;

	for (round = 0; round < 6; round++) {
		snprintf(base, sizeof(base), "%s/race%d", fixture_dir, round);
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
	snprintf(base, sizeof(base), "%s/race0", fixture_dir);
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

static void test_result_create_parallel_existing_dirs(void)
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

static void test_result_create_remove_empty(void)
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

UNIT_MAIN("result-create", fixture_init, fixture_clean,
	  {
		  { "create_new", test_result_create_new },
		  { "create_existing_result_refused", test_result_create_existing_result_refused },
		  { "create_empty_existing_used", test_result_create_empty_existing_used },
		  { "create_nonempty_refused", test_result_create_nonempty_refused },
		  { "create_errors", test_result_create_errors },
		  { "create_parallel_race", test_result_create_parallel_race },
		  { "create_parallel_existing_dirs", test_result_create_parallel_existing_dirs },
		  { "remove_empty", test_result_create_remove_empty },
	  })
