/* SPDX-License-Identifier: MIT */
/* Regions the program names (pcollect_region_begin/end): records in the thread's own stream. */
#include <stdlib.h>
#include <string.h>

#include "collector/agent/agent-private.h"

/*
 * A region is written by the thread that enters it, into its own stream, so the records fall
 * between that thread's samples in time order (docs/raw-format.md, REGION_BEGIN). The names
 * of the open regions are kept (the outermost ones, as far as room goes) so that a fork
 * child's first stream says which regions it is in.
 */
#define REGION_NAMES 4096 /* bytes of names kept per thread */

struct agent_regions {
	uint32_t depth;                     /* regions open */
	uint32_t kept;                      /* of which the outermost have their names here */
	uint16_t end[RAW_MAX_REGION_DEPTH]; /* end of each kept name in names */
	char names[REGION_NAMES];
};

/* The calling thread's slot: ours, or one made by tid (a thread older than the agent). */
static struct agent_thread *self_thread(void)
{
	struct agent_thread *t = agent_self;

	if (t && atomic_load(&t->state) == AGENT_THREAD_LIVE)
		return t;
	t = agent_thread_find_tid(agent_gettid());
	if (t)
		agent_self = t;
	return t;
}

/* From t itself, our signal blocked: its handler, which shares the writer, waits. */
static void write_region(struct agent_thread *t, bool begin, uint32_t depth, const char *name)
{
	int expected = 0;
	sigset_t old;

	agent_block_sampling(&old);
	if (atomic_load(&t->state) == AGENT_THREAD_LIVE && !t->write_stopped &&
	    atomic_compare_exchange_strong(&t->busy, &expected, 1)) {
		int64_t now = raw_header_now(&t->hdr);

		/* A sum counts in the region of its time (finalizer/regions.c): the short MPI
		   calls made so far are written as of just before this record. */
		agent_mpi_thread_sums(t, now - 1);
		if (begin)
			raw_writer_region_begin(&t->w, now, depth, name);
		else
			raw_writer_region_end(&t->w, now, depth);
		agent_account(t);
		agent_thread_give(t);
	}
	agent_restore_mask(&old);
}

int agent_region_begin(const char *name)
{
	struct agent_thread *t = self_thread();
	struct agent_regions *r;
	size_t len, at;

	if (!t)
		return -1;
	if (!name)
		name = "";
	if (!t->regions && !(t->regions = calloc(1, sizeof(*t->regions))))
		return -1;
	r = t->regions;
	len = strnlen(name, RAW_MAX_REGION_NAME);
	at = r->kept ? r->end[r->kept - 1] : 0;
	if (r->kept == r->depth && r->kept < RAW_MAX_REGION_DEPTH && at + len <= REGION_NAMES) {
		memcpy(r->names + at, name, len);
		r->end[r->kept++] = (uint16_t)(at + len);
	}
	r->depth++;
	write_region(t, true, r->depth, name);
	return 0;
}

int agent_region_end(void)
{
	struct agent_thread *t = self_thread();
	struct agent_regions *r = t ? t->regions : NULL;

	if (!r || !r->depth)
		return -1;
	write_region(t, false, r->depth, NULL);
	r->depth--;
	if (r->kept > r->depth)
		r->kept = r->depth;
	return 0;
}

void agent_region_restart(struct agent_thread *t)
{
	struct agent_regions *r = t->regions;
	char name[RAW_MAX_REGION_NAME + 1];
	uint32_t d;

	if (!r)
		return;
	for (d = 0; d < r->depth; d++) {
		/* Deeper regions whose names found no room are named so. */
		const char *src = "[unknown]";
		size_t len = strlen(src);

		if (d < r->kept) {
			size_t from = d ? r->end[d - 1] : 0;

			src = r->names + from;
			len = r->end[d] - from;
		}
		memcpy(name, src, len);
		name[len] = '\0';
		write_region(t, true, d + 1, name);
	}
}

void agent_region_free(struct agent_thread *t)
{
	free(t->regions);
	t->regions = NULL;
}
