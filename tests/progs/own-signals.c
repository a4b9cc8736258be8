/* SPDX-License-Identifier: MIT */
/* A program with its own profiling signals: SIGPROF handler + setitimer, or everything blocked. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>

#include "burn.h"

static volatile sig_atomic_t prof_count;

static void on_prof(int sig)
{
	(void)sig;
	prof_count++;
}

static __attribute__((noinline, noclone)) void own_work(long n)
{
	BURN(n);
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "block-all")) {
		/* Block every signal, then work: the profiler should still see this. */
		sigset_t all;

		sigfillset(&all);
		sigprocmask(SIG_BLOCK, &all, NULL);
		own_work(BURN_100MS * 10);
		printf("blocked work done\n");
		return 0;
	}
	/* "sigprof": 10 ms of CPU per signal over about 1 s of CPU: about 100 signals. */
	struct sigaction sa;
	struct itimerval it = { { 0, 10000 }, { 0, 10000 } };

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_prof;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGPROF, &sa, NULL);
	setitimer(ITIMER_PROF, &it, NULL);
	own_work(BURN_100MS * 10);
	it.it_value.tv_usec = it.it_interval.tv_usec = 0;
	setitimer(ITIMER_PROF, &it, NULL);
	printf("sigprof_count=%d\n", (int)prof_count);
	return 0;
}
