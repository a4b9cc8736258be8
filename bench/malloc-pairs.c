/* SPDX-License-Identifier: MIT */
/* bench/memory-overhead.py's workload: N small malloc/free pairs, from a few call sites. */
#include <stdio.h>
#include <stdlib.h>

#define KEEP(p) __asm__ volatile("" : : "r"(p) : "memory")

/*
 * Three sites at different depths, sizes 16 to 256 bytes, each block freed at once (what
 * heaptrack's temporary allocations are): the allocator's fast path, so the profiler's cost
 * per call is what the run measures.
 */
__attribute__((noinline)) static void pair(size_t n)
{
	void *p = malloc(n);

	KEEP(p);
	free(p);
}

__attribute__((noinline)) static void site_a(long i)
{
	pair(16 + (size_t)(i & 15) * 8);
}

__attribute__((noinline)) static void site_b(long i)
{
	site_a(i);
	pair(64);
}

__attribute__((noinline)) static void site_c(long i)
{
	void *p = malloc(256);

	KEEP(p);
	site_b(i);
	free(p);
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 10000000, i;

	/* 4 pairs an iteration */
	for (i = 0; i < n / 4; i++)
		site_c(i);
	printf("pairs=%ld\n", n / 4 * 4);
	return 0;
}
