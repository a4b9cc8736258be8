/* SPDX-License-Identifier: MIT */
/* Allocation sites of known totals: what the memory-consumption programs share. */
#ifndef PCOLLECT_TESTS_MEM_SITES_H
#define PCOLLECT_TESTS_MEM_SITES_H

#include <stdlib.h>
#include <unistd.h>

/*
 * A site is a function of its own that calls the allocator itself, so that its totals are
 * its function's (tests/e2e/mem-known.py holds the answers). What a site does more than once
 * is a macro here, not a function: a function, even inlined, would be a frame of its own
 * between the site and the allocator.
 */
#define SITE __attribute__((noinline)) static void

/* Keeps the allocation p, which the compiler could otherwise prove unused and drop. */
#define KEEP(p) __asm__ volatile("" : : "r"(p) : "memory")

/* blocks[0] .. blocks[n - 1] = malloc(size), held; i is the caller's index, which size may use. */
#define MALLOC_EACH(i, blocks, n, size)                                                            \
	do {                                                                                       \
		for ((i) = 0; (i) < (n); (i)++) {                                                  \
			(blocks)[i] = malloc(size);                                                \
			KEEP((blocks)[i]);                                                         \
		}                                                                                  \
	} while (0)

/* n pairs of malloc(size) and its free: n allocations of size bytes, each a temporary. */
#define CHURN(n, size)                                                                             \
	do {                                                                                       \
		for (long i_ = 0; i_ < (n); i_++) {                                                \
			void *p_ = malloc(size);                                                   \
			KEEP(p_);                                                                  \
			free(p_);                                                                  \
		}                                                                                  \
	} while (0)

/* The programs' last word, "done", written without stdio (its buffers would be allocations
   of the C runtime's). Returns main()'s exit status. */
static inline int mem_say_done(void)
{
	return write(1, "done\n", 5) == 5 ? 0 : 1;
}

#endif
