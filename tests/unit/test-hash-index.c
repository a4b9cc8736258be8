/* SPDX-License-Identifier: MIT */
/* Unit tests of finalizer/hash-index.c: find or add by key over a caller-owned array. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/hash-index.h"
#include "tests/unit/unit.h"

struct pair {
	uint32_t a, b;
	uint32_t made; /* set by pair_make: which call built it */
};

struct table {
	struct pair *v;
	size_t n, cap;
	struct hash_index index;
	uint32_t makes;
	int fail; /* pair_make's answer when non-zero */
};

struct pair_key {
	struct table *t;
	uint32_t a, b;
};

static bool pair_eq(const void *ctx, uint32_t idx)
{
	const struct pair_key *k = ctx;

	return k->t->v[idx].a == k->a && k->t->v[idx].b == k->b;
}

static int pair_make(const void *ctx, void *elem)
{
	const struct pair_key *k = ctx;

	if (k->t->fail)
		return k->t->fail;
	*(struct pair *)elem = (struct pair){ k->a, k->b, ++k->t->makes };
	return 0;
}

static uint64_t pair_hash(uint32_t a, uint32_t b)
{
	return hash_combine(hash_mix(a), b);
}

static int64_t pair_get(struct table *t, uint32_t a, uint32_t b)
{
	struct pair_key k = { t, a, b };

	return HASH_INDEX_GET(&t->index, pair_hash(a, b), pair_eq, pair_make, &k, t->v, t->n,
			      t->cap);
}

static void table_release(struct table *t)
{
	free(t->v);
	hash_index_release(&t->index);
	memset(t, 0, sizeof(*t));
}

/* Every key added once, found again at the same index, across many growths of both arrays. */
static void test_hash_index_get_round_trip(void)
{
	struct table t = { 0 };
	uint32_t i;

	for (i = 0; i < 5000; i++)
		CU_ASSERT_EQUAL_FATAL(pair_get(&t, i / 7, i % 7), i);
	CU_ASSERT_EQUAL(t.n, 5000);
	CU_ASSERT_EQUAL(t.makes, 5000);
	for (i = 0; i < 5000; i++) {
		CU_ASSERT_EQUAL(pair_get(&t, i / 7, i % 7), i);
		CU_ASSERT_EQUAL(t.v[i].a, i / 7);
		CU_ASSERT_EQUAL(t.v[i].b, i % 7);
		CU_ASSERT_EQUAL(t.v[i].made, i + 1);
	}
	CU_ASSERT_EQUAL(t.n, 5000);
	CU_ASSERT_EQUAL(t.makes, 5000); /* found, not made again */
	table_release(&t);
}

/* A key whose hash collides with another's is still a different key. */
static void test_hash_index_get_equal_hashes(void)
{
	struct table t = { 0 };
	struct pair_key k1 = { &t, 1, 2 }, k2 = { &t, 3, 4 };

	CU_ASSERT_EQUAL(HASH_INDEX_GET(&t.index, 42, pair_eq, pair_make, &k1, t.v, t.n, t.cap), 0);
	CU_ASSERT_EQUAL(HASH_INDEX_GET(&t.index, 42, pair_eq, pair_make, &k2, t.v, t.n, t.cap), 1);
	CU_ASSERT_EQUAL(HASH_INDEX_GET(&t.index, 42, pair_eq, pair_make, &k1, t.v, t.n, t.cap), 0);
	CU_ASSERT_EQUAL(t.n, 2);
	table_release(&t);
}

/* make's failure is returned and adds nothing: the key is not found afterwards. */
static void test_hash_index_get_make_fails(void)
{
	struct table t = { 0 };
	struct pair_key k = { &t, 9, 9 };

	CU_ASSERT_EQUAL(pair_get(&t, 1, 1), 0);
	t.fail = -EIO;
	CU_ASSERT_EQUAL(pair_get(&t, 9, 9), -EIO);
	CU_ASSERT_EQUAL(t.n, 1);
	CU_ASSERT_EQUAL(hash_index_find(&t.index, pair_hash(9, 9), pair_eq, &k), -1);
	t.fail = 0;
	CU_ASSERT_EQUAL(pair_get(&t, 9, 9), 1);
	CU_ASSERT_EQUAL(t.v[1].a, 9);
	table_release(&t);
}

/* Without make, a new element is zeroed for the caller to fill. */
static void test_hash_index_get_zeroed_without_make(void)
{
	struct table t = { 0 };
	struct pair_key k = { &t, 0, 0 };
	int64_t i;

	i = HASH_INDEX_GET(&t.index, pair_hash(0, 0), pair_eq, NULL, &k, t.v, t.n, t.cap);
	CU_ASSERT_EQUAL_FATAL(i, 0);
	CU_ASSERT_EQUAL(t.v[0].a, 0);
	CU_ASSERT_EQUAL(t.v[0].made, 0);
	CU_ASSERT_EQUAL(t.n, 1);
	table_release(&t);
}

UNIT_MAIN("hash-index", UNIT_TEST("get_round_trip", test_hash_index_get_round_trip),
	  UNIT_TEST("get_equal_hashes", test_hash_index_get_equal_hashes),
	  UNIT_TEST("get_make_fails", test_hash_index_get_make_fails),
	  UNIT_TEST("get_zeroed_without_make", test_hash_index_get_zeroed_without_make))
