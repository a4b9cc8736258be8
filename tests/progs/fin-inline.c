/* SPDX-License-Identifier: MIT */
/* Known answer for inline attribution: driver() burns CPU only in two always-inlined functions,
   hot_three (3 units) and hot_one (1 unit), so samples must land 75/25 on the inlined functions,
   each with driver as its caller at the call line (marked CALL-THREE / CALL-ONE). */
#include <stdio.h>
#include <stdlib.h>

static volatile double sink;

static inline __attribute__((always_inline)) double hot_three(long n)
{
	double s = 0;

	for (long i = 0; i < 3 * n; i++) {
		s += (double)i * 0.5; /* BODY-THREE */
		__asm__ volatile("" ::: "memory");
	}
	return s;
}

static inline __attribute__((always_inline)) double hot_one(long n)
{
	double s = 0;

	for (long i = 0; i < n; i++) {
		s += (double)i * 0.25; /* BODY-ONE */
		__asm__ volatile("" ::: "memory");
	}
	return s;
}

double driver(long n);

__attribute__((noinline)) double driver(long n)
{
	double s = 0;

	s += hot_three(n); /* CALL-THREE */
	s += hot_one(n); /* CALL-ONE */
	__asm__ volatile("" ::: "memory");
	return s;
}

int main(int argc, char **argv)
{
	long units = argc > 1 ? atol(argv[1]) : 150; /* 1 unit: 1M iterations */

	sink = driver(units * 1000000L);
	printf("done\n");
	return 0;
}
