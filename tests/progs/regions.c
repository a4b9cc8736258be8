/* SPDX-License-Identifier: MIT */
/* Known answer for pause, resume and regions: work in and out of them, CPU-time budgets. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/pcollect.h"
#include "burn.h"

/*
 * Run under pcollect -start-paused: setup_work runs paused (no sample of it), the program
 * resumes, outside_work is in no region, solve/small and solve/large burn 1:2, then the
 * program pauses for teardown_work (no sample of it either). Each phase's CPU time as the
 * kernel counted it goes to stderr. Argument: the scale of every budget (default 1).
 *
 * regions waits: under pcollect -collect threading -start-paused, waits while paused (a
 * sleep, a mutex held by another thread, a join) and one sleep of 100 ms after the resume,
 * then paused again for a sleep: only that one wait may be recorded.
 */
static long long spent[5];

#define WORK(name, i, ms)                                                                          \
	static __attribute__((noinline, noclone)) void name(double scale)                          \
	{                                                                                          \
		long long t0 = burn_cpu_ns();                                                      \
		BURN_CPU_MS((ms)*scale);                                                           \
		spent[i] = burn_cpu_ns() - t0;                                                     \
	}

WORK(setup_work, 0, 300)
WORK(outside_work, 1, 200)
WORK(small_work, 2, 300)
WORK(large_work, 3, 600)
WORK(teardown_work, 4, 300)

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void *holder(void *arg)
{
	pthread_mutex_lock(&lock);
	usleep(150000);
	pthread_mutex_unlock(&lock);
	return arg;
}

static int paused_waits(void)
{
	pthread_t t;

	usleep(100000);
	if (pthread_create(&t, NULL, holder, NULL))
		return 1;
	usleep(20000);
	pthread_mutex_lock(&lock); /* waits for holder, paused */
	pthread_mutex_unlock(&lock);
	pthread_join(t, NULL);
	pcollect_resume();
	usleep(100000); /* the one wait recorded */
	pcollect_pause();
	usleep(200000);
	printf("waits done\n");
	return 0;
}

int main(int argc, char **argv)
{
	double scale;

	if (argc > 1 && !strcmp(argv[1], "waits"))
		return paused_waits();
	scale = argc > 1 ? atof(argv[1]) : 1.0;

	setup_work(scale);
	pcollect_resume();
	outside_work(scale);
	pcollect_region_begin("solve");
	pcollect_region_begin("small");
	small_work(scale);
	pcollect_region_end();
	pcollect_region_begin("large");
	large_work(scale);
	pcollect_region_end();
	pcollect_region_end();
	pcollect_pause();
	teardown_work(scale);
	fprintf(stderr,
		"setup_ns=%lld outside_ns=%lld small_ns=%lld large_ns=%lld teardown_ns=%lld\n",
		spent[0], spent[1], spent[2], spent[3], spent[4]);
	printf("regions done\n");
	return 0;
}
