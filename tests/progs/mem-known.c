/* SPDX-License-Identifier: MIT */
/* Allocation sites of exactly known totals, for -collect memory-consumption's known answers. */
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "mem-sites.h"

/*
 * The sites (mem-sites.h), one comment each. Nothing of stdio is used: its buffers would be
 * allocations of the C runtime's.
 *
 *   fixed_loop     1000 x malloc(100), held, then freed (the last freed first): 100000 bytes,
 *                  1000 allocations, all freed, 1 temporary (the last one: freed with no
 *                  allocation after it)
 *   grow_buffer    realloc from NULL to 64, 128, ... 32768 bytes (10 calls), then free:
 *                  65472 bytes, 10 allocations, all freed, 1 temporary (the last block; a
 *                  realloc's release of the block it replaces is not one)
 *   leak_site      malloc(4321), never freed: leaked 4321
 *   held_together  5 blocks of 100000 .. 500000 bytes live together (1500000), then freed:
 *                  the process's peak is 1500000 + the 4321 leaked before, reached there
 *   map_site       mmap of 3 anonymous pages, unmapped one page then the other two:
 *                  3 pages allocated and freed, 1 allocation, 1 free
 *   calloc_site    calloc(10, 100): 1000 bytes, freed (a temporary)
 *   strings_site   strdup("hello, world") 13 bytes and strndup(.., 5) 6 bytes, through
 *                  the C library's own malloc, freed (the second a temporary)
 *   aligned_site   posix_memalign 256, aligned_alloc 512, memalign 300, valloc 100,
 *                  pvalloc 100 (a whole page), reallocarray 10 x 50: each freed (the last a
 *                  temporary)
 * held_together's last block is a temporary too.
 */

static void *blocks[1000];

SITE fixed_loop(void)
{
	int i;

	MALLOC_EACH(i, blocks, 1000, 100);
	for (i = 999; i >= 0; i--)
		free(blocks[i]);
}

SITE grow_buffer(void)
{
	char *buf = NULL;
	size_t size;

	for (size = 64; size <= 32768; size *= 2) {
		buf = realloc(buf, size);
		KEEP(buf);
		buf[size - 1] = 1;
	}
	free(buf);
}

static void *leaked;

SITE leak_site(void)
{
	leaked = malloc(4321);
	KEEP(leaked);
}

SITE held_together(void)
{
	int i;

	MALLOC_EACH(i, blocks, 5, (size_t)(i + 1) * 100000);
	for (i = 0; i < 5; i++)
		free(blocks[i]);
}

SITE map_site(void)
{
	long page = sysconf(_SC_PAGESIZE);
	char *p = mmap(NULL, (size_t)(3 * page), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		_exit(3);
	p[0] = 1;
	munmap(p + page, (size_t)page);
	munmap(p, (size_t)(3 * page));
}

SITE calloc_site(void)
{
	void *p = calloc(10, 100);

	KEEP(p);
	free(p);
}

SITE strings_site(void)
{
	char *a = strdup("hello, world"), *b = strndup("hello, world", 5);

	KEEP(a);
	KEEP(b);
	free(a);
	free(b);
}

SITE aligned_site(void)
{
	void *p[6] = { 0 };
	int i;

	if (posix_memalign(&p[0], 64, 256))
		_exit(4);
	p[1] = aligned_alloc(64, 512);
	p[2] = memalign(128, 300);
	p[3] = valloc(100);
	p[4] = pvalloc(100);
	p[5] = reallocarray(NULL, 10, 50);
	for (i = 0; i < 6; i++) {
		KEEP(p[i]);
		free(p[i]);
	}
}

int main(void)
{
	fixed_loop();
	grow_buffer();
	leak_site();
	held_together();
	map_site();
	calloc_site();
	strings_site();
	aligned_site();
	return mem_say_done();
}
