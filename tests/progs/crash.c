/* SPDX-License-Identifier: MIT */
/* Dies after a known amount of CPU: abort(), a SIGSEGV, or SIGKILL while main waits in join. */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "burn.h"

/*
 * crash abort|segv|segv-handler MS: MS milliseconds of CPU in work(), the CPU time used since
 * main began printed (on stderr: it varies; stdout says "worked"; the start before main, the
 * loader's, a sanitizer runtime's and a profiler's own, is not the program's work),
 * then abort(), a store through a null pointer, or the same with the program's own SIGSEGV
 * handler installed (it prints a line, then dies of the signal with the default action).
 * crash join MS: two workers burn 2*MS and MS milliseconds of CPU each (worker_two,
 * worker_one) while main waits in pthread_join(), print their CPU time on stderr, then
 * sleep, waiting to be killed.
 */

static __attribute__((noinline, noclone)) void work(double ms)
{
	BURN_CPU_MS(ms);
}

static void on_segv(int sig)
{
	static const char msg[] = "handler ran\n";

	if (write(1, msg, sizeof(msg) - 1) < 0)
		_exit(3);
	signal(sig, SIG_DFL);
	raise(sig);
}

static double unit_ms;

static __attribute__((noinline, noclone)) void *worker_two(void *arg)
{
	(void)arg;
	BURN_CPU_MS(2 * unit_ms);
	fprintf(stderr, "two=%lld\n", burn_cpu_ns());
	for (;;)
		pause();
	return NULL;
}

static __attribute__((noinline, noclone)) void *worker_one(void *arg)
{
	(void)arg;
	BURN_CPU_MS(unit_ms);
	fprintf(stderr, "one=%lld\n", burn_cpu_ns());
	for (;;)
		pause();
	return NULL;
}

int main(int argc, char **argv)
{
	/* The first page is never mapped; not NULL, so that UBSan's null check leaves the
	 * fault to the kernel in a sanitizer build. */
	volatile uintptr_t page0 = 64; /* volatile: the compiler cannot see it is constant */
	volatile int *nowhere = (volatile int *)page0;
	long long cpu0 = burn_cpu_ns();

	if (argc != 3)
		return 2;
	if (!strcmp(argv[1], "join")) {
		pthread_t a, b;

		unit_ms = atof(argv[2]);
		if (pthread_create(&a, NULL, worker_two, NULL) ||
		    pthread_create(&b, NULL, worker_one, NULL))
			return 2;
		pthread_join(a, NULL);
		pthread_join(b, NULL);
		return 0;
	}
	work(atof(argv[2]));
	fprintf(stderr, "cpu_ns=%lld\n", burn_cpu_ns() - cpu0);
	printf("worked\n");
	fflush(stdout);
	if (!strcmp(argv[1], "abort"))
		abort();
	if (!strcmp(argv[1], "segv-handler"))
		signal(SIGSEGV, on_segv);
	else if (strcmp(argv[1], "segv"))
		return 2;
	*nowhere = 1;
	return 0;
}
