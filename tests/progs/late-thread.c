/* SPDX-License-Identifier: MIT */
/* Burn MS ms of CPU time in burn_work, with a pthread_create of its own (exported) that starts
   every new thread DELAY ms late, as a busy machine does where a new thread waits for a CPU. */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "burn.h"

struct late {
	void *(*fn)(void *);
	void *arg;
};

static long delay_ns = 100000000;

/* The delay is a raw nanosleep: no interposer of anyone's stands in it. */
static void *late_start(void *p)
{
	struct late l = *(struct late *)p;
	struct timespec ts = { .tv_sec = delay_ns / 1000000000, .tv_nsec = delay_ns % 1000000000 };

	free(p);
	while (syscall(SYS_nanosleep, &ts, &ts) && errno == EINTR)
		;
	return l.fn(l.arg);
}

/* Found first by whoever looks pthread_create up in the global scope (the collector does). */
int pthread_create(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
	int (*real)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
	struct late *l = malloc(sizeof(*l));
	int ret;

	real = (int (*)(pthread_t *, const pthread_attr_t *, void *(*)(void *),
			void *))dlsym(RTLD_NEXT, "pthread_create");
	if (!real || !l) {
		free(l);
		return EAGAIN;
	}
	l->fn = fn;
	l->arg = arg;
	ret = real(th, attr, late_start, l);
	if (ret)
		free(l);
	return ret;
}

static __attribute__((noinline, noclone)) void burn_work(double ms)
{
	BURN_CPU_MS(ms);
}

int main(int argc, char **argv)
{
	double ms;

	if (argc != 3) {
		fprintf(stderr, "usage: late-thread MS DELAY_MS\n");
		return 2;
	}
	ms = atof(argv[1]);
	delay_ns = (long)(atof(argv[2]) * 1e6);
	burn_work(ms);
	printf("burnt %.0f ms\n", ms);
	return 0;
}
