/* SPDX-License-Identifier: MIT */
/* Two OpenMP parallel regions in two functions: first() has each of its 2 threads burn 1 unit
   of CPU time, second() 2 units each; the runtime creates its worker in first()'s region. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#include "burn.h"

static double unit = 100; /* CPU milliseconds */

static __attribute__((noinline)) int first(void)
{
	int n = 0;

#pragma omp parallel num_threads(2)
	{
		BURN_CPU_MS_SEED(unit, 4);
		if (omp_get_thread_num() == 0)
			n = omp_get_num_threads();
	}
	return n;
}

static __attribute__((noinline)) int second(void)
{
	int n = 0;

#pragma omp parallel num_threads(2)
	{
		BURN_CPU_MS_SEED(2 * unit, 5);
		if (omp_get_thread_num() == 0)
			n = omp_get_num_threads();
	}
	return n;
}

int main(int argc, char **argv)
{
	int a, b;

	if (argc > 1)
		unit = atof(argv[1]);
	a = first();
	b = second();
	printf("threads=%d,%d\n", a, b);
	return a == 2 && b == 2 ? 0 : 1;
}
