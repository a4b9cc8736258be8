/* SPDX-License-Identifier: MIT */
/* Allocations across threads, for memory-consumption's known answers (tests/e2e/mem-known.py). */
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "mem-sites.h"

/*
 *   produce       a thread allocates 500 blocks of 1000 bytes; another thread frees them
 *                 (consume, which allocates nothing): 500000 bytes allocated and freed,
 *                 charged to produce's stack in the producing thread
 *   churn_a, _b   two threads at once, 200000 malloc(32)/free pairs each, then one block of
 *                 777 bytes kept: 200001 allocations, 6400777 bytes, 777 leaked each
 *   churn_shared  both threads, 100000 pairs of 48 bytes each, at one call site
 */

static void *blocks[500];

SITE produce(void)
{
	int i;

	MALLOC_EACH(i, blocks, 500, 1000);
}

SITE consume(void)
{
	int i;

	for (i = 0; i < 500; i++)
		free(blocks[i]);
}

static void *producer(void *arg)
{
	(void)arg;
	produce();
	return NULL;
}

static void *consumer(void *arg)
{
	(void)arg;
	consume();
	return NULL;
}

static void *kept[2];

SITE churn_shared(void)
{
	CHURN(100000, 48);
}

SITE churn_a(void)
{
	CHURN(200000, 32);
	kept[0] = malloc(777);
}

SITE churn_b(void)
{
	CHURN(200000, 32);
	kept[1] = malloc(777);
}

static void *worker_a(void *arg)
{
	(void)arg;
	churn_a();
	churn_shared();
	return NULL;
}

static void *worker_b(void *arg)
{
	(void)arg;
	churn_b();
	churn_shared();
	return NULL;
}

int main(void)
{
	pthread_t a, b;

	if (pthread_create(&a, NULL, producer, NULL) || pthread_join(a, NULL))
		return 2;
	if (pthread_create(&b, NULL, consumer, NULL) || pthread_join(b, NULL))
		return 2;
	if (pthread_create(&a, NULL, worker_a, NULL) || pthread_create(&b, NULL, worker_b, NULL))
		return 2;
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	KEEP(kept[0]);
	KEEP(kept[1]);
	return mem_say_done();
}
