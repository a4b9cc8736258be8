/* SPDX-License-Identifier: MIT */
/* Run under an address-space limit (ulimit -v): creates 16 threads that burn 10 ms of CPU
   each and allocates 100 MB (every page touched), printing how many threads it could create
   and whether the allocation succeeded: the same answer with and without the collector. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "burn.h"

#define THREADS 16

static void *work(void *arg)
{
	(void)arg;
	BURN_CPU_MS(10);
	return NULL;
}

int main(void)
{
	pthread_t th[THREADS];
	int i, made = 0;
	char *p;

	for (i = 0; i < THREADS; i++)
		if (!pthread_create(&th[i], NULL, work, NULL))
			made++;
		else
			break;
	for (i = 0; i < made; i++)
		pthread_join(th[i], NULL);
	printf("threads created: %d of %d\n", made, THREADS);
	p = malloc(100u << 20);
	if (p)
		memset(p, 1, 100u << 20);
	printf("malloc(100 MB): %s\n", p ? "ok" : "failed");
	free(p);
	return made == THREADS && p ? 0 : 1;
}
