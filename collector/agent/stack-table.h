/* SPDX-License-Identifier: MIT */
/* Per-thread table of distinct call stacks: a repeated stack is written once, then named by id. */
#ifndef PCOLLECT_COLLECTOR_STACK_TABLE_H
#define PCOLLECT_COLLECTOR_STACK_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Open addressing over a power-of-two array of slots; the frames of every stack are copied
 * into one pool, so lookups compare whole stacks (no false matches from hash collisions).
 * All memory is mapped by stack_table_init() (MAP_NORESERVE: pages cost only when touched),
 * and stack_table_find()/stack_table_add() allocate nothing and take no lock: they are
 * async-signal-safe and meant for the sampling handler. When the table or pool is full,
 * the caller resets it and starts over with fresh ids (ids keep growing, so they stay unique
 * in the stream). Not thread-safe: one table per thread.
 */
struct stack_table_slot {
	uint64_t hash;  /* 0: empty */
	uint64_t id;    /* id given to the stack, from 1 */
	uint32_t start; /* first frame in the pool */
	uint32_t depth; /* frames */
};

struct stack_table {
	struct stack_table_slot *slots;
	size_t nslots;    /* power of two */
	size_t used;      /* slots in use */
	uint64_t *pool;   /* frames of all stacks, back to back */
	size_t pool_cap;  /* frames */
	size_t pool_used; /* frames */
	uint64_t next_id; /* id of the next stack added */
	size_t map_len;   /* bytes mapped (slots and pool) */
};

/*
 * Map a table with room for nslots stacks (rounded up to a power of two, at least 16) and
 * pool_frames frames in all. Returns 0 or -errno. Release with stack_table_release().
 */
int stack_table_init(struct stack_table *t, size_t nslots, size_t pool_frames);
void stack_table_release(struct stack_table *t);

/* The hash of a stack (never 0). */
uint64_t stack_table_hash(const uint64_t *ips, uint32_t depth, uint32_t flags);

/* The id of the stack ips[0..depth) with flags, or 0 when it is not in the table. */
uint64_t stack_table_find(const struct stack_table *t, uint64_t hash, const uint64_t *ips,
			  uint32_t depth);

/*
 * Add a stack known not to be in the table; returns its new id, or 0 when the table is full
 * (more than 3/4 of the slots used, or the pool cannot take the frames).
 */
uint64_t stack_table_add(struct stack_table *t, uint64_t hash, const uint64_t *ips, uint32_t depth);

/* Forget every stack; ids continue from where they were. */
void stack_table_reset(struct stack_table *t);

#endif
