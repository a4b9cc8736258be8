/* SPDX-License-Identifier: MIT */
/* Waits of known length, each measured by the program around the call: a sleep, a condition,
   a mutex held by another thread, a pipe read until a child writes, and many short sleeps
   (with the scheduler's account of the loop's time on a CPU and waiting for one). */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "burn.h"

#define NOINLINE __attribute__((noinline))

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void pause_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* 1. A sleep of 300 ms. */
NOINLINE static uint64_t sleep_300ms(void)
{
	uint64_t t0 = now_ns();

	usleep(300000);
	__asm__ volatile("" ::: "memory");
	return now_ns() - t0;
}

/* 2. A condition signalled 200 ms after the waiter starts waiting. */
static pthread_mutex_t cond_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int cond_ready, cond_waiting;

static void *cond_signaller(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&cond_lock);
	while (!cond_waiting) {
		pthread_mutex_unlock(&cond_lock);
		pause_ms(1);
		pthread_mutex_lock(&cond_lock);
	}
	pthread_mutex_unlock(&cond_lock);
	pause_ms(200);
	pthread_mutex_lock(&cond_lock);
	cond_ready = 1;
	pthread_cond_signal(&cond);
	pthread_mutex_unlock(&cond_lock);
	return NULL;
}

NOINLINE static uint64_t cond_waiter(void)
{
	uint64_t total = 0;

	pthread_mutex_lock(&cond_lock);
	cond_waiting = 1;
	while (!cond_ready) {
		uint64_t t0 = now_ns();

		pthread_cond_wait(&cond, &cond_lock);
		total += now_ns() - t0;
	}
	pthread_mutex_unlock(&cond_lock);
	return total;
}

/* 3. A mutex another thread holds for 250 ms (burning CPU, then sleeping). */
static pthread_mutex_t held = PTHREAD_MUTEX_INITIALIZER;
static volatile int held_taken;

static void *holder(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&held);
	held_taken = 1;
	BURN_CPU_MS(50);
	pause_ms(200);
	pthread_mutex_unlock(&held);
	return NULL;
}

NOINLINE static uint64_t mutex_waiter(void)
{
	uint64_t t0, dt;

	while (!held_taken)
		pause_ms(1);
	t0 = now_ns();
	pthread_mutex_lock(&held);
	dt = now_ns() - t0;
	pthread_mutex_unlock(&held);
	return dt;
}

/* 4. A pipe read that blocks until a child writes, 150 ms after it starts. */
NOINLINE static uint64_t pipe_reader(int fd)
{
	uint64_t t0 = now_ns();
	char c;
	ssize_t n = read(fd, &c, 1);

	__asm__ volatile("" ::: "memory");
	return n == 1 ? now_ns() - t0 : 0;
}

/* This thread's time on a CPU and waiting for one (runnable), ns, as the scheduler counts it. */
static void schedstat(uint64_t *run, uint64_t *runnable)
{
	FILE *f = fopen("/proc/thread-self/schedstat", "r");
	unsigned long long a = 0, b = 0;

	if (f) {
		if (fscanf(f, "%llu %llu", &a, &b) != 2)
			a = b = 0;
		fclose(f);
	}
	*run = a;
	*runnable = b;
}

/*
 * 5. Short sleeps, under the threshold: their total is what counts. Each is timed around the
 * call, so a profiler's own work around the sleep is in that time too: the loop's time on a
 * CPU and waiting for one bound it (*cpu, *runnable).
 */
NOINLINE static uint64_t short_sleeps(int n, uint64_t *cpu, uint64_t *runnable)
{
	uint64_t total = 0, cpu0, runnable0;
	int i;

	schedstat(&cpu0, &runnable0);
	for (i = 0; i < n; i++) {
		struct timespec ts = { 0, 10000 };
		uint64_t t0 = now_ns();

		nanosleep(&ts, NULL);
		total += now_ns() - t0;
	}
	schedstat(cpu, runnable);
	*cpu -= cpu0;
	*runnable -= runnable0;
	return total;
}

int main(void)
{
	pthread_t a, b;
	int fds[2], status;
	pid_t child;
	uint64_t ns, cpu, runnable;

	printf("sleep_ns=%llu\n", (unsigned long long)sleep_300ms());

	pthread_create(&a, NULL, cond_signaller, NULL);
	ns = cond_waiter();
	pthread_join(a, NULL);
	printf("cond_ns=%llu cond_obj=%llu\n", (unsigned long long)ns,
	       (unsigned long long)(uintptr_t)&cond);

	pthread_create(&b, NULL, holder, NULL);
	ns = mutex_waiter();
	pthread_join(b, NULL);
	printf("mutex_ns=%llu mutex_obj=%llu\n", (unsigned long long)ns,
	       (unsigned long long)(uintptr_t)&held);

	if (pipe(fds))
		return 1;
	fflush(stdout);
	child = fork();
	if (child == 0) {
		close(fds[0]);
		pause_ms(150);
		if (write(fds[1], "x", 1) != 1)
			_exit(1);
		_exit(0);
	}
	close(fds[1]);
	ns = pipe_reader(fds[0]);
	waitpid(child, &status, 0);
	printf("pipe_ns=%llu pipe_fd=%d\n", (unsigned long long)ns, fds[0]);

	ns = short_sleeps(300, &cpu, &runnable);
	printf("short_ns=%llu short_n=%d short_cpu_ns=%llu short_runnable_ns=%llu\n",
	       (unsigned long long)ns, 300, (unsigned long long)cpu, (unsigned long long)runnable);
	return 0;
}
