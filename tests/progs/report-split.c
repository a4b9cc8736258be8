/* SPDX-License-Identifier: MIT */
/* preport's known answer: 60/30/10% of the CPU in heavy/medium/light, each burnt on one line. */
#include <stdlib.h>
#include <string.h>

#include "burn.h"

/*
 * Each function burns a budget of its thread's CPU time (the clock CPU-time sampling runs on)
 * with a chain of dependent multiplications on a single source line (marked "burn:NAME"), so
 * the source view must put each function's time on that line. With argument "twice", medium
 * burns twice its budget: the variant for difference reports. A second argument sets the CPU
 * milliseconds of one round.
 */
static volatile unsigned long sink;
static double unit = 620;

static __attribute__((noinline, noclone)) void heavy(double ms)
{
	unsigned long x = 1;
	long long end = burn_cpu_ns() + (long long)(ms * 1e6);

	/* clang-format off */
	while (burn_cpu_ns() < end) for (long i = 0; i < BURN_CHUNK; i++) { x = x * 6364136223846793005ul + 1; __asm__ volatile("" : "+r"(x)::"memory"); } /* burn:heavy */
	/* clang-format on */
	sink = x;
}

static __attribute__((noinline, noclone)) void medium(double ms)
{
	unsigned long x = 3;
	long long end = burn_cpu_ns() + (long long)(ms * 1e6);

	/* clang-format off */
	while (burn_cpu_ns() < end) for (long i = 0; i < BURN_CHUNK; i++) { x = x * 6364136223846793005ul + 1; __asm__ volatile("" : "+r"(x)::"memory"); } /* burn:medium */
	/* clang-format on */
	sink = x;
}

static __attribute__((noinline, noclone)) void light(double ms)
{
	unsigned long x = 5;
	long long end = burn_cpu_ns() + (long long)(ms * 1e6);

	/* clang-format off */
	while (burn_cpu_ns() < end) for (long i = 0; i < BURN_CHUNK; i++) { x = x * 6364136223846793005ul + 1; __asm__ volatile("" : "+r"(x)::"memory"); } /* burn:light */
	/* clang-format on */
	sink = x;
}

/* Interleave the three in rounds so a sample boundary error stays below one round. */
static __attribute__((noinline, noclone)) void driver(int medium_factor)
{
	for (int round = 0; round < 5; round++) {
		heavy(6 * unit / 10);
		medium(3 * unit / 10 * medium_factor);
		light(1 * unit / 10);
	}
}

int main(int argc, char **argv)
{
	int factor = argc > 1 && !strcmp(argv[1], "twice") ? 2 : 1;

	if (argc > 2)
		unit = atof(argv[2]);
	driver(factor);
	return 0;
}
