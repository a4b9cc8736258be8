/* SPDX-License-Identifier: MIT */
/* OpenMP waits of known length: parallel regions where one thread has twice the work of the
   others (they wait at the region's end), an explicit barrier, a critical section one thread
   holds while the others queue, and an omp_lock. Built with gcc (libgomp) and clang (libomp).
   Each thread times its part on CLOCK_MONOTONIC (the clock of the raw streams) and prints
   when it waited, as the program sees it: "wait kind=K tid=T start=NS end=NS". */
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "burn.h"

#define THREADS 4
#define REGIONS 4
#define UNIT_MS 40 /* CPU time of a thread's share; thread 0 has twice as much */

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static long tid(void)
{
	return (long)syscall(SYS_gettid);
}

static void report(const char *kind, long who, uint64_t start, uint64_t end)
{
#pragma omp critical(report)
	printf("wait kind=%s tid=%ld start=%llu end=%llu\n", kind, who, (unsigned long long)start,
	       (unsigned long long)end);
}

/* A region: thread 0 burns 2 units, the others 1; they all meet at the region's end. */
static void imbalanced(void)
{
	uint64_t arrived[THREADS] = { 0 }, end;
	long tids[THREADS] = { 0 };
	int i;

#pragma omp parallel num_threads(THREADS)
	{
		int me = omp_get_thread_num();

		BURN_CPU_MS(me == 0 ? 2 * UNIT_MS : UNIT_MS);
		tids[me] = tid();
		arrived[me] = now_ns();
	}
	end = now_ns();
	/* What each thread waited at the implicit barrier: from its arrival to the end. */
	for (i = 0; i < THREADS; i++)
		report("region", tids[i], arrived[i], end);
}

/* An explicit barrier: thread 0 arrives a unit late. */
static void explicit_barrier(void)
{
#pragma omp parallel num_threads(THREADS)
	{
		uint64_t t0;

		if (omp_get_thread_num() == 0)
			BURN_CPU_MS(UNIT_MS);
		t0 = now_ns();
#pragma omp barrier
		report("barrier", tid(), t0, now_ns());
	}
}

/* A critical section thread 0 holds for 60 ms while the others queue for it. */
static void critical(void)
{
	static volatile int held;

#pragma omp parallel num_threads(THREADS)
	{
		uint64_t t0;

		if (omp_get_thread_num() == 0) {
#pragma omp critical(shared)
			{
				held = 1;
				usleep(60000);
			}
		} else {
			while (!held)
				usleep(1000);
			t0 = now_ns();
#pragma omp critical(shared)
			report("critical", tid(), t0, now_ns());
		}
	}
}

/* An omp_lock, the same way. */
static void lock(void)
{
	static volatile int held;
	omp_lock_t l;

	omp_init_lock(&l);
#pragma omp parallel num_threads(THREADS)
	{
		uint64_t t0;

		if (omp_get_thread_num() == 0) {
			omp_set_lock(&l);
			held = 1;
			usleep(60000);
			omp_unset_lock(&l);
		} else {
			while (!held)
				usleep(1000);
			t0 = now_ns();
			omp_set_lock(&l);
			report("lock", tid(), t0, now_ns());
			omp_unset_lock(&l);
		}
	}
	omp_destroy_lock(&l);
}

int main(void)
{
	int i;

	for (i = 0; i < REGIONS; i++)
		imbalanced();
	explicit_barrier();
	critical();
	lock();
	printf("regions=%d threads=%d\n", REGIONS, THREADS);
	return 0;
}
