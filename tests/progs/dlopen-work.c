/* SPDX-License-Identifier: MIT */
/* dlopen a library, burn CPU in it, dlclose it, then burn in the program itself. */
#include <dlfcn.h>
#include <stdio.h>

#include "burn.h"

static __attribute__((noinline, noclone)) void main_work(long n)
{
	BURN(n);
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
	fn(BURN_100MS * 5);
	if (dlclose(h))
		return 1;
	main_work(BURN_100MS * 3);
	printf("done\n");
	return 0;
}
