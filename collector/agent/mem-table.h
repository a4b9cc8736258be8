/* SPDX-License-Identifier: MIT */
/* memory-consumption's tables of live blocks (address -> stack, size) and anonymous mappings. */
#ifndef PCOLLECT_COLLECTOR_MEM_TABLE_H
#define PCOLLECT_COLLECTOR_MEM_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "collector/agent/probe.h"

/*
 * The blocks: open addressing with linear probing over a power-of-two array, keyed by the
 * block's address (never 0), with backward-shift deletion (no tombstones: a table that sees
 * 100 million malloc/free pairs stays as short as its live set). Its memory is mapped
 * (MAP_NORESERVE), never malloc'ed: the table sits under malloc. Growth doubles it when it
 * passes half full and rehashes. Not thread-safe: the agent holds its lock around each call
 * once the program has more than one thread. The lookups are inline: they are the agent's
 * hot path.
 */
struct mem_block {
	uint64_t addr;  /* 0: empty slot */
	uint64_t size;  /* bytes accounted to the stack (an estimate when sampled) */
	uint32_t entry; /* the aggregate entry (struct raw_mem_entry index) */
	uint32_t count; /* allocations it stands for (1; more when sampled) */
};

struct mem_blocks {
	struct mem_block *slots;
	uint64_t mask;  /* slots - 1 */
	uint32_t shift; /* 64 - log2(slots): the hash's top bits index the table */
	uint64_t used;
	uint64_t mapped; /* bytes mapped */
};

/* Map an empty table. 0 or -errno. */
int mem_blocks_init(struct mem_blocks *b);
void mem_blocks_release(struct mem_blocks *b);
/* Double the table (inserts call it). 0 or -ENOMEM (the table is unchanged). */
int mem_blocks_grow(struct mem_blocks *b);

static inline uint64_t mem_blocks_index(const struct mem_blocks *b, uint64_t addr)
{
	/* Fibonacci hashing: block addresses differ in their middle bits. */
	return (addr * 0x9e3779b97f4a7c15ull) >> b->shift;
}

/*
 * Insert the block (addr, size, entry, count). Returns 0, 1 when a block at that address was
 * there already (its old contents in *old: the program freed it where we could not see, and
 * the caller accounts it freed), or -ENOMEM when the table could not grow (nothing inserted).
 * Fields are stored one by one: a struct built on the stack and copied whole would be read
 * back before its stores reach the cache (a store-forwarding stall on the hot path).
 */
static inline int mem_blocks_insert(struct mem_blocks *b, uint64_t addr, uint64_t size,
				    uint32_t entry, uint32_t count, struct mem_block *old)
{
	struct mem_block *slots, *s;
	int r = 0;

	if ((b->used + 1) * 2 > b->mask + 1 && mem_blocks_grow(b))
		return -12; /* -ENOMEM */
	slots = b->slots;
	s = &slots[PROBE_FIND(slots, addr, b->mask, mem_blocks_index(b, addr), addr)];
	if (s->addr == addr) {
		*old = *s;
		r = 1;
	} else {
		b->used++;
	}
	s->addr = addr;
	s->size = size;
	s->entry = entry;
	s->count = count;
	return r;
}

/* Remove the block at addr into *out: 1, or 0 when it is not there. */
static inline int mem_blocks_remove(struct mem_blocks *b, uint64_t addr, struct mem_block *out)
{
	size_t i, j;

	if (!b->slots)
		return 0;
	i = PROBE_FIND(b->slots, addr, b->mask, mem_blocks_index(b, addr), addr);
	if (!b->slots[i].addr)
		return 0;
	*out = b->slots[i];
	/* Backward shift: move up every later entry of the run that may sit in the hole. */
	PROBE_EACH(j, i + 1, b->mask) {
		if (!b->slots[j].addr)
			break;
		if (probe_stays(i, mem_blocks_index(b, b->slots[j].addr), j))
			continue;
		b->slots[i] = b->slots[j];
		i = j;
	}
	b->slots[i].addr = 0;
	b->used--;
	return 1;
}

/* Whether addr is a live block (tests). */
bool mem_blocks_has(const struct mem_blocks *b, uint64_t addr);
/* Empty the table, keeping its memory (a fork child: the parent's blocks are not its own). */
void mem_blocks_clear(struct mem_blocks *b);

/*
 * The anonymous mappings (mmap, munmap, mremap): [lo, hi) ranges, page aligned, kept sorted
 * and disjoint. munmap may cut any part of any of them, so a removal reports each piece it
 * takes with the entry it was accounted to.
 */
struct mem_region {
	uint64_t lo, hi;
	uint32_t entry;
	uint32_t count; /* allocations it stands for (1, more when sampled); when a region is
			   cut in two, the upper part gets 0, so its frees add up to its count */
	double scale;   /* bytes accounted per byte mapped (1, more when sampled) */
};

struct mem_regions {
	struct mem_region *v;
	size_t n, cap;
	uint64_t mapped; /* bytes mapped */
};

void mem_regions_init(struct mem_regions *r);
void mem_regions_release(struct mem_regions *r);
void mem_regions_clear(struct mem_regions *r);
/* Whether addr lies in a region. */
bool mem_regions_covers(const struct mem_regions *r, uint64_t addr);
/* Add [lo, hi) (not overlapping any region: the kernel just mapped it). 0 or -ENOMEM. */
int mem_regions_add(struct mem_regions *r, const struct mem_region *reg);
/*
 * Take [lo, hi) out of every region it overlaps, calling fn(ctx, piece) for each piece
 * removed (piece.lo/hi the part taken; the rest of a region stays). Returns the bytes taken,
 * or -ENOMEM when a region would have to split and no room could be had (nothing changed).
 */
typedef void (*mem_region_fn)(void *ctx, const struct mem_region *piece);
int64_t mem_regions_remove(struct mem_regions *r, uint64_t lo, uint64_t hi, mem_region_fn fn,
			   void *ctx);

#endif
