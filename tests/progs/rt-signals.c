/* SPDX-License-Identifier: MIT */
/*
 * A program that uses real-time signals itself, the one a profiler samples with among them:
 *   rt-signals queue SIG     blocks SIG alone, then 10 rounds: burns 20 ms of CPU time in
 *                            rt_work, sigqueue()s SIG to itself with the round's number and
 *                            takes it back with sigtimedwait(); a second thread, started
 *                            before, blocks SIG too and burns 150 ms in side_work;
 *   rt-signals signalfd SIG  the same, SIG read from a signalfd;
 *   rt-signals handler SIG   the same, SIG taken by a handler of its own (sigaction);
 *   rt-signals all           burns 100 ms in early_work, then blocks every real-time signal
 *                            (a set that is not full) and, 10 rounds, burns 20 ms in rt_work
 *                            and sends itself each of them, taken back with sigwaitinfo();
 *   rt-signals blanket       blocks every signal but SIGINT and SIGTERM, then burns 10 x 20 ms
 *                            in rt_work (a profiler must go on sampling it).
 * Prints what came back; exits 0 when every signal came back as sent, else 1. On stderr, the
 * CPU time each function burned as the thread's clock measured it (a burn ends up to a tick
 * late): "rt_work_ns=N side_work_ns=N early_work_ns=N".
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "burn.h"

#define ROUNDS 10

static volatile sig_atomic_t handled, handled_bad;
static long long rt_ns, side_ns, early_ns; /* CPU time each function burned */
static pthread_barrier_t claimed;
static sigset_t side_mask; /* what the second thread blocks: nothing with a handler */

static __attribute__((noinline, noclone)) void rt_work(void)
{
	long long t0 = burn_cpu_now_ns();

	BURN_CPU_MS_SEED(20, 3);
	rt_ns += burn_cpu_now_ns() - t0;
}

static __attribute__((noinline, noclone)) void early_work(void)
{
	long long t0 = burn_cpu_now_ns();

	BURN_CPU_MS_SEED(100, 5);
	early_ns += burn_cpu_now_ns() - t0;
}

static __attribute__((noinline, noclone)) void side_work(void)
{
	long long t0 = burn_cpu_now_ns();

	BURN_CPU_MS_SEED(150, 7);
	side_ns += burn_cpu_now_ns() - t0;
}

static int done(int code)
{
	fprintf(stderr, "rt_work_ns=%lld side_work_ns=%lld early_work_ns=%lld\n", rt_ns, side_ns,
		early_ns);
	return code;
}

static void *side(void *arg)
{
	(void)arg;
	/* Blocked here first: the process's signal is never this thread's to take. */
	pthread_sigmask(SIG_BLOCK, &side_mask, NULL);
	pthread_barrier_wait(&claimed);
	side_work();
	return NULL;
}

static void on_rt(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	if (si->si_code == SI_QUEUE && si->si_value.sival_int == handled + 1000 * sig)
		handled++;
	else
		handled_bad++;
}

static void send(int sig, int value)
{
	union sigval v = { .sival_int = value };

	if (sigqueue(getpid(), sig, v)) {
		fprintf(stderr, "sigqueue %d: %s\n", sig, strerror(errno));
		exit(1);
	}
}

/* One round's signal back: its value, or -1. */
static int take(const char *how, int sig, int fd)
{
	struct timespec limit = { 5, 0 };
	struct signalfd_siginfo fsi;
	sigset_t set;
	siginfo_t si;

	if (!strcmp(how, "signalfd")) {
		if (read(fd, &fsi, sizeof(fsi)) != (ssize_t)sizeof(fsi) ||
		    (int)fsi.ssi_signo != sig || fsi.ssi_code != SI_QUEUE)
			return -1;
		return fsi.ssi_int;
	}
	sigemptyset(&set);
	sigaddset(&set, sig);
	if (sigtimedwait(&set, &si, &limit) != sig || si.si_code != SI_QUEUE)
		return -1;
	return si.si_value.sival_int;
}

static int one(const char *how, int sig)
{
	struct sigaction sa;
	pthread_t th;
	sigset_t set;
	int fd = -1, i, good = 0;

	pthread_barrier_init(&claimed, NULL, 2);
	sigemptyset(&set);
	sigaddset(&set, sig);
	sigemptyset(&side_mask);
	if (strcmp(how, "handler"))
		side_mask = set;
	pthread_create(&th, NULL, side, NULL);
	if (!strcmp(how, "handler")) {
		memset(&sa, 0, sizeof(sa));
		sa.sa_sigaction = on_rt;
		sa.sa_flags = SA_SIGINFO | SA_RESTART;
		sigaction(sig, &sa, NULL);
	} else {
		pthread_sigmask(SIG_BLOCK, &set, NULL);
		if (!strcmp(how, "signalfd") && (fd = signalfd(-1, &set, SFD_CLOEXEC)) < 0) {
			fprintf(stderr, "signalfd: %s\n", strerror(errno));
			return 1;
		}
	}
	pthread_barrier_wait(&claimed);
	for (i = 0; i < ROUNDS; i++) {
		rt_work();
		send(sig, 1000 * sig + i);
		if (strcmp(how, "handler"))
			good += take(how, sig, fd) == 1000 * sig + i;
	}
	pthread_join(th, NULL);
	if (!strcmp(how, "handler"))
		good = handled_bad ? 0 : handled;
	printf("%s: %d of %d signals came back as sent\n", how, good, ROUNDS);
	return done(good == ROUNDS ? 0 : 1);
}

/* Every real-time signal the program's own: each sent and taken back, every round. */
static int all(void)
{
	int sig, i, good = 0, n = SIGRTMAX - SIGRTMIN + 1;
	sigset_t set;
	siginfo_t si;

	early_work();
	sigemptyset(&set);
	for (sig = SIGRTMIN; sig <= SIGRTMAX; sig++)
		sigaddset(&set, sig);
	sigprocmask(SIG_BLOCK, &set, NULL);
	for (i = 0; i < ROUNDS; i++) {
		rt_work();
		for (sig = SIGRTMIN; sig <= SIGRTMAX; sig++)
			send(sig, 1000 * sig + i);
		/* Real-time signals come lowest number first, each in the order sent. */
		for (sig = SIGRTMIN; sig <= SIGRTMAX; sig++)
			good += sigwaitinfo(&set, &si) == sig && si.si_code == SI_QUEUE &&
				si.si_value.sival_int == 1000 * sig + i;
	}
	printf("all: %d of %d signals came back as sent\n", good, ROUNDS * n);
	return done(good == ROUNDS * n ? 0 : 1);
}

/* A thread that leaves signals to others: it claims none in particular. */
static int blanket(void)
{
	sigset_t set;
	int i;

	sigfillset(&set);
	sigdelset(&set, SIGINT);
	sigdelset(&set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	for (i = 0; i < ROUNDS; i++)
		rt_work();
	printf("blanket: %d rounds\n", ROUNDS);
	return done(0);
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "all"))
		return all();
	if (argc == 2 && !strcmp(argv[1], "blanket"))
		return blanket();
	if (argc == 3 && (!strcmp(argv[1], "queue") || !strcmp(argv[1], "signalfd") ||
			  !strcmp(argv[1], "handler")))
		return one(argv[1], atoi(argv[2]));
	fprintf(stderr, "usage: rt-signals queue|signalfd|handler SIG | all | blanket\n");
	return 2;
}
