/* SPDX-License-Identifier: MIT */
/* Unit tests of collector/agent/probe.h: linear probing, wrap-around, room, backward shift. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "collector/agent/probe.h"
#include "tests/unit/unit.h"

#define SLOTS 16

/* A slot whose key is not its first field: PROBE_FIND finds it by name. */
struct slot {
	uint64_t value;
	uint64_t key; /* 0: empty */
};

static size_t put(struct slot *t, size_t home, uint64_t key, uint64_t value)
{
	size_t i = PROBE_FIND(t, key, SLOTS - 1, home, key);

	t[i].key = key;
	t[i].value = value;
	return i;
}

static void test_probe_find_round_trip(void)
{
	struct slot t[SLOTS];
	size_t i;

	memset(t, 0, sizeof(t));
	/* Three keys of one home take its slot and the next two. */
	CU_ASSERT(put(t, 5, 100, 1) == 5);
	CU_ASSERT(put(t, 5, 101, 2) == 6);
	CU_ASSERT(put(t, 5, 102, 3) == 7);
	/* A key whose home is in the run goes after it. */
	CU_ASSERT(put(t, 6, 200, 4) == 8);
	for (i = 0; i < 3; i++)
		CU_ASSERT(t[PROBE_FIND(t, key, SLOTS - 1, 5, 100 + i)].value == i + 1);
	CU_ASSERT(PROBE_FIND(t, key, SLOTS - 1, 6, 200) == 8);
	/* An absent key ends at the empty slot after the run, where it would go. */
	CU_ASSERT(PROBE_FIND(t, key, SLOTS - 1, 5, 999) == 9);
	CU_ASSERT(PROBE_FIND(t, key, SLOTS - 1, 3, 999) == 3);
	/* The home is taken modulo the table: a hash's low bits. */
	CU_ASSERT(PROBE_FIND(t, key, SLOTS - 1, 5 + 4 * SLOTS, 101) == 6);
}

static void test_probe_find_wraps_around(void)
{
	struct slot t[SLOTS];

	memset(t, 0, sizeof(t));
	CU_ASSERT(put(t, SLOTS - 1, 7, 1) == SLOTS - 1);
	CU_ASSERT(put(t, SLOTS - 1, 8, 2) == 0);
	CU_ASSERT(put(t, SLOTS - 2, 9, 3) == SLOTS - 2);
	CU_ASSERT(put(t, SLOTS - 2, 10, 4) == 1);
	CU_ASSERT(PROBE_FIND(t, key, SLOTS - 1, SLOTS - 2, 10) == 1);
	CU_ASSERT(PROBE_FIND(t, key, SLOTS - 1, SLOTS - 1, 8) == 0);
	CU_ASSERT(PROBE_FIND(t, key, SLOTS - 1, SLOTS - 1, 11) == 2);
}

/* A plain array of keys: probe_find() with the slot's size and the key's offset. */
static void test_probe_find_key_array(void)
{
	uint64_t keys[8] = { 0 };

	keys[3] = 42;
	keys[4] = 43;
	CU_ASSERT(probe_find(keys, sizeof(keys[0]), 0, 7, 3, 43) == 4);
	CU_ASSERT(probe_find(keys, sizeof(keys[0]), 0, 7, 3, 44) == 5);
	CU_ASSERT(probe_find(keys, sizeof(keys[0]), 0, 7, 4, 42) == 5);
}

static void test_probe_has_room(void)
{
	/* At most 3/4 full: 12 of 16 slots, 768 of 1024. */
	CU_ASSERT(probe_has_room(0, 16));
	CU_ASSERT(probe_has_room(11, 16));
	CU_ASSERT(!probe_has_room(12, 16));
	CU_ASSERT(probe_has_room(767, 1024));
	CU_ASSERT(!probe_has_room(768, 1024));
}

static void test_probe_stays_cases(void)
{
	static const struct {
		size_t hole, home, j;
		bool stays;
	} cases[] = {
		{ 3, 3, 5, false },  /* home at the hole: moves into it */
		{ 3, 2, 5, false },  /* home before the hole: moves */
		{ 3, 4, 5, true },   /* home after the hole, up to j: stays */
		{ 3, 5, 5, true },   /* in its home: stays */
		{ 14, 15, 1, true }, /* the run wraps: home after the hole */
		{ 14, 0, 1, true },  /* ... or after the wrap, up to j */
		{ 14, 1, 1, true },   { 14, 14, 1, false }, /* home at the hole */
		{ 14, 10, 1, false },                       /* home before the hole */
		{ 14, 2, 1, false }, /* home past j: before the hole, cyclically */
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		CU_ASSERT(probe_stays(cases[i].hole, cases[i].home, cases[i].j) == cases[i].stays);
}

/* Backward-shift deletion (as the live blocks' table does it): every other key stays found. */
static void del(struct slot *t, size_t *homes, size_t home, uint64_t key)
{
	size_t i = PROBE_FIND(t, key, SLOTS - 1, home, key), j;

	CU_ASSERT_FATAL(t[i].key == key);
	PROBE_EACH(j, i + 1, SLOTS - 1) {
		if (!t[j].key)
			break;
		if (probe_stays(i, homes[t[j].key], j))
			continue;
		t[i] = t[j];
		i = j;
	}
	t[i].key = 0;
}

static void test_probe_backward_shift(void)
{
	size_t homes[64], round, k, n;
	struct slot t[SLOTS];
	bool in[64];

	srand(7);
	for (round = 0; round < 500; round++) {
		memset(t, 0, sizeof(t));
		memset(in, 0, sizeof(in));
		/* 12 keys (3/4 full) of few homes: long runs that wrap. */
		for (n = 0; n < 12; n++) {
			k = 1 + n;
			homes[k] = ((size_t)rand() % 4 + SLOTS - 2) & (SLOTS - 1);
			put(t, homes[k], k, k);
			in[k] = true;
		}
		for (n = 0; n < 6; n++) {
			k = 1 + (size_t)rand() % 12;
			if (in[k])
				del(t, homes, homes[k], k);
			in[k] = false;
		}
		for (k = 1; k <= 12; k++) {
			size_t i = PROBE_FIND(t, key, SLOTS - 1, homes[k], k);

			if ((t[i].key == k) != in[k]) {
				CU_FAIL("a key lost or kept by the backward shift");
				return;
			}
		}
	}
}

UNIT_MAIN("probe", NULL, NULL,
	  {
		  { "find_round_trip", test_probe_find_round_trip },
		  { "find_wraps_around", test_probe_find_wraps_around },
		  { "find_key_array", test_probe_find_key_array },
		  { "has_room", test_probe_has_room },
		  { "stays_cases", test_probe_stays_cases },
		  { "backward_shift", test_probe_backward_shift },
	  })
