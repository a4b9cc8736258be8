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

/* How result_dir_create() refuses a directory that another run's data is in. */
#define HOLDS_DATA " already holds collected data; choose another -r or remove it"

/*
 * result_dir_create(dir) fails with -error and says so: "result directory 'dir'<tail>" for a
 * refusal (EEXIST), "cannot create result directory 'dir'<tail>" for an error. Returns what it
 * set *created to.
 */
static bool create_fails(const char *dir, int error, const char *tail)
{
	char err[512], want[PATH_MAX + 128];
	bool created = true;

	CU_ASSERT_EQUAL(result_dir_create(dir, RESULT_MODE_PRIVATE, &created, err, sizeof(err)),
			-error);
	snprintf(want, sizeof(want), "%sresult directory '%s'%s",
		 error == EEXIST ? "" : "cannot create ", dir, tail);
	CU_ASSERT_STRING_EQUAL(err, want);
	return created;
}

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
	char err[512];
	bool created = true;

	env_clear();
	CU_ASSERT_EQUAL_FATAL(result_dir_create(dir, RESULT_MODE_PRIVATE, &created, err,
						sizeof(err)),
			      0);
	touch(dir, "raw/1.1.praw");
	/* Outside a parallel job even our own job's directory is not reused. */
	CU_ASSERT_FALSE(create_fails(dir, EEXIST, HOLDS_DATA));
	CU_ASSERT_TRUE(exists(dir, "raw/1.1.praw"));

	/* A finalized result without a job file (copied from elsewhere) is refused too. */
	dir = tmp_path(1, "finalized");
	CU_ASSERT_EQUAL_FATAL(mkdir(dir, 0755), 0);
	touch(dir, "result.db");
	make_old(dir);
	create_fails(dir, EEXIST, HOLDS_DATA);
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

	env_clear();
	CU_ASSERT_EQUAL_FATAL(mkdir(dir, 0755), 0);
	touch(dir, "notes.txt");
	CU_ASSERT_FALSE(create_fails(dir, EEXIST, " is not empty; choose another -r or remove it"));
	CU_ASSERT_FALSE(exists(dir, "raw"));
	CU_ASSERT_FALSE(exists(dir, "pcollect.job"));
}

static void test_result_create_errors(void)
{
	char err[512], big[PATH_MAX + 8];
	bool created = true;

	env_clear();
	CU_ASSERT_FALSE(
		create_fails(tmp_path(0, "missing/res"), ENOENT, ": No such file or directory"));
	touch(fixture_dir, "a-file");
	create_fails(tmp_path(0, "a-file"), ENOTDIR, ": Not a directory");

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
		create_fails(tmp_path(0, "read-only/res"), EACCES, ": Permission denied");
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
	char base[256], dir[512], err[1024];
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
	CU_ASSERT_FALSE(create_fails(dir, EEXIST, HOLDS_DATA));
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

/*
 * Makes dir (holding file unless NULL; made long ago if old) and claims it as a rank of a job
 * would, waiting up to wait_ns for another rank's job file. Returns what
 * result_dir_create_timed() returned; *seconds: how long it took.
 */
static int claim_existing(const char *dir, const char *file, bool old, long long wait_ns,
			  bool *created, double *seconds)
{
	struct timespec t0;
	char err[512];
	int rc;

	/* from before the mkdir: a wait is counted from the directory's change */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	CU_ASSERT_EQUAL_FATAL(mkdir(dir, 0755), 0);
	if (file)
		touch(dir, file);
	if (old)
		make_old(dir);
	rc = result_dir_create_timed(dir, RESULT_MODE_PRIVATE, wait_ns, created, err, sizeof(err));
	*seconds = seconds_since(&t0);
	return rc;
}

static void test_result_create_parallel_existing_dirs(void)
{
	const char *dir = tmp_path(0, "par-empty");
	bool created = true;
	double seconds;

	env_clear();
	setenv("PMIX_RANK", "0", 1);
	setenv("PMIX_NAMESPACE", "ns1", 1);

	/* An empty directory the user made long ago is claimed at once: long before a wait of
	   a minute would end, however busy the machine. */
	CU_ASSERT_EQUAL(claim_existing(dir, NULL, true, 60LL * 1000000000, &created, &seconds), 0);
	CU_ASSERT(seconds < 30.0);
	CU_ASSERT_FALSE(created);
	CU_ASSERT_TRUE(exists(dir, "raw"));

	/* A directory made a moment ago may be another rank's: wait for its job file first. */
	dir = tmp_path(0, "par-fresh");
	CU_ASSERT_EQUAL(claim_existing(dir, NULL, false, SHORT_WAIT_NS, &created, &seconds), 0);
	/* less a kernel tick or two: a directory's time is kept at the tick (4 ms here), so it
	   may read older than the mkdir by that much (the sanitizer run saw 197 ms of 200) */
	CU_ASSERT(seconds >= SHORT_WAIT_NS * 1e-9 - 0.010);
	CU_ASSERT_TRUE(exists(dir, "pcollect.job"));

	/* A non-empty directory nobody claimed is refused, after the same wait. */
	dir = tmp_path(0, "par-foreign");
	CU_ASSERT_EQUAL(claim_existing(dir, "notes.txt", true, SHORT_WAIT_NS, &created, &seconds),
			-EEXIST);
	CU_ASSERT(seconds >= SHORT_WAIT_NS * 1e-9);
	CU_ASSERT_FALSE(exists(dir, "raw"));
	CU_ASSERT_FALSE(exists(dir, "pcollect.job"));

	/* A half-written claim left by a crashed rank does not count as content. */
	CU_ASSERT_EQUAL(claim_existing(tmp_path(0, "par-stale"), ".pcollect.job.99999", true,
				       SHORT_WAIT_NS, &created, &seconds),
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
