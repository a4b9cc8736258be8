/* SPDX-License-Identifier: MIT */
/* An open-addressing hash map from 64-bit keys to non-negative ints (linear probing). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "report/bigmem.h"
#include "report/keymap.h"

void keymap_init(struct keymap *k)
{
	memset(k, 0, sizeof(*k));
}

void keymap_release(struct keymap *k)
{
	free(k->keys);
	free(k->values);
	memset(k, 0, sizeof(*k));
}

int keymap_get(const struct keymap *k, uint64_t key)
{
	size_t i;

	if (!k->cap)
		return -1;
	for (i = hash_mix(key) & (k->cap - 1); k->values[i] >= 0; i = (i + 1) & (k->cap - 1))
		if (k->keys[i] == key)
			return k->values[i];
	return -1;
}

static void slot_put(uint64_t *keys, int *values, size_t cap, uint64_t key, int value)
{
	size_t i;

	for (i = hash_mix(key) & (cap - 1); values[i] >= 0; i = (i + 1) & (cap - 1))
		if (keys[i] == key)
			break;
	keys[i] = key;
	values[i] = value;
}

static int grow(struct keymap *k)
{
	size_t cap = k->cap ? 2 * k->cap : 1024, i;
	uint64_t *keys = big_malloc(cap * sizeof(*keys));
	int *values = big_malloc(cap * sizeof(*values));

	if (!keys || !values) {
		free(keys);
		free(values);
		return -ENOMEM;
	}
	memset(values, 0xff, cap * sizeof(*values));
	for (i = 0; i < k->cap; i++)
		if (k->values[i] >= 0)
			slot_put(keys, values, cap, k->keys[i], k->values[i]);
	free(k->keys);
	free(k->values);
	k->keys = keys;
	k->values = values;
	k->cap = cap;
	return 0;
}

int keymap_put(struct keymap *k, uint64_t key, int value)
{
	if ((k->n + 1) * 2 > k->cap && grow(k))
		return -ENOMEM;
	if (keymap_get(k, key) < 0)
		k->n++;
	slot_put(k->keys, k->values, k->cap, key, value);
	return 0;
}
