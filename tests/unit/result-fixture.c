/* SPDX-License-Identifier: MIT */
/* The scratch directory and files the result directory's unit tests share (result-fixture.h). */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "tests/unit/result-fixture.h"
#include "tests/unit/unit.h"

char fixture_dir[256];
int fixture_cwd = -1;

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

void env_clear(void)
{
	size_t i;

	for (i = 0; i < sizeof(job_vars) / sizeof(job_vars[0]); i++)
		unsetenv(job_vars[i]);
}

const char *tmp_path(int slot, const char *name)
{
	static char paths[4][512];

	snprintf(paths[slot], sizeof(paths[slot]), "%s/%s", fixture_dir, name);
	return paths[slot];
}

void make_dir(const char *name)
{
	CU_ASSERT_EQUAL(mkdir(tmp_path(3, name), 0755), 0);
}

bool exists(const char *dir, const char *name)
{
	char path[1024];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return lstat(path, &st) == 0;
}

void touch(const char *dir, const char *name)
{
	char path[1024];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CU_ASSERT(fd >= 0);
	if (fd >= 0)
		close(fd);
}

void make_old(const char *dir)
{
	struct timeval tv[2] = { { .tv_sec = time(NULL) - 3600 }, { .tv_sec = time(NULL) - 3600 } };

	CU_ASSERT_EQUAL(utimes(dir, tv), 0);
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path);
}

int fixture_init(void)
{
	env_clear();
	snprintf(fixture_dir, sizeof(fixture_dir), "/tmp/%s.XXXXXX", program_invocation_short_name);
	fixture_cwd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return mkdtemp(fixture_dir) && fixture_cwd >= 0 ? 0 : -1;
}

int fixture_clean(void)
{
	int rc;

	if (fixture_cwd >= 0 && fchdir(fixture_cwd) == 0)
		close(fixture_cwd);
	rc = nftw(fixture_dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
	env_clear();
	return rc;
}
