/* SPDX-License-Identifier: MIT */
/* Per-thread table of distinct call stacks: lookups and inserts without malloc or locks. */
#include "collector/agent/stack-table.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include "collector/agent/probe.h"
#include "common/hash.h"

int stack_table_init(struct stack_table *t, size_t nslots, size_t pool_frames)
{
	size_t n = 16, slots_len;
	void *p;

	memset(t, 0, sizeof(*t));
	while (n < nslots)
		n <<= 1;
	if (pool_frames == 0 || pool_frames > UINT32_MAX)
		return -EINVAL;
	slots_len = n * sizeof(struct stack_table_slot);
	t->map_len = slots_len + pool_frames * sizeof(uint64_t);
	p = mmap(NULL, t->map_len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED) {
		int err = errno;
		memset(t, 0, sizeof(*t));
		return -err;
	}
	t->slots = p;
	t->nslots = n;
	t->pool = (uint64_t *)((char *)p + slots_len);
	t->pool_cap = pool_frames;
	t->next_id = 1;
	return 0;
}

void stack_table_release(struct stack_table *t)
{
	if (t->slots)
		munmap(t->slots, t->map_len);
	memset(t, 0, sizeof(*t));
}

/*
 * The words folded with hash_combine(): common/hash.h is inline arithmetic (no call, no
 * memory but the stack), so the signal handler may use it like everyone else.
 */
uint64_t stack_table_hash(const uint64_t *ips, uint32_t depth, uint32_t flags)
{
	uint64_t h = hash_mix(((uint64_t)flags << 32) ^ depth);
	uint32_t i;

	for (i = 0; i < depth; i++)
		h = hash_combine(h, ips[i]);
	return h ? h : 1; /* 0 marks an empty slot */
}

uint64_t stack_table_find(const struct stack_table *t, uint64_t hash, const uint64_t *ips,
			  uint32_t depth)
{
	size_t i;

	if (!t->slots)
		return 0;
	PROBE_EACH(i, hash, t->nslots - 1) {
		const struct stack_table_slot *s = &t->slots[i];

		if (s->hash == 0)
			return 0;
		if (s->hash == hash && s->depth == depth &&
		    !memcmp(t->pool + s->start, ips, depth * sizeof(uint64_t)))
			return s->id;
	}
}

uint64_t stack_table_add(struct stack_table *t, uint64_t hash, const uint64_t *ips, uint32_t depth)
{
	struct stack_table_slot *s;
	size_t i;

	if (!t->slots || !probe_has_room(t->used, t->nslots) || depth > t->pool_cap - t->pool_used)
		return 0;
	PROBE_EACH(i, hash, t->nslots - 1)
		if (!t->slots[i].hash)
			break;
	s = &t->slots[i];
	memcpy(t->pool + t->pool_used, ips, depth * sizeof(uint64_t));
	s->start = (uint32_t)t->pool_used;
	s->depth = depth;
	s->id = t->next_id++;
	s->hash = hash;
	t->pool_used += depth;
	t->used++;
	return s->id;
}

void stack_table_reset(struct stack_table *t)
{
	/* Only an insertion writes a slot, and counts it: a table with none is all zero (a new
	   one's fresh pages are, and clearing them would fault every page in: at every
	   thread's start, most of the agent's cost for a short program). */
	if (!t->slots || !t->used)
		return;
	memset(t->slots, 0, t->nslots * sizeof(struct stack_table_slot));
	t->used = 0;
	t->pool_used = 0;
}
