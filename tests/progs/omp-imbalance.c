/* SPDX-License-Identifier: MIT */
/* An OpenMP parallel region of two threads in which thread 0 is given twice the work of
   thread 1, which then waits for it in the region's implicit barrier: times known. */
#include <omp.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "burn.h"

#define UNIT_MS 150 /* thread 1's work, in CPU time; thread 0 does twice this */

static long long clock_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

/*
 * Each thread notes its work in CPU time (busy), the wall time it began and ended it, and
 * its CPU clock; once the region is over, the main thread reads, per thread, the wall time
 * from the end of its work to the end of the region (its wait in the implicit barrier) and
 * the CPU time it used meanwhile (spinning, with OMP_WAIT_POLICY=active); and the wall time
 * from just before the fork to just after the join, which holds the region as the runtime
 * records it and, before it, the runtime's first start of its threads (200 ms on a loaded
 * machine); and the CPU time the main thread (thread 0) used from just before the fork to
 * the start of its work, where the runtime starts the team and, with OMP_WAIT_POLICY=active,
 * spins until thread 1 is there (20 ms seen on a loaded machine). Printed as
 * thread<i>_<what>=<ns>, region_ns=<ns> and start_cpu_ns=<ns> for tests/e2e/omp-imbalance.py.
 */
int main(void)
{
	long long busy[2] = { 0 }, start[2] = { 0 }, done[2] = { 0 }, cpu_done[2] = { 0 };
	long long before, end, spin[2] = { 0 }, cpu_before, cpu_start = 0;
	clockid_t cpu[2];
	long tid[2] = { 0 };
	int n = 0, i;

	cpu_before = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	before = clock_ns(CLOCK_MONOTONIC);
#pragma omp parallel num_threads(2)
	{
		int me = omp_get_thread_num();
		long long c0;

		if (me == 0)
			cpu_start = clock_ns(CLOCK_THREAD_CPUTIME_ID);
		pthread_getcpuclockid(pthread_self(), &cpu[me]);
		tid[me] = syscall(SYS_gettid);
		start[me] = clock_ns(CLOCK_MONOTONIC);
		c0 = burn_cpu_ns();
		BURN_CPU_MS(me == 0 ? 2 * UNIT_MS : UNIT_MS);
		busy[me] = burn_cpu_ns() - c0;
		cpu_done[me] = clock_ns(cpu[me]);
		done[me] = clock_ns(CLOCK_MONOTONIC);
		if (me == 0)
			n = omp_get_num_threads();
	}
	end = clock_ns(CLOCK_MONOTONIC);
	for (i = 1; i < n; i++)
		spin[i] = clock_ns(cpu[i]) - cpu_done[i];
	for (i = 0; i < n; i++)
		printf("thread%d_tid=%ld thread%d_busy_ns=%lld thread%d_work_wall_ns=%lld "
		       "thread%d_wait_ns=%lld thread%d_spin_ns=%lld\n",
		       i, tid[i], i, busy[i], i, done[i] - start[i], i, end - done[i], i, spin[i]);
	printf("region_ns=%lld start_cpu_ns=%lld\n", end - before, cpu_start - cpu_before);
	return n == 2 ? 0 : 1;
}
