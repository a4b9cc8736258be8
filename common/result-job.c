/* SPDX-License-Identifier: MIT */
/* Parallel jobs: whether this process is a rank of one, the job's identity, its DIR.<host>. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/grow.h"
#include "common/result-dir.h"
#include "common/result-private.h"

/* A variable's value as a number from 0 to INT_MAX, or -1. */
static long env_count(const char *name)
{
	const char *v = getenv(name);
	char *end;
	long r;

	if (!v || !*v)
		return -1;
	errno = 0;
	r = strtol(v, &end, 10);
	return !*end && !errno && r >= 0 && r <= INT_MAX ? r : -1;
}

bool result_job_rank_size(int *rank, int *size)
{
	static const char *const vars[][2] = {
		{ "PMI_RANK", "PMI_SIZE" },
		{ "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE" },
		{ "SLURM_PROCID", "SLURM_NTASKS" },
		{ "PMIX_RANK", "PMIX_SIZE" },
	};
	size_t i;

	for (i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
		long r = env_count(vars[i][0]), n = env_count(vars[i][1]);

		if (r >= 0 && n > r) {
			*rank = (int)r;
			*size = (int)n;
			return true;
		}
	}
	return false;
}

bool result_in_parallel_job(int *rank)
{
	static const char *const vars[] = {
		"PMI_RANK",
		"PMIX_RANK",
		"OMPI_COMM_WORLD_RANK",
		"SLURM_PROCID",
	};
	size_t i;

	if (rank)
		*rank = -1;
	/* The first variable set decides, even when it holds no number. */
	for (i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
		const char *v = getenv(vars[i]);

		if (!v || !*v)
			continue;
		if (rank)
			*rank = (int)env_count(vars[i]);
		return true;
	}
	return false;
}

static void job_id_append(char *buf, size_t size, const char *kind, const char *a, const char *b)
{
	size_t len = strlen(buf);

	if (len >= size)
		return;
	snprintf(buf + len, size - len, "%s%s:%s%s%s", len ? "," : "", kind, a, b ? "." : "",
		 b ? b : "");
}

void result_job_id(char *buf, size_t size)
{
	const char *slurm_job = getenv("SLURM_JOB_ID");
	const char *slurm_step = getenv("SLURM_STEP_ID");
	const char *pmix = getenv("PMIX_NAMESPACE");
	const char *ompi = getenv("OMPI_MCA_ess_base_jobid");
	char ppid[32];

	if (!size)
		return;
	buf[0] = '\0';
	/*
	 * Every identity that is set, not only the first: two mpirun in one Slurm allocation
	 * share SLURM_JOB_ID but not PMIX_NAMESPACE, and must not share a directory.
	 */
	if (slurm_job && *slurm_job)
		job_id_append(buf, size, "slurm", slurm_job,
			      slurm_step && *slurm_step ? slurm_step : NULL);
	if (pmix && *pmix)
		job_id_append(buf, size, "pmix", pmix, NULL);
	if (ompi && *ompi)
		job_id_append(buf, size, "ompi", ompi, NULL);
	if (!buf[0]) {
		snprintf(ppid, sizeof(ppid), "%ld", (long)getppid());
		job_id_append(buf, size, "ppid", ppid, NULL);
	}
	/* The id is one line of pcollect.job. */
	buf[strcspn(buf, "\n")] = '\0';
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void result_dir_list_free(char **list, size_t n)
{
	size_t i;

	for (i = 0; list && i < n; i++)
		free(list[i]);
	free(list);
}

int result_dir_job_parts(const char *dir, char ***out, size_t *nout)
{
	char parent[PATH_MAX], prefix[NAME_MAX + 2], path[PATH_MAX];
	const char *base;
	char **names = NULL;
	size_t n = 0, cap = 0, plen;
	struct dirent *e;
	int ret = 0;
	DIR *d;

	*out = NULL;
	*nout = 0;
	snprintf(path, sizeof(path), "%s", dir);
	while (strlen(path) > 1 && path[strlen(path) - 1] == '/')
		path[strlen(path) - 1] = '\0';
	base = result_path_split(path, parent, sizeof(parent));
	if (snprintf(prefix, sizeof(prefix), "%s.", base) >= (int)sizeof(prefix))
		return 0;
	plen = strlen(prefix);
	d = opendir(parent);
	if (!d)
		return 0;
	while ((e = readdir(d))) {
		char full[PATH_MAX * 2];

		if (strncmp(e->d_name, prefix, plen) || !e->d_name[plen])
			continue;
		snprintf(full, sizeof(full), "%s/%s", parent, e->d_name);
		if (!result_dir_is_result(full))
			continue;
		if (GROW(names, n + 1, cap) ||
		    !(names[n] = strdup(base != path ? full : e->d_name))) {
			ret = -ENOMEM;
			break;
		}
		n++;
	}
	closedir(d);
	if (ret) {
		result_dir_list_free(names, n);
		return ret;
	}
	if (n)
		qsort(names, n, sizeof(*names), name_cmp);
	*out = names;
	*nout = n;
	return 0;
}

size_t result_dir_host_variants(const char *dir, char *buf, size_t size)
{
	char **names;
	size_t n, i, len = 0;

	if (size)
		buf[0] = '\0';
	if (result_dir_job_parts(dir, &names, &n))
		return 0;
	for (i = 0; i < n; i++) {
		if (i < 10 && len < size)
			len += (size_t)snprintf(buf + len, size - len, "%s%s", i ? ", " : "",
						names[i]);
		else if (i == 10 && len < size)
			len += (size_t)snprintf(buf + len, size - len, ", ...");
	}
	result_dir_list_free(names, n);
	return n;
}

int result_job_db_path(const char *dir, const char *suffix, char *buf, size_t size)
{
	size_t len = strlen(dir);

	while (len > 1 && dir[len - 1] == '/')
		len--;
	if (snprintf(buf, size, "%.*s.job.db%s", (int)len, dir, suffix) >= (int)size)
		return -ENAMETOOLONG;
	return 0;
}
