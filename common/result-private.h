/* SPDX-License-Identifier: MIT */
/* What the result-*.c files share and no other file needs: the job file's names, two helpers. */
#ifndef PCOLLECT_COMMON_RESULT_PRIVATE_H
#define PCOLLECT_COMMON_RESULT_PRIVATE_H

#include <stdbool.h>
#include <stddef.h>

#include "common/result-dir.h"

#define RESULT_JOB_FILE "pcollect.job"
/* Written beside pcollect.job, then linked to it; ignored when checking for emptiness. */
#define RESULT_JOB_TMP_PREFIX ".pcollect.job."

/*
 * The folder path is in, lexically, into parent (size bytes): "/" for "/x", "." for a bare
 * name. Returns path's last component (within path).
 */
const char *result_path_split(const char *path, char *parent, size_t size);

/* True when the path of kind (without pid or name) exists in dir: lstat(), a link counts. */
bool result_path_exists(const char *dir, enum result_path_kind kind);

#endif
