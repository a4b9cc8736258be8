/* SPDX-License-Identifier: MIT */
/* Unit tests of collector/agent/stack-table.c: dedup of stacks, exact comparison, reset if full. */
#include <stdio.h>
#include <string.h>

#include "collector/agent/stack-table.h"
#include "tests/unit/unit.h"

static void test_stack_table_round_trip(void)
{
	struct stack_table t;
	uint64_t a[] = { 0x401000, 0x401234, 0x7f0000001000 };
	uint64_t b[] = { 0x401001, 0x401234, 0x7f0000001000 };
	uint64_t ha, hb, ida, idb;

	CU_ASSERT_FATAL(stack_table_init(&t, 64, 1024) == 0);
	ha = stack_table_hash(a, 3, 4);
	hb = stack_table_hash(b, 3, 4);
	CU_ASSERT(ha != hb);
	CU_ASSERT(stack_table_find(&t, ha, a, 3) == 0);
	ida = stack_table_add(&t, ha, a, 3);
	CU_ASSERT(ida == 1);
	CU_ASSERT(stack_table_find(&t, ha, a, 3) == ida);
	CU_ASSERT(stack_table_find(&t, hb, b, 3) == 0);
	idb = stack_table_add(&t, hb, b, 3);
	CU_ASSERT(idb == 2);
	CU_ASSERT(stack_table_find(&t, hb, b, 3) == idb);
	CU_ASSERT(stack_table_find(&t, ha, a, 3) == ida);
	/* A shorter stack with the same prefix is another stack. */
	CU_ASSERT(stack_table_find(&t, stack_table_hash(a, 2, 4), a, 2) == 0);
	stack_table_release(&t);
}

/* Two different stacks forced onto the same hash are told apart by their frames. */
static void test_stack_table_collision_compares_frames(void)
{
	struct stack_table t;
	uint64_t a[] = { 1, 2, 3 }, b[] = { 1, 2, 4 };
	uint64_t id;

	CU_ASSERT_FATAL(stack_table_init(&t, 16, 64) == 0);
	id = stack_table_add(&t, 42, a, 3);
	CU_ASSERT(stack_table_find(&t, 42, b, 3) == 0);
	CU_ASSERT(stack_table_add(&t, 42, b, 3) == id + 1);
	CU_ASSERT(stack_table_find(&t, 42, a, 3) == id);
	CU_ASSERT(stack_table_find(&t, 42, b, 3) == id + 1);
	stack_table_release(&t);
}

static void test_stack_table_full_then_reset(void)
{
	struct stack_table t;
	uint64_t ips[4] = { 0 }, n = 0, id, last = 0;

	CU_ASSERT_FATAL(stack_table_init(&t, 16, 1000) == 0);
	CU_ASSERT(t.nslots == 16);
	/* At most 3/4 of the slots are used. */
	for (;;) {
		ips[0] = ++n;
		id = stack_table_add(&t, stack_table_hash(ips, 4, 0), ips, 4);
		if (!id)
			break;
		last = id;
	}
	CU_ASSERT(last == 12);
	stack_table_reset(&t);
	CU_ASSERT(stack_table_find(&t, stack_table_hash(ips, 4, 0), ips, 4) == 0);
	ips[0] = 1;
	/* Ids continue after a reset, so the stream never sees one reused. */
	CU_ASSERT(stack_table_add(&t, stack_table_hash(ips, 4, 0), ips, 4) == 13);
	stack_table_release(&t);
}

static void test_stack_table_pool_full(void)
{
	struct stack_table t;
	uint64_t ips[10] = { 5, 6, 7, 8, 9, 10, 11, 12, 13, 14 };

	CU_ASSERT_FATAL(stack_table_init(&t, 64, 25) == 0);
	CU_ASSERT(stack_table_add(&t, 1, ips, 10) == 1);
	CU_ASSERT(stack_table_add(&t, 2, ips, 10) == 2);
	CU_ASSERT(stack_table_add(&t, 3, ips, 10) == 0); /* 30 frames > 25 */
	CU_ASSERT(stack_table_add(&t, 3, ips, 5) == 3);
	stack_table_release(&t);
}

static void test_stack_table_many(void)
{
	struct stack_table t;
	uint64_t ips[8];
	uint64_t i, j;

	CU_ASSERT_FATAL(stack_table_init(&t, 8192, 8192 * 8) == 0);
	for (i = 0; i < 6000; i++) {
		for (j = 0; j < 8; j++)
			ips[j] = 0x400000 + i * 16 + j;
		CU_ASSERT(stack_table_add(&t, stack_table_hash(ips, 8, 0), ips, 8) == i + 1);
	}
	for (i = 0; i < 6000; i++) {
		for (j = 0; j < 8; j++)
			ips[j] = 0x400000 + i * 16 + j;
		if (stack_table_find(&t, stack_table_hash(ips, 8, 0), ips, 8) != i + 1) {
			CU_FAIL("stack not found with its id");
			break;
		}
	}
	stack_table_release(&t);
}

UNIT_MAIN("stack-table", NULL, NULL,
	  {
		  { "round_trip", test_stack_table_round_trip },
		  { "collision_compares_frames", test_stack_table_collision_compares_frames },
		  { "full_then_reset", test_stack_table_full_then_reset },
		  { "pool_full", test_stack_table_pool_full },
		  { "many", test_stack_table_many },
	  })
