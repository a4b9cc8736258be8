/* SPDX-License-Identifier: MIT */
/* 64-bit hash mixing shared by the agent, the finalizer and preport. */
#ifndef PCOLLECT_COMMON_HASH_H
#define PCOLLECT_COMMON_HASH_H

#include <stddef.h>
#include <stdint.h>

/* splitmix64's finalizer: every input bit moves every output bit. */
static inline uint64_t hash_mix(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

/* Fold v into the running hash h (order matters). */
static inline uint64_t hash_combine(uint64_t h, uint64_t v)
{
	return hash_mix(h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2)));
}

/* FNV-1a over len bytes, then mixed: for strings, paths and other byte keys. */
static inline uint64_t hash_bytes(const void *data, size_t len)
{
	const unsigned char *p = data;
	uint64_t h = 0xcbf29ce484222325ULL;
	size_t i;

	for (i = 0; i < len; i++) {
		h ^= p[i];
		h *= 0x100000001b3ULL;
	}
	return hash_mix(h ^ len);
}

#endif
