/* SPDX-License-Identifier: MIT */
/* Unit tests of collector/preload.c: the LD_PRELOAD list that loads the agent. */
#include <string.h>

#include "common/preload.h"
#include "tests/unit/unit.h"

#define AGENT "/opt/pc/lib/libpcollect-agent.so"

/* LD_PRELOAD as it was (NULL: unset), and as pcollect sets it. */
struct compose_case {
	const char *old, *want;
};

static void check_compose(const char *preload, const struct compose_case *cases, size_t n)
{
	char out[512];
	size_t i;

	for (i = 0; i < n; i++) {
		int len = preload_compose(out, sizeof(out), preload, cases[i].old);

		CU_ASSERT_EQUAL(len, (int)strlen(cases[i].want));
		CU_ASSERT_STRING_EQUAL(out, cases[i].want);
	}
}

static void test_preload_compose_table(void)
{
	static const struct compose_case cases[] = {
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

	check_compose(AGENT, cases, sizeof(cases) / sizeof(cases[0]));
}

/* -trace-mpi: the agent and the shims, in that order, each once, a sanitizer still first. */
static void test_preload_compose_shims(void)
{
#define SHIMS AGENT ":/opt/pc/lib/libpcollect-mpi-openmpi.so:/opt/pc/lib/libpcollect-mpi-mpich.so"
	static const struct compose_case cases[] = {
		{ NULL, SHIMS },
		{ "libfoo.so", SHIMS ":libfoo.so" },
		{ SHIMS, SHIMS },
		{ "/opt/pc/lib/libpcollect-mpi-mpich.so:libfoo.so:" AGENT, SHIMS ":libfoo.so" },
		{ "libfoo.so:libasan.so.8", "libasan.so.8:" SHIMS ":libfoo.so" },
	};

	check_compose(SHIMS, cases, sizeof(cases) / sizeof(cases[0]));
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

UNIT_MAIN("preload", NULL, NULL,
	  {
		  { "compose_table", test_preload_compose_table },
		  { "compose_shims", test_preload_compose_shims },
		  { "compose_too_long", test_preload_compose_too_long },
	  })
