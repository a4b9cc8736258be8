/* SPDX-License-Identifier: MIT */
/* What a result directory is (result_open()): a node result or a job, its parts, their state. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/result-dir.h"
#include "common/result-private.h"
#include "common/result.h"

bool result_dir_is_result(const char *dir)
{
	return result_path_exists(dir, RESULT_PATH_RAW_DIR) ||
	       result_path_exists(dir, RESULT_PATH_DB);
}

/* Fill p for the node result dir, taking ownership of dir (NULL: out of memory). 0 or -ENOMEM. */
static int part_look(struct result_part *p, char *dir)
{
	char path[PATH_MAX];
	struct stat st;

	p->dir = dir;
	if (!dir)
		return -ENOMEM;
	if (result_path(path, sizeof(path), dir, RESULT_PATH_DB, 0, 0, NULL, NULL) >= 0) {
		if (!(p->db = strdup(path)))
			return -ENOMEM;
		p->finalized = !stat(path, &st);
	}
	p->raw = result_path_exists(dir, RESULT_PATH_RAW_DIR);
	p->collecting = result_dir_collecting(dir);
	return 0;
}

int result_open(struct result *r, const char *dir)
{
	char **dirs = NULL;
	size_t n = 0, i;
	struct stat st;
	int rc = -ENOMEM;

	memset(r, 0, sizeof(*r));
	if (!(r->dir = strdup(dir)))
		goto out;
	if (stat(dir, &st)) {
		r->error = errno;
		if ((rc = result_dir_job_parts(dir, &dirs, &n)))
			goto out;
		r->kind = n ? RESULT_JOB : RESULT_MISSING;
	} else if (!S_ISDIR(st.st_mode) || !result_dir_is_result(dir)) {
		r->kind = RESULT_NOT_RESULT;
		r->error = S_ISDIR(st.st_mode) ? 0 : ENOTDIR;
	} else {
		r->kind = RESULT_NODE;
		n = 1;
	}
	rc = n && !(r->parts = calloc(n, sizeof(*r->parts))) ? -ENOMEM : 0;
	/* Each part takes its name over from the job's list. */
	for (i = 0; !rc && i < n; i++, r->nparts++) {
		rc = part_look(&r->parts[i], dirs ? dirs[i] : strdup(dir));
		if (dirs)
			dirs[i] = NULL;
	}
out:
	result_dir_list_free(dirs, n);
	if (rc)
		result_close(r);
	return rc;
}

void result_close(struct result *r)
{
	size_t i;

	for (i = 0; i < r->nparts; i++) {
		free(r->parts[i].dir);
		free(r->parts[i].db);
	}
	free(r->parts);
	free(r->dir);
	memset(r, 0, sizeof(*r));
}

size_t result_unfinalized(const struct result *r)
{
	size_t i, n = 0;

	for (i = 0; i < r->nparts; i++)
		n += !r->parts[i].finalized;
	return n;
}
