/* SPDX-License-Identifier: MIT */
/* Four named threads doing 1, 2, 3 and 4 units of CPU time: per-thread CPU in ratio 1:2:3:4;
   or many short threads (threads-work many N MS: N threads of MS ms of CPU each, 8 at once,
   then the process's CPU time on stderr). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "burn.h"

static double unit = 200;    /* CPU milliseconds */
static long long used_ns[5]; /* per worker: its CPU time when its work was done */

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
	/* The kernel's own count, read once (burn.h: the budget's clock may lag it, in a VM by
	   the time the host held the CPU): what the collector's thread end must say. */
	used_ns[n] = burn_cpu_now_ns();
	return NULL;
}

static __attribute__((noinline, noclone)) void short_work(double ms)
{
	BURN_CPU_MS(ms);
}

static void *short_worker(void *arg)
{
	short_work(*(const double *)arg);
	return NULL;
}

static int many(long n, double ms)
{
	pthread_t t[8];
	struct rusage ru;
	long i, k;

	for (i = 0; i < n; i += 8) {
		for (k = 0; k < 8 && i + k < n; k++)
			if (pthread_create(&t[k], NULL, short_worker, &ms))
				return 1;
		while (k-- > 0)
			pthread_join(t[k], NULL);
	}
	printf("threads=%ld\n", n);
	/* The kernel's count of every thread's CPU time, the ended ones' too. */
	getrusage(RUSAGE_SELF, &ru);
	fprintf(stderr, "process cpu_ns=%lld\n",
		(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000ll +
			(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ll);
	return 0;
}

int main(int argc, char **argv)
{
	pthread_t t[4];
	long i;

	if (argc == 4 && !strcmp(argv[1], "many"))
		return many(atol(argv[2]), atof(argv[3]));
	if (argc > 1)
		unit = atof(argv[1]);
	for (i = 0; i < 4; i++)
		if (pthread_create(&t[i], NULL, worker, (void *)(i + 1)))
			return 1;
	for (i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	printf("threads=4\n");
	for (i = 1; i <= 4; i++)
		fprintf(stderr, "worker-%ld cpu_ns=%lld\n", i, used_ns[i]);
	return 0;
}
