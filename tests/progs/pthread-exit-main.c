/* SPDX-License-Identifier: MIT */
/* main ends with pthread_exit while its 3 threads burn 20 ms of CPU each and print: the
   process ends with status 0 when the last one ends, stdout (buffered, a pipe) flushed by the
   C library's exit(0) then. */
#include <pthread.h>
#include <stdio.h>

#include "burn.h"

static void *work(void *arg)
{
	BURN_CPU_MS(20);
	printf("thread %ld done\n", (long)arg); /* stays in stdio's buffer until exit() */
	return NULL;
}

int main(void)
{
	pthread_t th;
	long i;

	printf("main starts 3 threads\n");
	for (i = 0; i < 3; i++)
		if (pthread_create(&th, NULL, work, (void *)i))
			return 1;
	pthread_exit(NULL);
}
