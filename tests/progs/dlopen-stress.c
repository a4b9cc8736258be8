/* SPDX-License-Identifier: MIT */
/*
 * Two threads dlopen/dlclose a library in a loop, calling into it, while a third burns CPU;
 * each thread works until it has used SECONDS of CPU time (and the loaders have made at least
 * MIN_CYCLES cycles each), so the work is the same on a quiet and on a busy machine.
 * Prints "dlopen_cycles=1" once every loader has cycled; each thread's tid, CPU time and
 * cycles go to stderr: "tid=N cpu_ns=N cycles=N".
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "burn.h"

#define MIN_CYCLES 100

static const char *lib;
static long long budget_ns;

struct worker {
	pthread_t t;
	long tid, cycles;
	long long cpu_ns;
};

static void *loader(void *arg)
{
	struct worker *me = arg;
	long long end = burn_cpu_ns() + budget_ns;

	me->tid = (long)syscall(SYS_gettid);
	while (burn_cpu_ns() < end || me->cycles < MIN_CYCLES) {
		void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
		void (*fn)(long);

		if (!h) {
			fprintf(stderr, "dlopen: %s\n", dlerror());
			exit(1);
		}
		fn = (void (*)(long))dlsym(h, "dl_work");
		if (fn)
			fn(100000); /* about 0.1 ms inside the library */
		dlclose(h);
		me->cycles++;
	}
	me->cpu_ns = burn_cpu_ns();
	return NULL;
}

static void *burner(void *arg)
{
	struct worker *me = arg;

	me->tid = (long)syscall(SYS_gettid);
	BURN_CPU_MS(budget_ns / 1e6);
	me->cpu_ns = burn_cpu_ns();
	return NULL;
}

int main(int argc, char **argv)
{
	struct worker w[3] = { 0 };
	int i;

	if (argc < 3) {
		fprintf(stderr, "usage: dlopen-stress LIBRARY SECONDS\n");
		return 2;
	}
	lib = argv[1];
	budget_ns = (long long)(atof(argv[2]) * 1e9);
	pthread_create(&w[0].t, NULL, loader, &w[0]);
	pthread_create(&w[1].t, NULL, loader, &w[1]);
	pthread_create(&w[2].t, NULL, burner, &w[2]);
	for (i = 0; i < 3; i++)
		pthread_join(w[i].t, NULL);
	for (i = 0; i < 3; i++)
		fprintf(stderr, "tid=%ld cpu_ns=%lld cycles=%ld\n", w[i].tid, w[i].cpu_ns,
			w[i].cycles);
	printf("dlopen_cycles=%d\n", w[0].cycles >= MIN_CYCLES && w[1].cycles >= MIN_CYCLES);
	return 0;
}
