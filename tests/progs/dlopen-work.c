/* SPDX-License-Identifier: MIT */
/* dlopen a library, burn 500 ms of CPU time in it, dlclose it, then burn 300 ms in the program;
   with AGAIN (another library, or the same), open that after the close, burn 300 ms in it and
   close it before the program's 300 ms. */
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

/* Open path, burn ms in its dl_work, close it. */
static int work_in(const char *path, double ms)
{
	void (*fn)(long);
	void *h;

	h = dlopen(path, RTLD_NOW);
	if (!h) {
		fprintf(stderr, "dlopen: %s\n", dlerror());
		return 1;
	}
	fn = (void (*)(long))dlsym(h, "dl_work");
	if (!fn)
		return 1;
	library_work(fn, ms);
	return dlclose(h) ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: dlopen-work LIBRARY [AGAIN]\n");
		return 2;
	}
	if (work_in(argv[1], 500) || (argc > 2 && work_in(argv[2], 300)))
		return 1;
	main_work(300);
	printf("done\n");
	return 0;
}
