/* SPDX-License-Identifier: MIT */
/* libpyburn: native CPU work that the Python test programs call through ctypes. */
#include <pthread.h>

#include "burn.h"

#define EXPORT __attribute__((visibility("default"), noinline))

long pyburn_spin(long n);
long pyburn_thread_spin(long n);

/* Burns n iterations in the calling thread (tests/progs/python/native.py). */
EXPORT long pyburn_spin(long n)
{
	BURN(n);
	return (long)(burn_sink & 0xff);
}

static void *pyburn_thread_main(void *arg)
{
	BURN((long)arg);
	return NULL;
}

/* Burns n iterations in a thread of its own, one Python never knew (degrade.py). */
EXPORT long pyburn_thread_spin(long n)
{
	pthread_t t;

	if (pthread_create(&t, NULL, pyburn_thread_main, (void *)n))
		return -1;
	pthread_join(t, NULL);
	return (long)(burn_sink & 0xff);
}
