/* SPDX-License-Identifier: MIT */
/* dlopen a library, burn 500 ms of CPU time in it, dlclose it, then burn 300 ms in the program. */
#include <dlfcn.h>
#include <stdio.h>

#include "burn.h"

static __attribute__((noinline, noclone)) void main_work(double ms)
{
	BURN_CPU_MS(ms);
}

/* The library's dl_work burns iterations: call it in chunks until ms of CPU time are spent. */
static __attribute__((noinline, noclone)) void library_work(void (*fn)(long), double ms)
{
	long long end = burn_cpu_ns() + (long long)(ms * 1e6);

	while (burn_cpu_ns() < end)
		fn(BURN_CHUNK);
}

int main(int argc, char **argv)
{
	void (*fn)(long);
	void *h;

	if (argc < 2) {
		fprintf(stderr, "usage: dlopen-work LIBRARY\n");
		return 2;
	}
	h = dlopen(argv[1], RTLD_NOW);
	if (!h) {
		fprintf(stderr, "dlopen: %s\n", dlerror());
		return 1;
	}
	fn = (void (*)(long))dlsym(h, "dl_work");
	if (!fn)
		return 1;
	library_work(fn, 500);
	if (dlclose(h))
		return 1;
	main_work(300);
	printf("done\n");
	return 0;
}
