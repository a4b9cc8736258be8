/* SPDX-License-Identifier: MIT */
/* Work started in other threads: main calls start_work(), which creates two workers of 1 and
   2 units of CPU time and joins them, then own_work() burns 1 unit in main itself. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "burn.h"

static double unit = 150; /* CPU milliseconds */

static __attribute__((noinline, noclone)) void worker_burn(long units)
{
	BURN_CPU_MS_SEED(units * unit, 2);
}

static void *worker(void *arg)
{
	worker_burn((long)arg);
	return NULL;
}

static __attribute__((noinline, noclone)) int start_work(void)
{
	pthread_t t[2];
	long i;

	for (i = 0; i < 2; i++)
		if (pthread_create(&t[i], NULL, worker, (void *)(i + 1)))
			return 1;
	for (i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	return 0;
}

static __attribute__((noinline, noclone)) void own_work(void)
{
	BURN_CPU_MS_SEED(unit, 3);
}

int main(int argc, char **argv)
{
	if (argc > 1)
		unit = atof(argv[1]);
	if (start_work())
		return 1;
	own_work();
	printf("units=4\n");
	return 0;
}
