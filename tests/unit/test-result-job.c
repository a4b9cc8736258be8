/* SPDX-License-Identifier: MIT */
/* Unit tests of common/result-job.c: a launcher's rank and size, the job's identity, its parts. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/result-dir.h"
#include "tests/unit/result-fixture.h"
#include "tests/unit/unit.h"

static void test_result_job_rank_variables(void)
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
static void test_result_job_rank_size(void)
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
static void test_result_job_parts(void)
{
	char **parts, hosts[512];
	size_t n;

	make_dir("job.b");
	make_dir("job.b/raw");
	make_dir("job.a");
	touch(tmp_path(0, "job.a"), "result.db");
	make_dir("job.notresult");
	make_dir("jobx.c");
	make_dir("jobx.c/raw");
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

static void check_job_id(const char *want)
{
	char id[256];

	result_job_id(id, sizeof(id));
	CU_ASSERT_STRING_EQUAL(id, want);
}

static void test_result_job_id(void)
{
	/* Each launcher's identity, added one variable after the other. */
	static const struct {
		const char *var, *value, *want; /* want: NULL to set the next one first */
	} steps[] = {
		{ "SLURM_JOB_ID", "77", "slurm:77" },
		{ "SLURM_STEP_ID", "3", "slurm:77.3" },
		{ "PMIX_NAMESPACE", "prterun-x-1@1", NULL },
		{ "OMPI_MCA_ess_base_jobid", "123", "slurm:77.3,pmix:prterun-x-1@1,ompi:123" },
	};
	char want[64];
	size_t i;

	env_clear();
	snprintf(want, sizeof(want), "ppid:%ld", (long)getppid());
	check_job_id(want);
	for (i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		setenv(steps[i].var, steps[i].value, 1);
		if (steps[i].want)
			check_job_id(steps[i].want);
	}
	env_clear();
	setenv("OMPI_MCA_ess_base_jobid", "9\n9", 1);
	check_job_id("ompi:9");
	env_clear();
}

UNIT_MAIN("result-job", fixture_init, fixture_clean,
	  {
		  { "rank_variables", test_result_job_rank_variables },
		  { "rank_size", test_result_job_rank_size },
		  { "job_parts", test_result_job_parts },
		  { "job_id", test_result_job_id },
	  })
