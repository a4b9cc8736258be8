/* SPDX-License-Identifier: MIT */
/* Known CPU split: 60/30/10% of the work in three leaf functions below a 20-level call chain. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "burn.h"

#define CHAIN_DEPTH 20

/*
 * CPU milliseconds per unit. Each phase lasts many sampling intervals, so the timer samples
 * it systematically and a share is off by at most a sample per phase boundary.
 *
 * A phase burns a budget of CPU time, the known answer of the tests. With "fixed" as third
 * argument it does a fixed amount of work instead (the iterations the unit takes on a quiet
 * machine here), for the benchmarks: a profiler's cost must show as a longer run, not be
 * paid out of the budget.
 */
static double unit = 40;
static int fixed;

#define PHASE(units)                                                                               \
	do {                                                                                       \
		double ms_ = unit * (units);                                                       \
		if (fixed)                                                                         \
			BURN((long)(ms_ * (BURN_100MS / 100.0)));                                  \
		else                                                                               \
			BURN_CPU_MS(ms_);                                                          \
	} while (0)

static __attribute__((noinline, noclone)) void work_sixty(void)
{
	PHASE(6);
}

static __attribute__((noinline, noclone)) void work_thirty(void)
{
	PHASE(3);
}

static __attribute__((noinline, noclone)) void work_ten(void)
{
	PHASE(1);
}

/* CPU time of each work function as the kernel counts it, ns. */
static long long spent[3];

static __attribute__((noinline, noclone)) void chain(int depth)
{
	if (depth > 0) {
		chain(depth - 1);
	} else {
		long long t0 = burn_cpu_ns(), t1, t2, t3;

		work_sixty();
		t1 = burn_cpu_ns();
		work_thirty();
		t2 = burn_cpu_ns();
		work_ten();
		t3 = burn_cpu_ns();
		spent[0] += t1 - t0;
		spent[1] += t2 - t1;
		spent[2] += t3 - t2;
	}
	__asm__ volatile("" ::: "memory"); /* no tail call: every level stays on the stack */
}

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 5;
	struct rusage ru;

	if (argc > 2)
		unit = atof(argv[2]);
	fixed = argc > 3 && !strcmp(argv[3], "fixed");

	for (long r = 0; r < rounds; r++)
		chain(CHAIN_DEPTH);
	getrusage(RUSAGE_SELF, &ru);
	fprintf(stderr, "cpu_ns=%lld\n",
		(long long)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000ll +
			(long long)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ll);
	fprintf(stderr, "spent_ns=%lld,%lld,%lld\n", spent[0], spent[1], spent[2]);
	/* How often the thread was switched out: a task-clock event stops around each switch. */
	getrusage(RUSAGE_THREAD, &ru);
	fprintf(stderr, "switches=%ld\n", ru.ru_nvcsw + ru.ru_nivcsw);
	printf("rounds=%ld\n", rounds);
	return 0;
}
