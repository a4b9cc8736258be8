/* SPDX-License-Identifier: MIT */
/* Two OpenMP parallel regions in one function, of known CPU split, each with one thread
   waiting for the other at its implicit barrier: what the views name each part. */
#include <omp.h>
#include <pthread.h>
#include <stdio.h>
#include <time.h>

#include "burn.h"

#define UNIT_MS 100

static long long clock_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

/*
 * Region 1: thread 0 works 4 units, thread 1 works 2 and waits (spinning, with
 * OMP_WAIT_POLICY=active) for thread 0; region 2: both work 2 units, thread 1 a little
 * less, to wait a little too. Each thread notes its work in CPU time and the CPU time it
 * spent from the end of its work to the end of the region (its barrier wait): printed as
 * r<region>_t<thread>_busy_ns / _spin_ns, and the threads' CPU time in all as cpu_ns, for
 * tests/e2e/omp-names.py.
 */
int main(void)
{
	long long busy[2][2] = { { 0 } }, cpu_done[2][2] = { { 0 } }, spin[2][2] = { { 0 } };
	long long start[2] = { 0 };
	clockid_t cpu[2];
	int n = 0, r, i;

#pragma omp parallel num_threads(2)
	{
		int me = omp_get_thread_num();
		long long c0;

		pthread_getcpuclockid(pthread_self(), &cpu[me]);
		start[me] = clock_ns(cpu[me]);
		c0 = burn_cpu_ns();
		BURN_CPU_MS(me == 0 ? 4 * UNIT_MS : 2 * UNIT_MS);
		busy[0][me] = burn_cpu_ns() - c0;
		cpu_done[0][me] = clock_ns(cpu[me]);
		if (me == 0)
			n = omp_get_num_threads();
	}
	for (i = 0; i < n; i++)
		spin[0][i] = clock_ns(cpu[i]) - cpu_done[0][i];
#pragma omp parallel num_threads(2)
	{
		int me = omp_get_thread_num();
		long long c0 = burn_cpu_ns();

		BURN_CPU_MS(me == 0 ? 2 * UNIT_MS : 2 * UNIT_MS - UNIT_MS / 4);
		busy[1][me] = burn_cpu_ns() - c0;
		cpu_done[1][me] = clock_ns(cpu[me]);
	}
	for (i = 0; i < n; i++)
		spin[1][i] = clock_ns(cpu[i]) - cpu_done[1][i];
	for (r = 0; r < 2; r++)
		for (i = 0; i < n; i++)
			printf("r%d_t%d_busy_ns=%lld r%d_t%d_spin_ns=%lld\n", r + 1, i, busy[r][i],
			       r + 1, i, spin[r][i]);
	for (i = 0; i < n; i++)
		printf("t%d_cpu_ns=%lld\n", i, clock_ns(cpu[i]) - start[i]);
	return n == 2 ? 0 : 1;
}
