/* SPDX-License-Identifier: MIT */
/* A program pcollect -target-pid attaches to: known phases, then a look at its own signals. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <unistd.h>

#include "burn.h"

/*
 * attach-target phases MS1 MS2: burns MS1 ms of CPU time in phase_one, then MS2 in phase_two.
 * attach-target thread FILE MS: waits (sleeping) until FILE exists, then burns MS ms in a
 * thread it creates then (after the attach: a thread the agent learns of through
 * pthread_create), and MS in main meanwhile.
 * Either way it prints its pid first, and at the end what it finds of a profiler: signals
 * whose disposition is not the default, signals pending, its thread count (the agent's
 * control thread must be gone). Exit code 3.
 */

static __attribute__((noinline, noclone)) void phase_one(double ms)
{
	BURN_CPU_MS(ms);
}

static __attribute__((noinline, noclone)) void phase_two(double ms)
{
	BURN_CPU_MS(ms);
}

static __attribute__((noinline, noclone)) void *worker(void *arg)
{
	BURN_CPU_MS(*(double *)arg);
	return NULL;
}

static int count_threads(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;

	while (d && (e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	if (d)
		closedir(d);
	return n;
}

static void report(void)
{
	sigset_t pending;
	int sig, handlers = 0, npending = 0;

	sigpending(&pending);
	for (sig = 1; sig <= SIGRTMAX; sig++) {
		struct sigaction sa;

		if (sig == SIGKILL || sig == SIGSTOP || (sig > SIGSYS && sig < SIGRTMIN))
			continue;
		if (!sigaction(sig, NULL, &sa) && !(sa.sa_flags & SA_SIGINFO) &&
		    sa.sa_handler == SIG_DFL)
			continue;
		printf("handler for signal %d\n", sig);
		handlers++;
	}
	for (sig = 1; sig <= SIGRTMAX; sig++)
		if (sigismember(&pending, sig) == 1) {
			printf("pending signal %d\n", sig);
			npending++;
		}
	printf("handlers=%d pending=%d threads=%d\n", handlers, npending, count_threads());
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "phases")) {
		printf("pid=%d\n", (int)getpid());
		fflush(stdout);
		phase_one(atof(argv[2]));
		phase_two(atof(argv[3]));
	} else if (argc == 4 && !strcmp(argv[1], "thread")) {
		double ms = atof(argv[3]);
		pthread_t t;

		printf("pid=%d\n", (int)getpid());
		fflush(stdout);
		while (access(argv[2], F_OK))
			usleep(2000);
		if (pthread_create(&t, NULL, worker, &ms))
			return 1;
		phase_one(ms);
		pthread_join(t, NULL);
	} else {
		fprintf(stderr, "usage: attach-target phases MS1 MS2 | thread FILE MS\n");
		return 2;
	}
	report();
	return 3;
}
