/* SPDX-License-Identifier: MIT */
/* Known answer for source lines: two_loops() runs loop LOOP-A 3N times and loop LOOP-B N times,
   each loop on one source line, so 75% / 25% of the samples must carry those lines.
   With "kill" as second argument the program SIGKILLs itself after the loops (a cut stream). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile double sink;

double two_loops(long n);

__attribute__((noinline)) double two_loops(long n)
{
	double a = 0, b = 0;
	long i;

	for (i = 0; i < 3 * n; i++) { a += (double)i * 0.5; __asm__ volatile("" ::: "memory"); } /* LOOP-A */
	for (i = 0; i < n; i++) { b += (double)i * 0.25; __asm__ volatile("" ::: "memory"); } /* LOOP-B */
	return a + b;
}

int main(int argc, char **argv)
{
	long units = argc > 1 ? atol(argv[1]) : 150; /* 1 unit: 1M iterations */

	sink = two_loops(units * 1000000L);
	if (argc > 2 && !strcmp(argv[2], "kill"))
		kill(getpid(), SIGKILL);
	printf("done\n");
	return 0;
}
