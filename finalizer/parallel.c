/* SPDX-License-Identifier: MIT */
/* A minimal parallel loop on pthreads: workers take the next index from a shared counter. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "finalizer/finalize-private.h"

struct loop {
	size_t n;
	atomic_size_t next;
	atomic_int err;
	int (*fn)(void *ctx, size_t i);
	void *ctx;
};

static void *worker(void *arg)
{
	struct loop *l = arg;
	size_t i;

	while ((i = atomic_fetch_add(&l->next, 1)) < l->n && !atomic_load(&l->err)) {
		int e = l->fn(l->ctx, i);

		if (e) {
			int zero = 0;

			atomic_compare_exchange_strong(&l->err, &zero, e);
		}
	}
	return NULL;
}

int parallel_for(size_t n, int jobs, int (*fn)(void *ctx, size_t i), void *ctx)
{
	struct loop l = { .n = n, .fn = fn, .ctx = ctx };
	pthread_t *tids;
	int started = 0, k;

	atomic_init(&l.next, 0);
	atomic_init(&l.err, 0);
	if (jobs > (int)n)
		jobs = (int)n;
	if (jobs <= 1) {
		worker(&l);
		return atomic_load(&l.err);
	}
	tids = calloc((size_t)jobs, sizeof(*tids));
	if (!tids)
		return -ENOMEM;
	for (k = 0; k < jobs; k++) {
		if (pthread_create(&tids[k], NULL, worker, &l))
			break;
		started++;
	}
	if (!started)
		worker(&l); /* no threads: do it here */
	for (k = 0; k < started; k++)
		pthread_join(tids[k], NULL);
	free(tids);
	return atomic_load(&l.err);
}
