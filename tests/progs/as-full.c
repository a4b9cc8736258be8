/* SPDX-License-Identifier: MIT */
/*
 * Known behaviour for a program that leaves no address space free: it maps every free range
 * it can (PROT_NONE, nothing committed), then burns MS ms of CPU in calls of ever-changing
 * depth and path (so a profiler's stream grows fast and needs new windows), unmaps it all
 * and prints what it did, the same with and without the collector.
 *   as-full MS
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "burn.h"

#define MAX_MAPS 4096

static void *maps[MAX_MAPS];
static size_t sizes[MAX_MAPS];
static int nmaps;

/* Map ranges from 64 TiB down to a page, each size until the kernel refuses it. */
static void fill(void)
{
	size_t size;

	for (size = (size_t)1 << 46; size >= 4096; size >>= 1)
		for (;;) {
			void *p;

			if (nmaps == MAX_MAPS)
				return;
			p = mmap(NULL, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
				 -1, 0);
			if (p == MAP_FAILED)
				break;
			maps[nmaps] = p;
			sizes[nmaps++] = size;
		}
}

static unsigned seed = 1;
static volatile unsigned sink;

static __attribute__((noinline, noclone)) void down_a(int depth);
static __attribute__((noinline, noclone)) void down_b(int depth);

static void down(int depth)
{
	seed = seed * 1103515245u + 12345u;
	if (depth <= 0)
		BURN(BURN_CHUNK / 16);
	else if (seed >> 16 & 1)
		down_a(depth - 1);
	else
		down_b(depth - 1);
}

static __attribute__((noinline, noclone)) void down_a(int depth)
{
	down(depth);
	sink += 1;
}

static __attribute__((noinline, noclone)) void down_b(int depth)
{
	down(depth);
	sink += 2;
}

/* Grow the stack to its deepest first: a stack that grows later needs address space. */
static __attribute__((noinline, noclone)) void touch_stack(void)
{
	volatile char room[1 << 20];

	room[0] = room[sizeof(room) - 1] = 1;
}

int main(int argc, char **argv)
{
	long long end;
	double ms = argc > 1 ? atof(argv[1]) : 1000;
	int i, full;

	touch_stack();
	fill();
	full = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) == MAP_FAILED;
	end = burn_cpu_ns() + (long long)(ms * 1e6);
	while (burn_cpu_ns() < end)
		down(500 + (int)(seed >> 20) % 1500);
	for (i = 0; i < nmaps; i++)
		munmap(maps[i], sizes[i]);
	printf("address space %s, burned %.0f ms\n", full ? "full" : "not full", ms);
	return 0;
}
