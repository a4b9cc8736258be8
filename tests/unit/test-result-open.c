/* SPDX-License-Identifier: MIT */
/* Unit tests of common/result-open.c: every kind of directory, a job's parts, their state. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/meta.h"
#include "common/result-dir.h"
#include "common/result.h"
#include "tests/unit/result-fixture.h"
#include "tests/unit/unit.h"

static int suite_clean(void)
{
	chmod(tmp_path(0, "locked"), 0700);
	return fixture_clean();
}

/* result_open(dir) is kind with error, n parts; r stays open for more checks. */
static void check_open(struct result *r, const char *dir, enum result_kind kind, int error,
		       size_t n)
{
	CU_ASSERT_EQUAL_FATAL(result_open(r, dir), 0);
	CU_ASSERT_STRING_EQUAL(r->dir, dir);
	CU_ASSERT_EQUAL(r->kind, kind);
	CU_ASSERT_EQUAL(r->error, error);
	CU_ASSERT_EQUAL_FATAL(r->nparts, n);
	CU_ASSERT_EQUAL(r->parts == NULL, n == 0);
}

static void check_part(const struct result_part *p, const char *dir, bool finalized, bool raw)
{
	char db[512];

	snprintf(db, sizeof(db), "%s/result.db", dir);
	CU_ASSERT_STRING_EQUAL(p->dir, dir);
	CU_ASSERT_STRING_EQUAL(p->db, db);
	CU_ASSERT_EQUAL(p->finalized, finalized);
	CU_ASSERT_EQUAL(p->raw, raw);
	CU_ASSERT_EQUAL(p->collecting, 0);
}

static void test_result_open_missing(void)
{
	struct result r;

	check_open(&r, tmp_path(0, "nothing"), RESULT_MISSING, ENOENT, 0);
	result_close(&r);
	CU_ASSERT(r.dir == NULL && r.parts == NULL && r.nparts == 0);
	/* A file on the way: ENOTDIR, the user's to fix like ENOENT. */
	touch(fixture_dir, "file");
	check_open(&r, tmp_path(0, "file/res"), RESULT_MISSING, ENOTDIR, 0);
	result_close(&r);
	/* Closing twice, or what was never filled (zeroed), is harmless. */
	result_close(&r);
}

static void test_result_open_not_result(void)
{
	struct result r;

	/* A file instead of a directory. */
	touch(fixture_dir, "plain");
	check_open(&r, tmp_path(0, "plain"), RESULT_NOT_RESULT, ENOTDIR, 0);
	result_close(&r);
	/* A directory with neither raw/ nor result.db (meta/ alone is no result). */
	make_dir("empty");
	make_dir("empty/meta");
	check_open(&r, tmp_path(0, "empty"), RESULT_NOT_RESULT, 0, 0);
	CU_ASSERT_EQUAL(result_unfinalized(&r), 0);
	result_close(&r);
}

static void test_result_open_node(void)
{
	/* What each node holds; a database alone (raw/ removed to save space) is finalized. */
	static const struct {
		const char *dir, *db, *raw; /* the result, and what it holds or NULL */
		bool finalized, has_raw;
	} nodes[] = {
		{ "raw-only", NULL, "raw-only/raw", false, true },
		{ "done", "done/result.db", "done/raw", true, true },
		{ "db-only", "db-only/result.db", NULL, true, false },
	};
	char slash[512];
	struct result r;
	size_t i;

	for (i = 0; i < sizeof(nodes) / sizeof(nodes[0]); i++) {
		make_dir(nodes[i].dir);
		if (nodes[i].raw)
			make_dir(nodes[i].raw);
		if (nodes[i].db)
			touch(fixture_dir, nodes[i].db);
		check_open(&r, tmp_path(0, nodes[i].dir), RESULT_NODE, 0, 1);
		check_part(&r.parts[0], tmp_path(0, nodes[i].dir), nodes[i].finalized,
			   nodes[i].has_raw);
		CU_ASSERT_EQUAL(result_unfinalized(&r), !nodes[i].finalized);
		result_close(&r);
	}

	/* Trailing slashes name the same result; the part's directory is DIR as given. */
	snprintf(slash, sizeof(slash), "%s//", tmp_path(0, "done"));
	check_open(&r, slash, RESULT_NODE, 0, 1);
	CU_ASSERT_STRING_EQUAL(r.parts[0].dir, slash);
	CU_ASSERT_STRING_EQUAL(r.parts[0].db, tmp_path(1, "done/result.db"));
	CU_ASSERT_TRUE(r.parts[0].finalized);
	result_close(&r);

	/* A dangling link for result.db makes a result, but not a finalized one. */
	make_dir("dangling");
	CU_ASSERT_EQUAL(symlink("nowhere", tmp_path(0, "dangling/result.db")), 0);
	check_open(&r, tmp_path(0, "dangling"), RESULT_NODE, 0, 1);
	CU_ASSERT_FALSE(r.parts[0].finalized);
	result_close(&r);
}

static void test_result_open_job(void)
{
	char slash[512];
	struct result r;

	make_dir("job.b");
	make_dir("job.b/raw");
	make_dir("job.a");
	make_dir("job.a/raw");
	touch(fixture_dir, "job.a/result.db");
	make_dir("job.notresult");
	touch(fixture_dir, "job.file");
	make_dir("jobx.c");
	make_dir("jobx.c/raw");
	check_open(&r, tmp_path(0, "job"), RESULT_JOB, ENOENT, 2);
	check_part(&r.parts[0], tmp_path(0, "job.a"), true, true);
	check_part(&r.parts[1], tmp_path(0, "job.b"), false, true);
	CU_ASSERT_EQUAL(result_unfinalized(&r), 1);
	result_close(&r);

	/* A trailing slash names the same job. */
	snprintf(slash, sizeof(slash), "%s/", tmp_path(0, "job"));
	check_open(&r, slash, RESULT_JOB, ENOENT, 2);
	check_part(&r.parts[1], tmp_path(0, "job.b"), false, true);
	result_close(&r);

	/* A name without '/': the parts are names in the current directory. */
	CU_ASSERT_EQUAL_FATAL(chdir(fixture_dir), 0);
	check_open(&r, "job", RESULT_JOB, ENOENT, 2);
	check_part(&r.parts[0], "job.a", true, true);
	check_part(&r.parts[1], "job.b", false, true);
	result_close(&r);
	CU_ASSERT_EQUAL(fchdir(fixture_cwd), 0);

	/* DIR itself existing is no job, even with DIR.<host> beside it. */
	make_dir("job");
	check_open(&r, tmp_path(0, "job"), RESULT_NOT_RESULT, 0, 0);
	result_close(&r);
}

/*
 * A child whose name is pcollect's (as result-live.c checks it), until killed. Returns its
 * pid once the name is set.
 */
static pid_t fake_launcher(void)
{
	int fds[2];
	char c = 0;
	pid_t pid;

	CU_ASSERT_EQUAL_FATAL(pipe(fds), 0);
	pid = fork();
	CU_ASSERT_FATAL(pid >= 0);
	if (pid == 0) {
		prctl(PR_SET_NAME, "pcollect");
		if (write(fds[1], &c, 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	close(fds[1]);
	CU_ASSERT_EQUAL(read(fds[0], &c, 1), 1);
	close(fds[0]);
	return pid;
}

/* DIR/meta/<name>.meta saying status of launcher pid on host (NULL: no host key). */
static void write_meta(const char *dir, const char *name, const char *status, long pid,
		       const char *host)
{
	char path[512];
	struct meta m;

	meta_init(&m);
	CU_ASSERT_EQUAL(meta_set(&m, "status", status), 0);
	CU_ASSERT_EQUAL(meta_setf(&m, "launcher_pid", "%ld", pid), 0);
	if (host)
		CU_ASSERT_EQUAL(meta_set(&m, "host", host), 0);
	snprintf(path, sizeof(path), "%s/%s/meta/%s.meta", fixture_dir, dir, name);
	CU_ASSERT_EQUAL(meta_write_file(&m, path, 0644), 0);
	meta_release(&m);
}

static void test_result_open_collecting(void)
{
	pid_t pid = fake_launcher();
	struct result r;
	int status;

	setenv("PCOLLECT_HOSTNAME", "here", 1);
	/* A node being collected: no database yet, a live launcher on this host. */
	make_dir("live");
	make_dir("live/raw");
	make_dir("live/meta");
	write_meta("live", "1", "done", 1, NULL);
	write_meta("live", "2", "running", pid, "here");
	check_open(&r, tmp_path(0, "live"), RESULT_NODE, 0, 1);
	CU_ASSERT_EQUAL(r.parts[0].collecting, pid);
	CU_ASSERT_FALSE(r.parts[0].finalized);
	result_close(&r);

	/* A job: one part collected here, one by a launcher on another host (not asked). */
	make_dir("cjob.here");
	make_dir("cjob.here/raw");
	make_dir("cjob.here/meta");
	write_meta("cjob.here", "2", "running", pid, "here");
	make_dir("cjob.there");
	make_dir("cjob.there/raw");
	make_dir("cjob.there/meta");
	write_meta("cjob.there", "2", "running", pid, "there");
	check_open(&r, tmp_path(0, "cjob"), RESULT_JOB, ENOENT, 2);
	CU_ASSERT_EQUAL(r.parts[0].collecting, pid);
	CU_ASSERT_EQUAL(r.parts[1].collecting, 0);
	result_close(&r);

	/* The launcher gone, the meta file still saying running: not collecting. */
	kill(pid, SIGKILL);
	CU_ASSERT_EQUAL(waitpid(pid, &status, 0), pid);
	check_open(&r, tmp_path(0, "live"), RESULT_NODE, 0, 1);
	CU_ASSERT_EQUAL(r.parts[0].collecting, 0);
	result_close(&r);
	unsetenv("PCOLLECT_HOSTNAME");
}

/* In a child without root's privileges: what result_open() says of locked/res and a job. */
static int open_locked(void)
{
	struct result r;
	int bad = 0;

	if (getuid() == 0 && (setgid(65534) || setuid(65534)))
		return 2;
	if (result_open(&r, tmp_path(0, "locked/res")))
		return 3;
	bad |= r.kind != RESULT_MISSING || r.error != EACCES || r.nparts;
	result_close(&r);
	if (result_open(&r, tmp_path(0, "locked/job")))
		return 3;
	bad |= r.kind != RESULT_MISSING || r.error != EACCES || r.nparts;
	result_close(&r);
	return bad;
}

/* A parent that may not be searched: MISSING with EACCES, a refusal and not a typo. */
static void test_result_open_unreadable_parent(void)
{
	int status;
	pid_t pid;

	make_dir("locked");
	make_dir("locked/res");
	make_dir("locked/res/raw");
	make_dir("locked/job.a");
	make_dir("locked/job.a/raw");
	/* Root is not refused: the check runs as nobody, who may reach the scratch directory
	   but not locked. */
	CU_ASSERT_EQUAL(chmod(fixture_dir, 0755), 0);
	CU_ASSERT_EQUAL(chmod(tmp_path(0, "locked"), 0), 0);
	fflush(NULL);
	pid = fork();
	CU_ASSERT_FATAL(pid >= 0);
	if (pid == 0)
		_exit(open_locked());
	CU_ASSERT_EQUAL(waitpid(pid, &status, 0), pid);
	CU_ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	CU_ASSERT_EQUAL(chmod(tmp_path(0, "locked"), 0700), 0);
	CU_ASSERT_EQUAL(chmod(fixture_dir, 0700), 0);
}

static void test_result_open_is_result(void)
{
	const char *dir = tmp_path(0, "is-result");

	CU_ASSERT_FALSE(result_dir_is_result(dir));
	CU_ASSERT_EQUAL_FATAL(mkdir(dir, 0755), 0);
	CU_ASSERT_FALSE(result_dir_is_result(dir));
	touch(dir, "result.db");
	CU_ASSERT_TRUE(result_dir_is_result(dir));
	dir = tmp_path(0, "is-result2");
	CU_ASSERT_EQUAL_FATAL(mkdir(dir, 0755), 0);
	make_dir("is-result2/raw");
	CU_ASSERT_TRUE(result_dir_is_result(dir));
}

UNIT_MAIN("result-open", fixture_init, suite_clean,
	  {
		  { "missing", test_result_open_missing },
		  { "not_result", test_result_open_not_result },
		  { "node", test_result_open_node },
		  { "job", test_result_open_job },
		  { "collecting", test_result_open_collecting },
		  { "unreadable_parent", test_result_open_unreadable_parent },
		  { "is_result", test_result_open_is_result },
	  })
