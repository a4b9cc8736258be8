/* SPDX-License-Identifier: MIT */
/* Threads that dlopen/dlclose a library in a loop while others burn CPU, for a given time. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "burn.h"

static const char *lib;
static atomic_int stop;
static atomic_long cycles;

static void *loader(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
		void (*fn)(long);

		if (!h) {
			fprintf(stderr, "dlopen: %s\n", dlerror());
			exit(1);
		}
		fn = (void (*)(long))dlsym(h, "dl_work");
		if (fn)
			fn(100000); /* about 0.3 ms inside the library */
		dlclose(h);
		atomic_fetch_add(&cycles, 1);
	}
	return NULL;
}

static void *burner(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop))
		BURN(BURN_100MS / 100);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[3];
	struct timespec ts;
	double sec;
	int i;

	if (argc < 3) {
		fprintf(stderr, "usage: dlopen-stress LIBRARY SECONDS\n");
		return 2;
	}
	lib = argv[1];
	sec = atof(argv[2]);
	pthread_create(&t[0], NULL, loader, NULL);
	pthread_create(&t[1], NULL, loader, NULL);
	pthread_create(&t[2], NULL, burner, NULL);
	ts.tv_sec = (time_t)sec;
	ts.tv_nsec = (long)((sec - (double)ts.tv_sec) * 1e9);
	nanosleep(&ts, NULL);
	atomic_store(&stop, 1);
	for (i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	printf("dlopen_cycles=%ld\n", atomic_load(&cycles) > 0 ? 1L : 0L);
	return 0;
}
