/* SPDX-License-Identifier: MIT */
/* Known answer for inline attribution: driver() burns CPU only in two always-inlined functions,
   hot_three (3 units of CPU time) and hot_one (1 unit), so samples must land 75/25 on the
   inlined functions, each with driver as its caller at the call line (marked CALL-THREE /
   CALL-ONE). */
#include <stdio.h>
#include <stdlib.h>

#include "burn.h"

static volatile double sink;

static inline __attribute__((always_inline)) double hot_three(double ms)
{
	double s = 0;
	long long end = burn_cpu_ns() + (long long)(3 * ms * 1e6);

	while (burn_cpu_ns() < end)
		for (long i = 0; i < BURN_CHUNK; i++) {
			s += (double)i * 0.5; /* BODY-THREE */
			__asm__ volatile("" ::: "memory");
		}
	return s;
}

static inline __attribute__((always_inline)) double hot_one(double ms)
{
	double s = 0;
	long long end = burn_cpu_ns() + (long long)(ms * 1e6);

	while (burn_cpu_ns() < end)
		for (long i = 0; i < BURN_CHUNK; i++) {
			s += (double)i * 0.25; /* BODY-ONE */
			__asm__ volatile("" ::: "memory");
		}
	return s;
}

double driver(double ms);

__attribute__((noinline)) double driver(double ms)
{
	double s = 0;

	s += hot_three(ms); /* CALL-THREE */
	s += hot_one(ms);   /* CALL-ONE */
	__asm__ volatile("" ::: "memory");
	return s;
}

int main(int argc, char **argv)
{
	double unit = argc > 1 ? atof(argv[1]) : 150; /* CPU milliseconds */

	sink = driver(unit);
	printf("done\n");
	return 0;
}
