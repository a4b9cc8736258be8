/* SPDX-License-Identifier: MIT */
/* libpyburn: native CPU work that the Python test programs call through ctypes. */
#include <pthread.h>

#include "burn.h"

#define EXPORT __attribute__((visibility("default"), noinline))

long pyburn_spin(double ms);
long pyburn_thread_spin(double ms);

/* Burns ms milliseconds of the calling thread's CPU time (tests/progs/python/native.py). */
EXPORT long pyburn_spin(double ms)
{
	BURN_CPU_MS(ms);
	return (long)(burn_sink & 0xff);
}

static void *pyburn_thread_main(void *arg)
{
	BURN_CPU_MS(*(double *)arg);
	return NULL;
}

/* Burns ms milliseconds of CPU time in a thread of its own, one Python never knew
   (degrade.py), and waits for it. */
EXPORT long pyburn_thread_spin(double ms)
{
	pthread_t t;

	if (pthread_create(&t, NULL, pyburn_thread_main, &ms))
		return -1;
	pthread_join(t, NULL);
	return (long)(burn_sink & 0xff);
}
