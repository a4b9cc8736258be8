/* SPDX-License-Identifier: MIT */
/*
 * A program with its own profiling signals, burning 1 s of CPU time in own_work:
 *   sigprof        a SIGPROF handler and setitimer(ITIMER_PROF, 10 ms), as gprof does;
 *   sigprof-timer  a SIGPROF handler and a 10 ms CLOCK_PROCESS_CPUTIME_ID timer, counting
 *                  1 + si_overrun a signal: the intervals that elapsed, exactly;
 *   block-all      every signal blocked.
 * Prints "sigprof_count=N" (intervals the handler saw), and on stderr "cpu_ns=N", the CPU time
 * the process used while its timer ran.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <time.h>

#include "burn.h"

static volatile sig_atomic_t prof_count;

static void on_prof(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	prof_count += 1 + (si->si_code == SI_TIMER ? si->si_overrun : 0);
}

static __attribute__((noinline, noclone)) void own_work(void)
{
	BURN_CPU_MS(1000);
}

/* The process's CPU time, ns: what its CPU-time timers count. */
static long long process_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	struct itimerspec its = { { 0, 10000000 }, { 0, 10000000 } }, off = { 0 };
	struct itimerval it = { { 0, 10000 }, { 0, 10000 } }, stop = { 0 };
	struct sigevent sev = { 0 };
	struct sigaction sa;
	long long cpu0;
	timer_t timer;
	int posix;

	if (argc > 1 && !strcmp(argv[1], "block-all")) {
		/* Block every signal, then work: the profiler should still see this. */
		sigset_t all;

		sigfillset(&all);
		sigprocmask(SIG_BLOCK, &all, NULL);
		own_work();
		printf("blocked work done\n");
		return 0;
	}
	posix = argc > 1 && !strcmp(argv[1], "sigprof-timer");
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_prof;
	sa.sa_flags = SA_RESTART | SA_SIGINFO;
	sigaction(SIGPROF, &sa, NULL);
	sev.sigev_notify = SIGEV_SIGNAL;
	sev.sigev_signo = SIGPROF;
	if (posix && timer_create(CLOCK_PROCESS_CPUTIME_ID, &sev, &timer)) {
		perror("timer_create");
		return 1;
	}
	cpu0 = process_cpu_ns();
	if (posix)
		timer_settime(timer, 0, &its, NULL);
	else
		setitimer(ITIMER_PROF, &it, NULL);
	own_work();
	if (posix)
		timer_settime(timer, 0, &off, NULL);
	else
		setitimer(ITIMER_PROF, &stop, NULL);
	fprintf(stderr, "cpu_ns=%lld\n", process_cpu_ns() - cpu0);
	printf("sigprof_count=%d\n", (int)prof_count);
	return 0;
}
