/* SPDX-License-Identifier: MIT */
/* Linear probing over the agent's fixed tables: one loop, async-signal-safe, no allocation. */
#ifndef PCOLLECT_COLLECTOR_AGENT_PROBE_H
#define PCOLLECT_COLLECTOR_AGENT_PROBE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The agent's hash tables (the stack table, memory-consumption's live blocks and stack
 * entries, the MPI and wait call sites, the MPI shim's requests) are arrays of a power of two
 * slots, searched from the sampling handler, the allocator wrappers and the interposers:
 * nothing here allocates, locks or calls out. A key sits in the first slot free from its
 * home slot on, wrapping around. A table is kept below full (probe_has_room()), so that every
 * search meets an empty slot and ends.
 */

/*
 * Visit slot i of a table of mask + 1 slots from home on, wrapping around, until the body
 * breaks or returns (a for statement).
 */
#define PROBE_EACH(i, home, mask) for ((i) = (home) & (mask);; (i) = ((i) + 1) & (mask))

/*
 * Where a search for key ends in a table whose slots (slot_size bytes each) hold their key as
 * the uint64_t at byte key_off, 0 when empty: the slot holding key, or the empty slot where
 * key would go. key is never 0.
 */
static inline size_t probe_find(const void *slots, size_t slot_size, size_t key_off, size_t mask,
				size_t home, uint64_t key)
{
	size_t i;

	PROBE_EACH(i, home, mask) {
		uint64_t k = *(const uint64_t *)((const char *)slots + i * slot_size + key_off);

		if (k == key || !k)
			return i;
	}
}

/* probe_find() in the array slots whose key is the field key_field of each slot. */
#define PROBE_FIND(slots, key_field, mask, home, key)                                              \
	probe_find((slots), sizeof(*(slots)),                                                      \
		   (size_t)((const char *)&(slots)->key_field - (const char *)(slots)), (mask),    \
		   (home), (key))

/* Whether a table of nslots slots holding used keys takes one more (at most 3/4 full). */
static inline bool probe_has_room(size_t used, size_t nslots)
{
	return (used + 1) * 4 <= nslots * 3;
}

/*
 * Backward-shift deletion: with slot hole emptied, whether the key in slot j (a later slot of
 * the same run), whose home is home, stays where it is. It stays when home lies cyclically in
 * (hole, j]: moved into the hole it would sit before its home, where no search finds it.
 */
static inline bool probe_stays(size_t hole, size_t home, size_t j)
{
	return hole <= j ? (hole < home && home <= j) : (hole < home || home <= j);
}

#endif
