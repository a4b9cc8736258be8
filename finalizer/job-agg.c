/* SPDX-License-Identifier: MIT */
/* A job database's short stacks: each node's samples on the frames the job's summaries read. */
#define LOG_DOMAIN "job"
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "common/grow.h"
#include "common/hash-index.h"
#include "common/log.h"
#include "finalizer/job-agg.h"

/*
 * The summary, -view mpi and -view hotspots -group-by rank of a job read of a sample its
 * innermost function, that function's caller (the tree's parent: inlined and hidden frames
 * between them are skipped), whether an MPI function is anywhere on the stack, and the
 * sample's thread, metric and context; never the frames in between. A node of 16 real-size
 * ranks (bench/job-scale.py) has 20,000 stacks and 2,400 samples rows a rank; cut to what
 * those views read, 200 stacks and 480 rows a rank. Each stack is kept as: its outermost frame,
 * every MPI frame, and its innermost frames up to and including the second that is neither inlined
 * nor possibly hidden (so the caller the views see is there whichever frames they skip); the
 * samples of stacks that keep the same frames are added up. preport reads these (agg_stacks,
 * agg_samples) in place of a node's stacks and samples for those three views only
 * (report/model-job-db.c), and the node's own tables for every other.
 *
 * Not written for a node with Python frames (the views strip interpreter frames by rules of
 * their own) or with samples of other than CPU time and MPI calls (a peak cannot be added
 * up; the summary finds a wait's call site or region further up its stack): preport then
 * reads the job's full tables for every view.
 */

struct agg_frame {
	int64_t id;
	bool keep;    /* an MPI function's: kept wherever it is */
	bool visible; /* neither inlined nor possibly hidden from the views' trees */
};

struct agg_stack {
	int64_t id, parent, frame, depth;
	bool used; /* a sample's */
};

/* A short stack: the parent's index in the short stacks (-1: a root) and the frame id. */
struct short_stack {
	int64_t parent, frame, depth;
};

struct agg {
	struct agg_frame *frames;
	size_t nframes, frames_cap;
	struct agg_stack *stacks;
	size_t nstacks, stacks_cap;
	struct short_stack *out;
	size_t nout, out_cap;
	struct hash_index index;
	int64_t *anchor; /* per stack: the short stack of its outermost and MPI frames */
	int64_t *mapped; /* per stack: its short stack */
};

/* The same names as the MPI view's (report/view-mpi.c is_mpi_function()). */
static const char agg_mpi_sql[] =
	"(f.name GLOB 'MPI_*' OR f.name GLOB 'PMPI_*' OR f.name GLOB 'mpi_*' OR f.name GLOB "
	"'pmpi_*' OR (f.name GLOB 'ompi_*_f' AND length(f.name) > 7))";

/*
 * Possibly hidden (report/cct.c cct_function_is_runtime(), a superset: keeping a frame more
 * never changes what the views show): names of the C start-up, thread entry and signal
 * trampoline (all start with '_' but clone and start_thread), the agent's.
 */
static const char agg_hidden_sql[] =
	"(f.name IS NULL OR f.name GLOB '_*' OR f.name GLOB '[[]*' OR f.name GLOB 'clone*' OR "
	"f.name = 'start_thread' OR f.name GLOB 'pcollect_*' OR m.name GLOB 'libpcollect*' OR "
	"m.name GLOB 'pcollect-agent*')";

static int64_t agg_count(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st = NULL;
	int64_t v = -1;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

static int agg_fail(sqlite3 *db)
{
	log_error("cannot write the job database: %s", sqlite3_errmsg(db));
	return -EIO;
}

static int64_t agg_stack_at(const struct agg *a, size_t n, int64_t id);

/* The node's frames (by id) and stacks (by id), those of samples marked. */
static int agg_read(struct agg *a, sqlite3 *db)
{
	char *sql = sqlite3_mprintf(
		"SELECT fr.id, %s, fr.inline_depth = 0 AND NOT %s FROM p.frames fr LEFT JOIN "
		"p.functions f ON f.id = fr.function_id LEFT JOIN p.modules m ON m.id = "
		"f.module_id ORDER BY fr.id",
		agg_mpi_sql, agg_hidden_sql);
	sqlite3_stmt *st = NULL;
	int rc = 0;

	if (!sql)
		return -ENOMEM;
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
		sqlite3_free(sql);
		return agg_fail(db);
	}
	sqlite3_free(sql);
	while (!rc && sqlite3_step(st) == SQLITE_ROW) {
		if (GROW(a->frames, a->nframes + 1, a->frames_cap)) {
			rc = -ENOMEM;
			break;
		}
		a->frames[a->nframes++] = (struct agg_frame){ sqlite3_column_int64(st, 0),
							      sqlite3_column_int(st, 1) != 0,
							      sqlite3_column_int(st, 2) != 0 };
	}
	sqlite3_finalize(st);
	if (rc)
		return rc;
	if (sqlite3_prepare_v2(db,
			       "SELECT id, coalesce(parent_id, -1), frame_id, depth FROM p.stacks "
			       "ORDER BY id",
			       -1, &st, NULL) != SQLITE_OK)
		return agg_fail(db);
	while (!rc && sqlite3_step(st) == SQLITE_ROW) {
		if (GROW(a->stacks, a->nstacks + 1, a->stacks_cap)) {
			rc = -ENOMEM;
			break;
		}
		a->stacks[a->nstacks++] = (struct agg_stack){ sqlite3_column_int64(st, 0),
							      sqlite3_column_int64(st, 1),
							      sqlite3_column_int64(st, 2),
							      sqlite3_column_int64(st, 3), false };
	}
	sqlite3_finalize(st);
	if (rc)
		return rc;
	if (sqlite3_prepare_v2(db, "SELECT DISTINCT stack_id FROM p.samples", -1, &st, NULL) !=
	    SQLITE_OK)
		return agg_fail(db);
	while (!rc && sqlite3_step(st) == SQLITE_ROW) {
		int64_t i = agg_stack_at(a, a->nstacks, sqlite3_column_int64(st, 0));

		if (i < 0)
			rc = -EINVAL;
		else
			a->stacks[i].used = true;
	}
	sqlite3_finalize(st);
	return rc;
}

/* The index of the element with this id among the first n of arr (el bytes each, sorted by
   their first member, an int64_t id), or -1. */
static int64_t agg_find(const void *arr, size_t n, size_t el, int64_t id)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int64_t at;

		memcpy(&at, (const char *)arr + mid * el, sizeof(at));
		if (at < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < n) {
		int64_t at;

		memcpy(&at, (const char *)arr + lo * el, sizeof(at));
		if (at == id)
			return (int64_t)lo;
	}
	return -1;
}

static int64_t agg_stack_at(const struct agg *a, size_t n, int64_t id)
{
	return agg_find(a->stacks, n, sizeof(*a->stacks), id);
}

struct agg_key {
	struct agg *a;
	struct short_stack s;
};

static bool agg_eq(const void *ctx, uint32_t i)
{
	const struct agg_key *k = ctx;
	const struct short_stack *b = &k->a->out[i];

	return k->s.parent == b->parent && k->s.frame == b->frame;
}

static int agg_make(const void *ctx, void *elem)
{
	memcpy(elem, &((const struct agg_key *)ctx)->s, sizeof(struct short_stack));
	return 0;
}

/* The short stack of frame under parent (-1: a root), added when new. */
static int64_t agg_intern(struct agg *a, int64_t parent, int64_t frame)
{
	struct agg_key k = { a, { parent, frame, parent >= 0 ? a->out[parent].depth + 1 : 0 } };

	return HASH_INDEX_GET(&a->index, hash_combine((uint64_t)parent, (uint64_t)frame), agg_eq,
			      agg_make, &k, a->out, a->nout, a->out_cap);
}

static const struct agg_frame *agg_frame_of(const struct agg *a, int64_t id)
{
	int64_t i = agg_find(a->frames, a->nframes, sizeof(*a->frames), id);

	return i >= 0 ? &a->frames[i] : NULL;
}

/* Every stack's short stack (a->mapped); -EINVAL when the stacks are not a tree by id. */
static int agg_map(struct agg *a)
{
	int64_t path[64];
	size_t i;

	a->anchor = malloc((a->nstacks + 1) * sizeof(int64_t));
	a->mapped = malloc((a->nstacks + 1) * sizeof(int64_t));
	if (!a->anchor || !a->mapped)
		return -ENOMEM;
	/* Parents first: pfinalize numbers a stack after its parent (checked). */
	for (i = 0; i < a->nstacks; i++) {
		const struct agg_stack *s = &a->stacks[i];
		const struct agg_frame *f = agg_frame_of(a, s->frame);
		int64_t p = s->parent >= 0 ? agg_stack_at(a, i, s->parent) : -1;
		int64_t at, up, top;
		size_t n = 0, visible = 0;

		if (!f || (s->parent >= 0 && p < 0))
			return -EINVAL;
		a->anchor[i] = p < 0 || f->keep ? agg_intern(a, p < 0 ? -1 : a->anchor[p], s->frame)
						: a->anchor[p];
		if (a->anchor[i] < -1)
			return (int)a->anchor[i];
		a->mapped[i] = -1;
		if (!s->used)
			continue;
		/* The innermost frames, up to the second visible one or the outermost. */
		for (at = (int64_t)i, top = at;; at = up) {
			const struct agg_frame *g = agg_frame_of(a, a->stacks[at].frame);

			if (n == sizeof(path) / sizeof(path[0]))
				return -E2BIG;
			path[n++] = a->stacks[at].frame;
			top = at;
			visible += g && g->visible;
			up = a->stacks[at].parent >= 0
				     ? agg_stack_at(a, (size_t)at, a->stacks[at].parent)
				     : -1;
			if (visible == 2 || up < 0)
				break;
		}
		up = a->stacks[top].parent >= 0
			     ? agg_stack_at(a, (size_t)top, a->stacks[top].parent)
			     : -1;
		at = up >= 0 ? a->anchor[up] : -1;
		while (n > 0 && at >= -1)
			at = agg_intern(a, at, path[--n]);
		if (at < -1)
			return (int)at;
		a->mapped[i] = at;
	}
	return 0;
}

/* The short stacks and the node's samples on them into the job's tables. */
static int agg_store(struct agg *a, sqlite3 *db, size_t node)
{
	sqlite3_stmt *st = NULL;
	size_t i;
	int rc = 0;

	if (sqlite3_exec(db,
			 "CREATE TEMP TABLE IF NOT EXISTS agg_map (id INTEGER PRIMARY KEY, "
			 "short INTEGER NOT NULL); DELETE FROM temp.agg_map",
			 NULL, NULL, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, "INSERT INTO main.agg_stacks VALUES (?, ?, ?, ?, ?)", -1, &st,
			       NULL) != SQLITE_OK)
		return agg_fail(db);
	for (i = 0; i < a->nout && !rc; i++) {
		sqlite3_bind_int64(st, 1, (sqlite3_int64)node);
		sqlite3_bind_int64(st, 2, (sqlite3_int64)i + 1);
		if (a->out[i].parent >= 0)
			sqlite3_bind_int64(st, 3, a->out[i].parent + 1);
		else
			sqlite3_bind_null(st, 3);
		sqlite3_bind_int64(st, 4, a->out[i].frame);
		sqlite3_bind_int64(st, 5, a->out[i].depth);
		rc = sqlite3_step(st) == SQLITE_DONE ? 0 : agg_fail(db);
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	if (rc)
		return rc;
	if (sqlite3_prepare_v2(db, "INSERT INTO temp.agg_map VALUES (?, ?)", -1, &st, NULL) !=
	    SQLITE_OK)
		return agg_fail(db);
	for (i = 0; i < a->nstacks && !rc; i++) {
		if (!a->stacks[i].used)
			continue;
		sqlite3_bind_int64(st, 1, a->stacks[i].id);
		sqlite3_bind_int64(st, 2, a->mapped[i] + 1);
		rc = sqlite3_step(st) == SQLITE_DONE ? 0 : agg_fail(db);
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	if (rc)
		return rc;
	{
		char *sql = sqlite3_mprintf(
			"INSERT INTO main.agg_samples SELECT %lld, s.thread_id, m.short, "
			"s.metric_id, s.context_id, sum(s.count), sum(s.value) FROM p.samples s "
			"JOIN temp.agg_map m ON m.id = s.stack_id GROUP BY s.metric_id, "
			"s.thread_id, m.short, s.context_id; INSERT INTO main.job_agg VALUES (%lld, "
			"%lld, changes())",
			(long long)node, (long long)node, (long long)a->nout);

		if (!sql)
			return -ENOMEM;
		if (sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK)
			rc = agg_fail(db);
		sqlite3_free(sql);
	}
	return rc;
}

int job_agg_create(sqlite3 *db)
{
	char *msg = NULL;

	if (sqlite3_exec(db,
			 "CREATE TABLE agg_stacks (node INTEGER NOT NULL, id INTEGER NOT NULL, "
			 "parent_id INTEGER, frame_id INTEGER NOT NULL, depth INTEGER NOT NULL, "
			 "PRIMARY KEY (node, id)) WITHOUT ROWID; "
			 "CREATE TABLE agg_samples (node INTEGER NOT NULL, thread_id INTEGER NOT "
			 "NULL, stack_id INTEGER NOT NULL, metric_id INTEGER NOT NULL, context_id "
			 "INTEGER NOT NULL, count INTEGER, value INTEGER, PRIMARY KEY (node, "
			 "metric_id, thread_id, stack_id, context_id)) WITHOUT ROWID; "
			 "CREATE TABLE job_agg (node INTEGER PRIMARY KEY, stacks INTEGER NOT NULL, "
			 "samples INTEGER NOT NULL)",
			 NULL, NULL, &msg) == SQLITE_OK)
		return 0;
	log_error("cannot write the job database: %s", msg ? msg : sqlite3_errmsg(db));
	sqlite3_free(msg);
	return -EIO;
}

int job_agg_write(sqlite3 *db, size_t node)
{
	struct agg a = { 0 };
	int rc;

	/* The samples' columns as the short ones copy them, sums only, no Python frames. */
	if (agg_count(db, "SELECT group_concat(name, ',') = "
			  "'thread_id,stack_id,metric_id,context_id,count,value' FROM "
			  "pragma_table_info('samples', 'p')") != 1 ||
	    agg_count(db, "SELECT count(*) FROM p.functions WHERE language = 'python'") != 0 ||
	    agg_count(db, "SELECT count(*) FROM p.metrics mt WHERE (aggregation != 'sum' OR kind "
			  "NOT IN ('cpu', 'mpi')) AND EXISTS (SELECT 1 FROM p.samples s WHERE "
			  "s.metric_id = mt.id)") != 0) {
		log_debug("node %zu: no short stacks (Python frames, samples of waits, memory or "
			  "counters)",
			  node);
		return 0;
	}
	rc = agg_read(&a, db);
	if (!rc)
		rc = agg_map(&a);
	if (rc == -EINVAL || rc == -E2BIG) {
		log_debug("node %zu: no short stacks (%s)", node,
			  rc == -EINVAL ? "a stack before its parent" : "a deeply inlined stack");
		rc = 0;
	} else if (!rc) {
		rc = agg_store(&a, db, node);
		log_debug("node %zu: %zu stacks kept as %zu short ones", node, a.nstacks, a.nout);
	}
	hash_index_release(&a.index);
	FREE_ALL(a.frames, a.stacks, a.out, a.anchor, a.mapped);
	return rc;
}
