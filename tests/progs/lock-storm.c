/* SPDX-License-Identifier: MIT */
/* Threads locking one mutex millions of times, a little work inside and outside: a contended
   lock, for the threading analysis's overhead (bench/threading-overhead.py) and its tests. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned long shared;
static long iterations = 2000000;

static void *worker(void *arg)
{
	unsigned long x = (unsigned long)arg;
	long i;
	int k;

	for (i = 0; i < iterations; i++) {
		pthread_mutex_lock(&lock);
		shared = shared * 6364136223846793005ul + x;
		pthread_mutex_unlock(&lock);
		/* A little work between: the threads meet at the lock often, not always. */
		for (k = 0; k < 20; k++) {
			x = x * 6364136223846793005ul + 1;
			__asm__ volatile("" : "+r"(x)::"memory");
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int threads = argc > 1 ? atoi(argv[1]) : 4, i;
	pthread_t *t;

	if (argc > 2)
		iterations = atol(argv[2]);
	t = calloc((size_t)threads, sizeof(*t));
	if (!t || threads < 1)
		return 2;
	for (i = 0; i < threads; i++)
		pthread_create(&t[i], NULL, worker, (void *)(unsigned long)(i + 1));
	for (i = 0; i < threads; i++)
		pthread_join(t[i], NULL);
	printf("locks=%ld shared=%lu\n", (long)threads * iterations, shared);
	free(t);
	return 0;
}
