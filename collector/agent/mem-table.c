/* SPDX-License-Identifier: MIT */
/* memory-consumption's tables: live blocks and anonymous mappings, in mapped memory. */
#include "collector/agent/mem-table.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#define BLOCKS_FIRST 4096 /* slots of a new table: 96 KiB, a page of it touched per use */

static void *map(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static int blocks_alloc(struct mem_blocks *b, uint64_t nslots)
{
	uint32_t bits = 0;

	while ((1ull << bits) < nslots)
		bits++;
	b->slots = map((size_t)nslots * sizeof(*b->slots));
	if (!b->slots)
		return -ENOMEM;
	b->mask = nslots - 1;
	b->shift = 64 - bits;
	b->used = 0;
	b->mapped = nslots * sizeof(*b->slots);
	return 0;
}

int mem_blocks_init(struct mem_blocks *b)
{
	memset(b, 0, sizeof(*b));
	return blocks_alloc(b, BLOCKS_FIRST);
}

void mem_blocks_release(struct mem_blocks *b)
{
	if (b->slots)
		munmap(b->slots, (size_t)b->mapped);
	memset(b, 0, sizeof(*b));
}

int mem_blocks_grow(struct mem_blocks *b)
{
	struct mem_blocks nb;
	uint64_t i, addr;

	if (!b->slots)
		return mem_blocks_init(b);
	if (blocks_alloc(&nb, (b->mask + 1) * 2))
		return -ENOMEM;
	for (i = 0; i <= b->mask; i++) {
		if (!(addr = b->slots[i].addr))
			continue;
		nb.slots[PROBE_FIND(nb.slots, addr, nb.mask, mem_blocks_index(&nb, addr), addr)] =
			b->slots[i];
		nb.used++;
	}
	munmap(b->slots, (size_t)b->mapped);
	*b = nb;
	return 0;
}

bool mem_blocks_has(const struct mem_blocks *b, uint64_t addr)
{
	if (!b->slots || !addr)
		return false;
	return b->slots[PROBE_FIND(b->slots, addr, b->mask, mem_blocks_index(b, addr), addr)]
		       .addr == addr;
}

void mem_blocks_clear(struct mem_blocks *b)
{
	if (!b->slots)
		return;
	/* MADV_DONTNEED gives the pages back: they read as zeros (empty slots) again. */
	madvise(b->slots, (size_t)b->mapped, MADV_DONTNEED);
	b->used = 0;
}

/* ---- regions ---------------------------------------------------------------------------- */

void mem_regions_init(struct mem_regions *r)
{
	memset(r, 0, sizeof(*r));
}

void mem_regions_release(struct mem_regions *r)
{
	if (r->v)
		munmap(r->v, (size_t)r->mapped);
	memset(r, 0, sizeof(*r));
}

void mem_regions_clear(struct mem_regions *r)
{
	r->n = 0;
}

static int regions_reserve(struct mem_regions *r, size_t need)
{
	size_t cap = r->cap ? r->cap : 256;
	struct mem_region *v;

	if (need <= r->cap)
		return 0;
	while (cap < need)
		cap *= 2;
	v = map(cap * sizeof(*v));
	if (!v)
		return -ENOMEM;
	if (r->n)
		memcpy(v, r->v, r->n * sizeof(*v));
	if (r->v)
		munmap(r->v, (size_t)r->mapped);
	r->v = v;
	r->cap = cap;
	r->mapped = cap * sizeof(*v);
	return 0;
}

/* The first region whose hi is above addr (r->n when none). */
static size_t regions_find(const struct mem_regions *r, uint64_t addr)
{
	size_t lo = 0, hi = r->n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (r->v[mid].hi <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

bool mem_regions_covers(const struct mem_regions *r, uint64_t addr)
{
	size_t i = regions_find(r, addr);

	return i < r->n && r->v[i].lo <= addr;
}

int mem_regions_add(struct mem_regions *r, const struct mem_region *reg)
{
	size_t i;

	if (reg->hi <= reg->lo)
		return 0;
	if (regions_reserve(r, r->n + 1))
		return -ENOMEM;
	i = regions_find(r, reg->lo);
	memmove(r->v + i + 1, r->v + i, (r->n - i) * sizeof(*r->v));
	r->v[i] = *reg;
	r->n++;
	return 0;
}

int64_t mem_regions_remove(struct mem_regions *r, uint64_t lo, uint64_t hi, mem_region_fn fn,
			   void *ctx)
{
	size_t i = regions_find(r, lo);
	int64_t taken = 0;

	if (hi <= lo)
		return 0;
	/* A cut inside one region leaves two: make room first so nothing fails half done. */
	if (i < r->n && r->v[i].lo < lo && r->v[i].hi > hi && regions_reserve(r, r->n + 1))
		return -ENOMEM;
	while (i < r->n && r->v[i].lo < hi) {
		struct mem_region *g = &r->v[i], piece = *g;

		piece.lo = g->lo > lo ? g->lo : lo;
		piece.hi = g->hi < hi ? g->hi : hi;
		taken += (int64_t)(piece.hi - piece.lo);
		if (piece.lo == g->lo && piece.hi == g->hi) {
			/* the whole region: its frees are counted here */
			if (fn)
				fn(ctx, &piece);
			memmove(r->v + i, r->v + i + 1, (r->n - i - 1) * sizeof(*r->v));
			r->n--;
			continue;
		}
		piece.count = 0; /* a part: bytes only */
		if (fn)
			fn(ctx, &piece);
		if (piece.lo == g->lo) {
			g->lo = piece.hi;
		} else if (piece.hi == g->hi) {
			g->hi = piece.lo;
		} else {
			struct mem_region upper = *g;

			upper.lo = piece.hi;
			upper.count = 0;
			g->hi = piece.lo;
			memmove(r->v + i + 2, r->v + i + 1, (r->n - i - 1) * sizeof(*r->v));
			r->v[i + 1] = upper;
			r->n++;
			break;
		}
		i++;
	}
	return taken;
}
