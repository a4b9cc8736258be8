/* SPDX-License-Identifier: MIT */
/* preport's known answer: 60/30/10% of the CPU in heavy/medium/light, each burnt on one line. */
#include <stdlib.h>
#include <string.h>

#include "burn.h"

/*
 * Each function burns a budget of its thread's CPU time (the clock CPU-time sampling runs on)
 * with a chain of dependent multiplications on a single source line (marked "burn:NAME";
 * BURN_CPU_MS_SEED, whose code is all on the line it stands on), so the source view must put
 * each function's time on that line. Each has its own seed: alike, they would be folded into
 * one. With argument "twice", medium burns twice its budget: the variant for difference
 * reports. A second argument sets the CPU milliseconds of one round, a third medium's factor
 * (1.15: 15% slower, the regression gate's known answer).
 */
static double unit = 620;

static __attribute__((noinline, noclone)) void heavy(double ms)
{
	BURN_CPU_MS_SEED(ms, 1); /* burn:heavy */
}

static __attribute__((noinline, noclone)) void medium(double ms)
{
	BURN_CPU_MS_SEED(ms, 3); /* burn:medium */
}

static __attribute__((noinline, noclone)) void light(double ms)
{
	BURN_CPU_MS_SEED(ms, 5); /* burn:light */
}

/* Interleave the three in rounds so a sample boundary error stays below one round. */
static __attribute__((noinline, noclone)) void driver(double medium_factor)
{
	for (int round = 0; round < 5; round++) {
		heavy(6 * unit / 10);
		medium(3 * unit / 10 * medium_factor);
		light(1 * unit / 10);
	}
}

int main(int argc, char **argv)
{
	double factor = argc > 1 && !strcmp(argv[1], "twice") ? 2 : 1;

	if (argc > 2)
		unit = atof(argv[2]);
	if (argc > 3)
		factor = atof(argv[3]);
	driver(factor);
	return 0;
}
