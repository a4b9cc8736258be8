/* SPDX-License-Identifier: MIT */
/* What a result directory is, answered once: a node result or a job, its parts, their state. */
#ifndef PCOLLECT_COMMON_RESULT_H
#define PCOLLECT_COMMON_RESULT_H

#include <stdbool.h>
#include <stddef.h>

enum result_kind {
	RESULT_MISSING,    /* no such directory, and no DIR.<host> results of a job beside it */
	RESULT_NOT_RESULT, /* a directory (or file) that is no result: neither raw/ nor result.db */
	RESULT_NODE,       /* one result: DIR itself */
	RESULT_JOB,        /* a parallel job: DIR does not exist, its DIR.<host> results do */
};

/* One node result: DIR itself, or one DIR.<host> of a job. */
struct result_part {
	char *dir;       /* its directory */
	char *db;        /* its database's path (RESULT_PATH_DB), whether it exists or not */
	bool finalized;  /* result.db exists */
	bool raw;        /* raw/ exists: there are streams to finalize */
	long collecting; /* pid of a pcollect launcher collecting it on this host, or 0
			    (result_dir_collecting()) */
};

struct result {
	char *dir; /* as the user gave it */
	enum result_kind kind;
	int error; /* RESULT_MISSING: why DIR could not be looked at (a positive errno: ENOENT,
		      ENOTDIR, EACCES, ...) */
	struct result_part *parts; /* NODE: one; JOB: each DIR.<host>, sorted by name; else none */
	size_t nparts;
};

/*
 * Look at dir once: what it is, its parts and their state. Every tool asks this and nothing
 * else (preport before it reads, pfinalize before it writes, pcollect -command before it
 * steers). Returns 0 with r filled (result_close() releases it, whatever the kind), or
 * -ENOMEM or -ENAMETOOLONG with r empty.
 */
int result_open(struct result *r, const char *dir);

/* Release what result_open() filled; r is empty after. */
void result_close(struct result *r);

/* How many parts have no database yet. */
size_t result_unfinalized(const struct result *r);

#endif
