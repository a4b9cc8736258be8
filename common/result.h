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
	char *dir;       /* its directory: DIR as given for a NODE; for a JOB, DIR's parent joined
			    to DIR.<host> (the bare name when DIR has no '/') */
	char *db;        /* its database's path (RESULT_PATH_DB), whether it exists or not; NULL
			    when that path would be too long (say ENAMETOOLONG about dir) */
	bool finalized;  /* result.db exists (stat(): a dangling link to it does not count) */
	bool raw;        /* raw/ exists: there are streams to finalize */
	long collecting; /* pid of a pcollect launcher collecting it on this host, or 0
			    (result_dir_collecting()) */
};

struct result {
	char *dir; /* as the user gave it */
	enum result_kind kind;
	/*
	 * A positive errno. MISSING and JOB: why stat(DIR) failed (ENOENT, ENOTDIR, EACCES,
	 * ENAMETOOLONG, ...), for "cannot open result 'x': No such file or directory".
	 * NOT_RESULT: ENOTDIR when DIR is no directory (a file), 0 for a directory without raw/
	 * or result.db. NODE: 0.
	 */
	int error;
	struct result_part *parts; /* NODE: one; JOB: each DIR.<host>, sorted by name; else none */
	size_t nparts;
};

/*
 * Look at dir once: what it is, its parts and their state. Every tool asks this and nothing
 * else (preport before it reads, pfinalize before it writes, pcollect -command before it
 * steers). Trailing slashes of dir name the same result ("res/" is "res"; r->dir keeps them).
 * A job is looked for whenever stat(dir) fails, whatever the errno, as its parts may be
 * readable where dir is not. Returns 0 with r filled (result_close() releases it, whatever
 * the kind), or -ENOMEM with r empty (result_close() is harmless then too).
 */
int result_open(struct result *r, const char *dir);

/* Release what result_open() filled; r is empty after. */
void result_close(struct result *r);

/* How many parts have no database yet. */
size_t result_unfinalized(const struct result *r);

#endif
