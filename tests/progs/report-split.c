/* SPDX-License-Identifier: MIT */
/* preport's known answer: 60/30/10% of the CPU in heavy/medium/light, each burnt on one line. */
#include <stdlib.h>
#include <string.h>

/*
 * The work of each function is a chain of dependent multiplications on a single source line
 * (marked "burn:NAME"), so the source view must put each function's time on that line.
 * With argument "twice", medium does twice its work: the variant for difference reports.
 */
static volatile unsigned long sink;
static long unit = 250000000;

static __attribute__((noinline, noclone)) void heavy(long n)
{
	unsigned long x = 1;

	for (long i = 0; i < n; i++) { x = x * 6364136223846793005ul + 1; __asm__ volatile("" : "+r"(x)::"memory"); } /* burn:heavy */
	sink = x;
}

static __attribute__((noinline, noclone)) void medium(long n)
{
	unsigned long x = 3;

	for (long i = 0; i < n; i++) { x = x * 6364136223846793005ul + 1; __asm__ volatile("" : "+r"(x)::"memory"); } /* burn:medium */
	sink = x;
}

static __attribute__((noinline, noclone)) void light(long n)
{
	unsigned long x = 5;

	for (long i = 0; i < n; i++) { x = x * 6364136223846793005ul + 1; __asm__ volatile("" : "+r"(x)::"memory"); } /* burn:light */
	sink = x;
}

/* Interleave the three in rounds so a sample boundary error stays below one round. */
static __attribute__((noinline, noclone)) void driver(int medium_factor)
{
	for (int round = 0; round < 10; round++) {
		heavy(6 * unit / 10);
		medium(3 * unit / 10 * medium_factor);
		light(1 * unit / 10);
	}
}

int main(int argc, char **argv)
{
	int factor = argc > 1 && !strcmp(argv[1], "twice") ? 2 : 1;

	if (argc > 2)
		unit = atol(argv[2]);
	driver(factor);
	return 0;
}
