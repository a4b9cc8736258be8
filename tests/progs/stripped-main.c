/* SPDX-License-Identifier: MIT */
/* Loads the library named on its command line and runs its stripped_work(): one program for
 * the library as built, stripped, and with MiniDebugInfo (tests/e2e/finalize-stripped.py). */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	void (*work)(double, int);
	void *lib;

	if (argc < 2) {
		fprintf(stderr, "usage: %s LIBRARY [UNIT-MS [ROUNDS]]\n", argv[0]);
		return 2;
	}
	lib = dlopen(argv[1], RTLD_NOW);
	if (!lib) {
		fprintf(stderr, "stripped-main: %s\n", dlerror());
		return 2;
	}
	*(void **)&work = dlsym(lib, "stripped_work");
	if (!work) {
		fprintf(stderr, "stripped-main: no stripped_work in '%s'\n", argv[1]);
		return 2;
	}
	work(argc > 2 ? atof(argv[2]) : 60, argc > 3 ? atoi(argv[3]) : 5);
	return 0;
}
