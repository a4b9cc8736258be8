/* SPDX-License-Identifier: MIT */
/* Known answer for source lines: two_loops() runs loop LOOP-A for 3 units of its thread's CPU
   time and loop LOOP-B for 1 unit, each loop on one source line, so 75% / 25% of the samples
   must carry those lines.
   With "kill" as second argument the program SIGKILLs itself after the loops (a cut stream). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "burn.h"

static volatile double sink;

double two_loops(double ms);

__attribute__((noinline)) double two_loops(double ms)
{
	double a = 0, b = 0;
	long long end;
	long i;

	/* Each loop on one line: all of its samples name that line. */
	/* clang-format off */
	for (end = burn_cpu_ns() + (long long)(3 * ms * 1e6); burn_cpu_ns() < end;) for (i = 0; i < BURN_CHUNK; i++) { a += (double)i * 0.5; __asm__ volatile("" ::: "memory"); } /* LOOP-A */
	for (end = burn_cpu_ns() + (long long)(ms * 1e6); burn_cpu_ns() < end;) for (i = 0; i < BURN_CHUNK; i++) { b += (double)i * 0.25; __asm__ volatile("" ::: "memory"); } /* LOOP-B */
	/* clang-format on */
	return a + b;
}

int main(int argc, char **argv)
{
	double unit = argc > 1 ? atof(argv[1]) : 150; /* CPU milliseconds */

	sink = two_loops(unit);
	if (argc > 2 && !strcmp(argv[2], "kill"))
		kill(getpid(), SIGKILL);
	printf("done\n");
	return 0;
}
