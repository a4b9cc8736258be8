/* SPDX-License-Identifier: MIT */
/* An open-addressing hash map from 64-bit keys to non-negative ints. */
#ifndef PCOLLECT_REPORT_KEYMAP_H
#define PCOLLECT_REPORT_KEYMAP_H

#include <stddef.h>
#include <stdint.h>

#include "common/hash.h"

struct keymap {
	uint64_t *keys;
	int *values; /* -1 marks an empty slot */
	size_t cap, n;
};

void keymap_init(struct keymap *k);
void keymap_release(struct keymap *k);
/* The value stored for key, or -1. */
int keymap_get(const struct keymap *k, uint64_t key);
/* Store value (>= 0) for key, replacing any old one. Returns 0 or -ENOMEM. */
int keymap_put(struct keymap *k, uint64_t key, int value);

#endif
