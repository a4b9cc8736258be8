/* SPDX-License-Identifier: MIT */
/* Blocking calls with timeouts between bursts of CPU work, checked for anything a profiler's
   signal could change: EINTR, a sleep or timeout cut short, errno moved by a call that
   succeeded. Any of them aborts the program.

   no-eintr [forge [BUDGET_MS]]: "forge" makes the sampling signal interrupt nearly every call,
   which a CPU-time timer does only when it fires as a call begins: each thread arms a
   CLOCK_MONOTONIC timer every 300 us that sends pcollect's signal (PCOLLECT_SIGNAL, which the
   test forces with -knob sampling-signal; else SIGRTMAX-7) with the agent's cookie, so the agent
   takes it for its own. Without pcollect the program handles that signal itself (no SA_RESTART) and
   counts the EINTRs instead of failing on them: the hazard is real, and the count says how often it
   strikes. */
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "burn.h"

#define THREADS    2
#define ERRNO_MARK 4242

/* The agent's timers' si_value (collector/agent/agent-private.h, AGENT_COOKIE). */
#define AGENT_COOKIE ((void *)(uintptr_t)0x50434f4c4c4543ull)

static int forge, selftest;
static long long budget_ns = 1500000000; /* CPU time of each thread */
static _Atomic long calls, eintrs;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void failed(const char *what, const char *why)
{
	fprintf(stderr, "no-eintr: %s: %s\n", what, why);
	abort();
}

/*
 * After a call: EINTR is a failure (counted in the self-test), and so is a call that ended
 * before want_ns passed (a sleep or timeout cut short), or one that succeeded and moved errno.
 */
static void judge(const char *what, int failed_call, int err, uint64_t t0, uint64_t want_ns)
{
	calls++;
	if (failed_call && err == EINTR) {
		if (!selftest)
			failed(what, "interrupted (EINTR)");
		eintrs++;
		return;
	}
	if (failed_call && err != ETIMEDOUT)
		failed(what, strerror(err));
	if (!failed_call && errno != ERRNO_MARK && !selftest)
		failed(what, "errno changed by a call that succeeded");
	if (want_ns && now_ns() - t0 < want_ns && !selftest)
		failed(what, "returned before its time");
}

static void abs_in(struct timespec *ts, clockid_t clock, long ns)
{
	clock_gettime(clock, ts);
	ts->tv_nsec += ns;
	while (ts->tv_nsec >= 1000000000) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000;
	}
}

static void *worker(void *arg)
{
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
	struct epoll_event ev;
	int pfd[2], ep, futex_word = 0, i = 0;
	sem_t sem;

	(void)arg;
	if (pipe(pfd) || (ep = epoll_create1(0)) < 0 || sem_init(&sem, 0, 0))
		failed("setup", strerror(errno));
	ev.events = EPOLLIN;
	ev.data.fd = pfd[0];
	epoll_ctl(ep, EPOLL_CTL_ADD, pfd[0], &ev);
	while (burn_cpu_ns() < budget_ns) {
		struct timespec ts = { 0, 200000 }, abs;
		struct pollfd p = { pfd[0], POLLIN, 0 };
		struct timeval tv = { 0, 200 };
		fd_set rd;
		uint64_t t0;
		int r;

		/* Run into the next call with the CPU-time timer about to fire. */
		BURN(BURN_100MS / 400);
		errno = ERRNO_MARK;
		t0 = now_ns();
		switch (i++ % 9) {
		case 0:
			r = nanosleep(&ts, NULL);
			judge("nanosleep", r, errno, t0, 200000);
			break;
		case 1:
			r = clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL);
			judge("clock_nanosleep", r != 0, r, t0, 200000);
			break;
		case 2:
			abs_in(&abs, CLOCK_MONOTONIC, 200000);
			r = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &abs, NULL);
			judge("clock_nanosleep abs", r != 0, r, t0, 200000);
			break;
		case 3:
			r = usleep(200);
			judge("usleep", r, errno, t0, 200000);
			break;
		case 4:
			r = poll(&p, 1, 1);
			judge("poll", r < 0, errno, t0, 1000000);
			break;
		case 5:
			FD_ZERO(&rd);
			FD_SET(pfd[0], &rd);
			r = select(pfd[0] + 1, &rd, NULL, NULL, &tv);
			judge("select", r < 0, errno, t0, 200000);
			break;
		case 6:
			r = epoll_wait(ep, &ev, 1, 1);
			judge("epoll_wait", r < 0, errno, t0, 1000000);
			break;
		case 7:
			abs_in(&abs, CLOCK_REALTIME, 200000);
			r = sem_timedwait(&sem, &abs);
			judge("sem_timedwait", r, errno, t0, 0);
			break;
		default:
			r = (int)syscall(SYS_futex, &futex_word, FUTEX_WAIT_PRIVATE, 0, &ts, NULL,
					 0);
			judge("futex", r < 0, errno, t0, 200000);
			/* A condition with its mutex: errno must survive them too. */
			errno = ERRNO_MARK;
			pthread_mutex_lock(&m);
			abs_in(&abs, CLOCK_REALTIME, 100000);
			r = pthread_cond_timedwait(&cv, &m, &abs);
			pthread_mutex_unlock(&m);
			judge("pthread_cond_timedwait", r != 0, r, t0, 0);
			/* And a write and a read that succeed. */
			errno = ERRNO_MARK;
			r = write(pfd[1], "x", 1) != 1 || read(pfd[0], &abs, 1) != 1;
			judge("write and read", r, errno, t0, 0);
			break;
		}
	}
	close(pfd[0]);
	close(pfd[1]);
	close(ep);
	return NULL;
}

static void on_signal(int sig)
{
	(void)sig;
}

static int sampling_signal(void)
{
	const char *s = getenv("PCOLLECT_SIGNAL");

	return s ? atoi(s) : SIGRTMAX - 7;
}

/* forge: a timer sending the sampling signal to this thread, as the agent's own would. */
static void forged_timer(void)
{
	struct itimerspec its = { { 0, 300000 }, { 0, 300000 } };
	struct sigevent sev;
	timer_t timer;

	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = sampling_signal();
	sev.sigev_value.sival_ptr = AGENT_COOKIE;
	sev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
	if (timer_create(CLOCK_MONOTONIC, &sev, &timer) || timer_settime(timer, 0, &its, NULL))
		failed("timer", strerror(errno));
}

static void *forge_worker(void *arg)
{
	forged_timer();
	return worker(arg);
}

int main(int argc, char **argv)
{
	pthread_t t[THREADS];
	int i;

	forge = argc > 1 && !strcmp(argv[1], "forge");
	if (argc > 2)
		budget_ns = atoll(argv[2]) * 1000000ll;
	/* Not under pcollect: the signal is ours to handle, and to count. */
	selftest = forge && !getenv("PCOLLECT_RESULT_DIR");
	if (selftest) {
		struct sigaction sa;

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_signal;
		sigaction(sampling_signal(), &sa, NULL);
	}
	for (i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, forge ? forge_worker : worker, NULL);
	for (i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	printf("calls=%ld eintr=%ld\n", (long)calls, (long)eintrs);
	return 0;
}
