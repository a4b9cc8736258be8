/* SPDX-License-Identifier: MIT */
/*
 * Known behaviour for PLT stubs and the entry point: main calls tiny_step() of libplt-tiny.so
 * (through the program's PLT) until it has used MS milliseconds of CPU, then prints how many
 * calls it made. Built by tests/e2e/finalize-stubs.py with and without IBT's .plt.sec, with
 * lazy and eager binding, stripped and not.
 *
 * usage: plt-work [MS]   (default 400)
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

unsigned long tiny_step(unsigned long x);

static long long cpu_ns(void)
{
	struct rusage ru;

	getrusage(RUSAGE_THREAD, &ru);
	return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000ll +
	       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ll;
}

int main(int argc, char **argv)
{
	long long end = cpu_ns() + (argc > 1 ? atoll(argv[1]) : 400) * 1000000ll;
	unsigned long x = 1, calls = 0;

	while (cpu_ns() < end) {
		for (int i = 0; i < 100000; i++)
			x = tiny_step(x);
		calls += 100000;
	}
	printf("%s (%lu)\n", calls ? "calls made" : "no calls", x & 1);
	return 0;
}
