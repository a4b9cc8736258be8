/* SPDX-License-Identifier: MIT */
/* Two OpenMP parallel regions in one function, of known CPU split, each with one thread
   waiting for the other at its implicit barrier: what the views name each part. */
#include <omp.h>
#include <pthread.h>
#include <stdio.h>
#include <time.h>

#include "burn.h"

#define UNIT_MS 40 /* CPU time: region 1 takes 6 units, region 2 four less a quarter */

static long long clock_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

/*
 * Region 1: thread 0 works 4 units, thread 1 works 2 and waits (spinning, with
 * OMP_WAIT_POLICY=active) for thread 0; region 2: both work 2 units, thread 1 a quarter
 * unit less, to wait a little too. Each thread notes its work in CPU time and the CPU time
 * it spent from the end of its work to the end of the region (its barrier wait): written to
 * the file argv[1] as r<region>_t<thread>_busy_ns / _spin_ns, with each thread's CPU time
 * from the start of region 1 as t<thread>_cpu_ns, for tests/e2e/omp-names.py. Standard
 * output says only what ran: the same with and without a profiler.
 */
int main(int argc, char **argv)
{
	FILE *out = argc > 1 ? fopen(argv[1], "w") : NULL;
	long long busy[2][2] = { { 0 } }, cpu_done[2][2] = { { 0 } }, spin[2][2] = { { 0 } };
	long long start[2] = { 0 };
	clockid_t cpu[2];
	int n = 0, r, i;

#pragma omp parallel num_threads(2) /* REGION-1 */
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
#pragma omp parallel num_threads(2) /* REGION-2 */
	{
		int me = omp_get_thread_num();
		long long c0 = burn_cpu_ns();

		BURN_CPU_MS(me == 0 ? 2 * UNIT_MS : 2 * UNIT_MS - UNIT_MS / 4);
		busy[1][me] = burn_cpu_ns() - c0;
		cpu_done[1][me] = clock_ns(cpu[me]);
	}
	for (i = 0; i < n; i++)
		spin[1][i] = clock_ns(cpu[i]) - cpu_done[1][i];
	for (r = 0; out && r < 2; r++)
		for (i = 0; i < n; i++)
			fprintf(out, "r%d_t%d_busy_ns=%lld r%d_t%d_spin_ns=%lld\n", r + 1, i,
				busy[r][i], r + 1, i, spin[r][i]);
	for (i = 0; out && i < n; i++)
		fprintf(out, "t%d_cpu_ns=%lld\n", i, clock_ns(cpu[i]) - start[i]);
	if (out && fclose(out))
		return 1;
	printf("two regions of %d threads\n", n);
	return n == 2 && out ? 0 : 1;
}
