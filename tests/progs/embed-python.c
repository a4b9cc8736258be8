/* SPDX-License-Identifier: MIT */
/*
 * Known behaviour for a native program that links libpython (as perf does for its scripts):
 *   embed-python idle MS   burns MS ms of CPU in C and never starts the interpreter: its
 *                          profile is a native program's, with no Python section;
 *   embed-python run MS    starts the interpreter and burns MS ms of CPU in the Python
 *                          function py_burn, then MS ms in C: the Python section is there.
 * Prints what it did, the same with and without the collector.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "burn.h"
#include "py-burn.h"

static void c_burn(long ms)
{
	long long end = burn_cpu_ns() + ms * 1000000ll;

	while (burn_cpu_ns() < end)
		BURN(BURN_100MS / 100);
}

int main(int argc, char **argv)
{
	long ms = argc > 2 ? atol(argv[2]) : 300;
	char call[64];

	if (argc < 2 || (strcmp(argv[1], "idle") && strcmp(argv[1], "run"))) {
		fprintf(stderr, "usage: %s idle|run [MS]\n", argv[0]);
		return 2;
	}
	if (!strcmp(argv[1], "run")) {
		Py_Initialize();
		snprintf(call, sizeof(call), "py_burn(%ld)\n", ms);
		if (PyRun_SimpleString(py_burn_code) || PyRun_SimpleString(call))
			return 1;
		if (Py_FinalizeEx() < 0)
			return 1;
	}
	c_burn(ms);
	printf("%s: done\n", argv[1]);
	return 0;
}
