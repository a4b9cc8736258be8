/* SPDX-License-Identifier: MIT */
/* dlopen N libraries one by one, burning MS/N ms of CPU time in burn_work after each ("after":
   all MS once the last is loaded). */
#include <dlfcn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "burn.h"

static __attribute__((noinline, noclone)) void burn_work(double ms)
{
	BURN_CPU_MS(ms);
}

int main(int argc, char **argv)
{
	char path[4096];
	long sum = 0;
	int i, n;
	double ms;
	bool after;

	if (argc < 4 || (argc > 4 && strcmp(argv[4], "after"))) {
		fprintf(stderr, "usage: dlopen-many DIR N MS [after] (DIR/libmod<i>.so, i < N)\n");
		return 2;
	}
	n = atoi(argv[2]);
	ms = atof(argv[3]);
	after = argc > 4;
	for (i = 0; i < n; i++) {
		int (*fn)(void);
		void *h;

		snprintf(path, sizeof(path), "%s/libmod%d.so", argv[1], i);
		h = dlopen(path, RTLD_NOW);
		fn = h ? (int (*)(void))dlsym(h, "mod_value") : NULL;
		if (!fn) {
			fprintf(stderr, "dlopen-many: %s\n", dlerror());
			return 1;
		}
		sum += fn();
		if (!after)
			burn_work(ms / n);
	}
	if (after)
		burn_work(ms);
	printf("loaded %d libraries, sum %ld\n", n, sum);
	return 0;
}
