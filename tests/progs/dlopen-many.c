/* SPDX-License-Identifier: MIT */
/* dlopen N libraries one by one, burning MS/N ms of CPU time in burn_work after each. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

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

	if (argc < 4) {
		fprintf(stderr, "usage: dlopen-many DIR N MS (DIR/libmod<i>.so, i < N)\n");
		return 2;
	}
	n = atoi(argv[2]);
	ms = atof(argv[3]);
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
		burn_work(ms / n);
	}
	printf("loaded %d libraries, sum %ld\n", n, sum);
	return 0;
}
