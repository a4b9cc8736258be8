/* SPDX-License-Identifier: MIT */
/* A job database's short stacks (agg_stacks, agg_samples): what the job's summaries read. */
#ifndef PCOLLECT_FINALIZER_JOB_AGG_H
#define PCOLLECT_FINALIZER_JOB_AGG_H
#include <stddef.h>

#include <sqlite3.h>

/* The empty tables agg_stacks, agg_samples and job_agg in db's main schema. 0 or -EIO. */
int job_agg_create(sqlite3 *db);

/*
 * Node node's short stacks and its samples on them, from its database attached as p, added to
 * the tables, and its row in job_agg; nothing (and 0) for a node they cannot stand for.
 * 0 or a negative errno.
 */
int job_agg_write(sqlite3 *db, size_t node);

#endif
