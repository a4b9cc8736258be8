/* SPDX-License-Identifier: MIT */
/*
 * Three threads that each burn 300 ms of CPU time while reading their own CPU clock with
 * clock_gettime(CLOCK_THREAD_CPUTIME_ID) about every 0.1 ms, as timing code does. On a busy
 * machine this ends their time slices between kernel ticks, where CPU-time timers are not
 * checked (docs/pcollect.md, LIMITS): the case the task-clock sampling clock is for.
 * Prints each thread's tid, the CPU time it used and how often it was switched out, one
 * "tid=N cpu_ns=N switches=N" line each.
 */
#include <pthread.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "burn.h"

#define THREADS   3
#define BUDGET_NS 300000000ll

static long long thread_clock_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (long long)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

static long long used[THREADS];
static long tids[THREADS], switches[THREADS];

static __attribute__((noinline, noclone)) void poll_work(long long ns)
{
	long long end = thread_clock_ns() + ns;

	while (thread_clock_ns() < end)
		BURN(BURN_CHUNK);
}

static void *worker(void *arg)
{
	long i = (long)arg;

	struct rusage ru;

	tids[i] = (long)syscall(SYS_gettid);
	poll_work(BUDGET_NS);
	used[i] = thread_clock_ns();
	getrusage(RUSAGE_THREAD, &ru);
	switches[i] = ru.ru_nvcsw + ru.ru_nivcsw;
	return NULL;
}

int main(void)
{
	pthread_t t[THREADS];
	long i;

	for (i = 0; i < THREADS; i++)
		if (pthread_create(&t[i], NULL, worker, (void *)i))
			return 1;
	for (i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	for (i = 0; i < THREADS; i++)
		printf("tid=%ld cpu_ns=%lld switches=%ld\n", tids[i], used[i], switches[i]);
	return 0;
}
