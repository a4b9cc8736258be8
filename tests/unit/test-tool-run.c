/* SPDX-License-Identifier: MIT */
/* Unit tests of common/tool-run.c: finding a tool beside the running one, running it (several at
   once too), and the name its messages carry. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/tool-run.h"
#include "tests/unit/unit.h"

#define SELF "test-tool-run"

/* The running program finds itself beside itself; a name that is nowhere is -ENOENT. */
static void test_tool_run_find(void)
{
	char path[PATH_MAX], dir[PATH_MAX], want[PATH_MAX + 32];

	CU_ASSERT_EQUAL_FATAL(tool_exe_dir(dir, sizeof(dir)), 0);
	CU_ASSERT_EQUAL_FATAL(tool_find(SELF, path, sizeof(path)), 0);
	snprintf(want, sizeof(want), "%s/%s", dir, SELF);
	CU_ASSERT_STRING_EQUAL(path, want);
	CU_ASSERT_EQUAL(tool_find("no-such-tool", path, sizeof(path)), -ENOENT);
	CU_ASSERT_EQUAL(tool_find(SELF, path, 4), -ENOENT); /* does not fit */
}

/* The exit status comes back as it was; a death by signal N as 128 + N. */
static void test_tool_run_status(void)
{
	char *const exit7[] = { SELF, "--exit", "7", NULL };
	char *const killed[] = { SELF, "--kill", NULL };
	char *const nothing[] = { "x", NULL };

	CU_ASSERT_EQUAL(tool_run(SELF, exit7), 7);
	CU_ASSERT_EQUAL(tool_run(SELF, killed), 128 + SIGTERM);
	CU_ASSERT_EQUAL(tool_run("no-such-tool", nothing), -ENOENT);
}

/* Several at once: each status comes back with its pid; a tool's stderr can go to a file. */
static void test_tool_run_spawn(void)
{
	char *const exit3[] = { SELF, "--exit", "3", NULL };
	char *const exit5[] = { SELF, "--exit", "5", NULL };
	char *const say[] = { SELF, "--say", "kept apart", NULL };
	char *const nothing[] = { "x", NULL };
	pid_t a, b, c, ended = 0;
	FILE *err = tmpfile();
	char line[64] = "";
	int i, st;

	CU_ASSERT_PTR_NOT_NULL_FATAL(err);
	a = tool_spawn(SELF, exit3, -1);
	b = tool_spawn(SELF, exit5, -1);
	c = tool_spawn(SELF, say, fileno(err));
	CU_ASSERT_FATAL(a > 0 && b > 0 && c > 0);
	for (i = 0; i < 3; i++) {
		st = tool_wait(-1, &ended);
		CU_ASSERT(ended == a || ended == b || ended == c);
		CU_ASSERT_EQUAL(st, ended == a ? 3 : ended == b ? 5 : 0);
	}
	CU_ASSERT_EQUAL(tool_wait(-1, &ended), -ECHILD);
	rewind(err);
	CU_ASSERT_PTR_NOT_NULL(fgets(line, sizeof(line), err));
	CU_ASSERT_STRING_EQUAL(line, "kept apart\n");
	fclose(err);
	CU_ASSERT_EQUAL(tool_spawn("no-such-tool", nothing, -1), -ENOENT);
}

/* A tool that another of ours runs speaks as that one, whatever directory argv[0] names. */
static void test_tool_run_speaks_as(void)
{
	CU_ASSERT_STRING_EQUAL(tool_speaks_as("pcollect", "pfinalize"), "pcollect");
	CU_ASSERT_STRING_EQUAL(tool_speaks_as("/opt/bin/pcollect", "preport"), "pcollect");
	CU_ASSERT_STRING_EQUAL(tool_speaks_as("./pfinalize", "pfinalize"), "pfinalize");
	CU_ASSERT_STRING_EQUAL(tool_speaks_as("/x/pcollect2", "preport"), "preport");
	CU_ASSERT_STRING_EQUAL(tool_speaks_as("preport", "pfinalize"), "preport");
	CU_ASSERT_STRING_EQUAL(tool_speaks_as("/usr/bin/python3", "pfinalize"), "pfinalize");
	CU_ASSERT_STRING_EQUAL(tool_speaks_as(NULL, "preport"), "preport");
}

int main(int argc, char **argv)
{
	static const struct unit_test tests[] = {
		{ "find", test_tool_run_find },
		{ "status", test_tool_run_status },
		{ "spawn", test_tool_run_spawn },
		{ "speaks as", test_tool_run_speaks_as },
		{ NULL, NULL },
	};

	/* Run by test_tool_run_status() as the tool. */
	if (argc == 3 && !strcmp(argv[1], "--exit"))
		return atoi(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "--say")) {
		fprintf(stderr, "%s\n", argv[2]);
		return 0;
	}
	if (argc == 2 && !strcmp(argv[1], "--kill")) {
		signal(SIGTERM, SIG_DFL);
		raise(SIGTERM);
		return 1;
	}
	log_set_tool("test-tool-run");
	return unit_run("tool-run", tests, NULL, NULL);
}
