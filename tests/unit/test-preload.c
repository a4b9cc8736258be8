/* SPDX-License-Identifier: MIT */
/* Unit tests of collector/preload.c: the LD_PRELOAD list that loads the agent. */
#include <string.h>

#include "common/preload.h"
#include "tests/unit/unit.h"

#define AGENT "/opt/pc/lib/libpcollect-agent.so"

static void test_preload_compose_table(void)
{
	static const struct {
		const char *old, *want;
	} cases[] = {
		{ NULL, AGENT },
		{ "", AGENT },
		{ "/lib/libfoo.so", AGENT ":/lib/libfoo.so" },
		/* the program's order kept, separators made ':', empty entries dropped */
		{ "liba.so libb.so::libc.so", AGENT ":liba.so:libb.so:libc.so" },
		/* no second copy of the agent (exec of an image that had it) */
		{ AGENT, AGENT },
		{ AGENT ":libfoo.so", AGENT ":libfoo.so" },
		{ "libfoo.so:" AGENT, AGENT ":libfoo.so" },
		/* sanitizer runtimes must load first: they stay ahead of the agent */
		{ "/usr/lib/x86_64-linux-gnu/libasan.so.8",
		  "/usr/lib/x86_64-linux-gnu/libasan.so.8:" AGENT },
		{ "libfoo.so:libasan.so.8", "libasan.so.8:" AGENT ":libfoo.so" },
		{ "libasan.so.8:" AGENT ":libfoo.so", "libasan.so.8:" AGENT ":libfoo.so" },
		{ "/x/libclang_rt.asan-x86_64.so", "/x/libclang_rt.asan-x86_64.so:" AGENT },
		{ "libtsan.so.2", "libtsan.so.2:" AGENT },
		/* only the file name counts */
		{ "/libasan.so.8/libfoo.so", AGENT ":/libasan.so.8/libfoo.so" },
		{ "libubsan.so.1", AGENT ":libubsan.so.1" },
	};
	char out[512];
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int n = preload_compose(out, sizeof(out), AGENT, cases[i].old);

		CU_ASSERT_EQUAL(n, (int)strlen(cases[i].want));
		CU_ASSERT_STRING_EQUAL(out, cases[i].want);
	}
}

/* -trace-mpi: the agent and the shims, in that order, each once, a sanitizer still first. */
static void test_preload_compose_shims(void)
{
#define SHIMS AGENT ":/opt/pc/lib/libpcollect-mpi-openmpi.so:/opt/pc/lib/libpcollect-mpi-mpich.so"
	static const struct {
		const char *old, *want;
	} cases[] = {
		{ NULL, SHIMS },
		{ "libfoo.so", SHIMS ":libfoo.so" },
		{ SHIMS, SHIMS },
		{ "/opt/pc/lib/libpcollect-mpi-mpich.so:libfoo.so:" AGENT, SHIMS ":libfoo.so" },
		{ "libfoo.so:libasan.so.8", "libasan.so.8:" SHIMS ":libfoo.so" },
	};
	char out[512];
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int n = preload_compose(out, sizeof(out), SHIMS, cases[i].old);

		CU_ASSERT_EQUAL(n, (int)strlen(cases[i].want));
		CU_ASSERT_STRING_EQUAL(out, cases[i].want);
	}
#undef SHIMS
}

static void test_preload_compose_too_long(void)
{
	char out[40];

	CU_ASSERT_EQUAL(preload_compose(out, sizeof(out), AGENT, NULL), (int)strlen(AGENT));
	CU_ASSERT_EQUAL(preload_compose(out, sizeof(out), AGENT, "libfoo.so"), -1);
	CU_ASSERT_EQUAL(preload_compose(out, strlen(AGENT), AGENT, NULL), -1);
	CU_ASSERT_EQUAL(preload_compose(out, 0, AGENT, NULL), -1);
}

UNIT_MAIN("preload", UNIT_TEST("compose_table", test_preload_compose_table),
	  UNIT_TEST("compose_shims", test_preload_compose_shims),
	  UNIT_TEST("compose_too_long", test_preload_compose_too_long))
