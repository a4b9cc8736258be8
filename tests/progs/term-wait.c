/* SPDX-License-Identifier: MIT */
/* A wait of known start killed by a signal: short reads, then a 5 s sleep in wait_here(). */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/*
 * Prints "waiting" on stdout and, on stderr, the CLOCK_MONOTONIC ns at which wait_here() is
 * about to block: a test that kills the program during the sleep knows how long it waited.
 * Before it, 20 reads of an empty pipe's peer that a child fills 1 ms later: short waits.
 * With the argument "burn", 5 s of CPU work in burn() take the sleep's place.
 */
static __attribute__((noinline)) void wait_here(void)
{
	struct timespec ts, req = { 5, 0 };

	clock_gettime(CLOCK_MONOTONIC, &ts);
	fprintf(stderr, "start_ns=%lld\n", (long long)ts.tv_sec * 1000000000ll + ts.tv_nsec);
	nanosleep(&req, NULL);
	__asm__ volatile("" ::: "memory"); /* the call is no tail call: wait_here stays */
}

static long long mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

/* "burn": 5 s on the CPU instead of the sleep (no wait, only the short ones before). */
static __attribute__((noinline)) void burn(void)
{
	long long start = mono_ns();
	volatile unsigned x = 1;

	fprintf(stderr, "start_ns=%lld\n", start);
	while (mono_ns() - start < 5000000000ll)
		x = x * 1664525u + 1013904223u;
}

static __attribute__((noinline)) void short_waits(void)
{
	struct timespec ms = { 0, 1000000 };
	int i, p[2];
	char c;

	for (i = 0; i < 20; i++) {
		if (pipe(p))
			return;
		if (fork() == 0) {
			nanosleep(&ms, NULL);
			if (write(p[1], "x", 1) != 1)
				_exit(1);
			_exit(0);
		}
		if (read(p[0], &c, 1) != 1)
			return;
		close(p[0]);
		close(p[1]);
	}
}

int main(int argc, char **argv)
{
	short_waits();
	printf("waiting\n");
	fflush(stdout);
	if (argc > 1 && !strcmp(argv[1], "burn"))
		burn();
	else
		wait_here();
	printf("done\n");
	return 0;
}
