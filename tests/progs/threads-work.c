/* SPDX-License-Identifier: MIT */
/* Four named threads doing 1, 2, 3 and 4 units of CPU time: per-thread CPU in ratio 1:2:3:4. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "burn.h"

static double unit = 200; /* CPU milliseconds */

static __attribute__((noinline, noclone)) void thread_work(long units)
{
	BURN_CPU_MS(units * unit);
}

static void *worker(void *arg)
{
	long n = (long)arg;
	char name[16];

	snprintf(name, sizeof(name), "worker-%ld", n);
	pthread_setname_np(pthread_self(), name);
	thread_work(n);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[4];
	long i;

	if (argc > 1)
		unit = atof(argv[1]);
	for (i = 0; i < 4; i++)
		if (pthread_create(&t[i], NULL, worker, (void *)(i + 1)))
			return 1;
	for (i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	printf("threads=4\n");
	return 0;
}
