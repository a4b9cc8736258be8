/* SPDX-License-Identifier: MIT */
/*
 * Known behaviour for a native program that loads libpython with dlopen, as a plugin host
 * does (nothing of Python linked in, so the interpreter is found at that dlopen):
 *   dlopen-python LIBPYTHON MS   loads LIBPYTHON, starts the interpreter and burns MS ms of
 *                                CPU in the Python function py_burn.
 * Prints what it did, the same with and without the collector.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include "py-burn.h"

int main(int argc, char **argv)
{
	void (*init)(void);
	int (*run)(const char *, void *);
	int (*fini)(void);
	char call[64];
	void *h;

	if (argc < 3) {
		fprintf(stderr, "usage: %s LIBPYTHON MS\n", argv[0]);
		return 2;
	}
	h = dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL);
	if (!h) {
		fprintf(stderr, "dlopen-python: %s\n", dlerror());
		return 1;
	}
	init = (void (*)(void))dlsym(h, "Py_Initialize");
	run = (int (*)(const char *, void *))dlsym(h, "PyRun_SimpleStringFlags");
	fini = (int (*)(void))dlsym(h, "Py_FinalizeEx");
	if (!init || !run || !fini) {
		fprintf(stderr, "dlopen-python: '%s' is no libpython\n", argv[1]);
		return 1;
	}
	init();
	snprintf(call, sizeof(call), "py_burn(%ld)\n", atol(argv[2]));
	if (run(py_burn_code, NULL) || run(call, NULL) || fini() < 0)
		return 1;
	printf("py_burn(%s): done\n", argv[2]);
	return 0;
}
