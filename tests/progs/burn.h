/* SPDX-License-Identifier: MIT */
/* Deterministic CPU work for the collector's known-behaviour programs. */
#ifndef PCOLLECT_TESTS_BURN_H
#define PCOLLECT_TESTS_BURN_H

#include <sys/resource.h>
#include <time.h>

/*
 * A chain of dependent multiplications: its latency (not loop alignment or the front end)
 * sets the speed. About 80 million iterations per 100 ms here. The seed keeps functions that
 * burn alike from being folded into one by the compiler (-fipa-icf).
 */
static volatile unsigned long burn_sink;
#define BURN_SEED(n, seed)                                                                         \
	do {                                                                                       \
		unsigned long x_ = (seed);                                                         \
		for (long i_ = 0; i_ < (long)(n); i_++) {                                          \
			x_ = x_ * 6364136223846793005ul + 1;                                       \
			__asm__ volatile("" : "+r"(x_)::"memory");                                 \
		}                                                                                  \
		burn_sink = x_;                                                                    \
	} while (0)
#define BURN(n) BURN_SEED(n, 1)

#define BURN_100MS 80000000L

/*
 * This thread's CPU time as the kernel counts it (the sum its CPU-time timers run on), as of
 * the last tick or context switch.
 *
 * Not clock_gettime(CLOCK_THREAD_CPUTIME_ID): reading that clock brings the thread's
 * scheduler accounting up to date, which on a busy machine preempts the thread as soon as
 * its time slice ends, between two ticks. A thread that polls it thousands of times a second
 * is then seldom the one running when the tick checks the CPU-time timers, and a timer
 * signal can be hundreds of milliseconds late (docs/pcollect.md, "Limits").
 * getrusage(RUSAGE_THREAD) reads the sum without that update.
 */
static inline long long burn_cpu_ns(void)
{
	struct rusage ru;

	getrusage(RUSAGE_THREAD, &ru);
	return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000ll +
	       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ll;
}

/* The thread's CPU time brought up to date (CLOCK_THREAD_CPUTIME_ID): to read once, at the end. */
static inline long long burn_cpu_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

/*
 * Burns MS milliseconds of this thread's CPU time, in chunks of about 0.1 ms with a look at
 * the clock between them (under 1% of the time). A known answer given in CPU time holds on
 * a loaded machine too, where an iteration's cost moves with what shares the core: the
 * sampler measures the same time. The sum moves at ticks, so a phase ends up to one tick
 * (4 ms here) late: make phases tens of milliseconds long.
 */
#define BURN_CHUNK 80000L
#define BURN_CPU_MS_SEED(ms, seed)                                                                 \
	do {                                                                                       \
		long long end_ = burn_cpu_ns() + (long long)(1000000.0 * (ms));                    \
		while (burn_cpu_ns() < end_)                                                       \
			BURN_SEED(BURN_CHUNK, seed);                                               \
	} while (0)
#define BURN_CPU_MS(ms) BURN_CPU_MS_SEED(ms, 1)

#endif
