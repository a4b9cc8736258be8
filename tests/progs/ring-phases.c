/* SPDX-License-Identifier: MIT */
/* Two phases of known CPU time, A then B, with a log of the clocks for -ring-buffer's answer. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "burn.h"

/*
 * Usage: ring-phases A_MS B_MS LOG [MARK]: burns A_MS ms of CPU time in phase_a(), then B_MS
 * in phase_b(), each 10 ms step followed by waits: a sleep of 1 ms and four of 20 us (long
 * and short waits for -collect threading); creates MARK (when given) once half of B is
 * burnt; at the end writes LOG, one line per step: the phase, CLOCK_MONOTONIC, the thread's
 * CPU time and the time it slept so far (ns), from which the test knows what CPU and wait
 * time each phase had in any stretch of wall time. Prints the budgets only: the output is
 * the same with and without the collector.
 */
#define STEP_MS  10
#define MAX_LOGS 100000

static struct {
	char phase;
	long long mono, cpu, slept;
} logs[MAX_LOGS];
static int nlogs;
static long long slept;

static long long mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

static void note(char phase)
{
	if (nlogs < MAX_LOGS) {
		logs[nlogs].phase = phase;
		logs[nlogs].mono = mono_ns();
		logs[nlogs].cpu = burn_cpu_now_ns();
		logs[nlogs].slept = slept;
		nlogs++;
	}
}

/* A macro: each phase's sleeps are call sites of its own. */
#define SLEEP_NS(ns)                                                                               \
	do {                                                                                       \
		struct timespec d_ = { 0, (ns) };                                                  \
		long long t_ = mono_ns();                                                          \
		nanosleep(&d_, NULL);                                                              \
		slept += mono_ns() - t_;                                                           \
	} while (0)
#define WAITS()                                                                                    \
	do {                                                                                       \
		SLEEP_NS(1000000);                                                                 \
		for (int k_ = 0; k_ < 4; k_++)                                                     \
			SLEEP_NS(20000);                                                           \
	} while (0)

static __attribute__((noinline, noclone)) void phase_a(long ms)
{
	for (long i = 0; i < ms / STEP_MS; i++) {
		BURN_CPU_MS_SEED(STEP_MS, 3);
		WAITS();
		note('A');
	}
}

static __attribute__((noinline, noclone)) void phase_b(long ms, const char *mark)
{
	for (long i = 0; i < ms / STEP_MS; i++) {
		BURN_CPU_MS_SEED(STEP_MS, 5);
		WAITS();
		note('B');
		if (mark && i == ms / STEP_MS / 2) {
			FILE *f = fopen(mark, "w");

			if (f)
				fclose(f);
		}
	}
}

int main(int argc, char **argv)
{
	long a, b;
	FILE *f;

	if (argc < 4) {
		fprintf(stderr, "usage: ring-phases A_MS B_MS LOG [MARK]\n");
		return 2;
	}
	a = atol(argv[1]);
	b = atol(argv[2]);
	note('-');
	phase_a(a);
	phase_b(b, argc > 4 ? argv[4] : NULL);
	if (!(f = fopen(argv[3], "w"))) {
		perror(argv[3]);
		return 1;
	}
	for (int i = 0; i < nlogs; i++)
		fprintf(f, "%c %lld %lld %lld\n", logs[i].phase, logs[i].mono, logs[i].cpu,
			logs[i].slept);
	fclose(f);
	printf("phase A %ld ms, phase B %ld ms\n", a, b);
	return 0;
}
