/* SPDX-License-Identifier: MIT */
/* A minimal parallel loop on pthreads: workers take the next index from a shared counter. */
#include "common/parallel.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

struct loop {
	size_t n;
	atomic_size_t next;
	atomic_int err;
	int (*fn)(void *ctx, int worker, size_t i);
	void *ctx;
};

struct worker {
	struct loop *l;
	int id;
};

static void *worker_run(void *arg)
{
	struct worker *w = arg;
	struct loop *l = w->l;
	size_t i;

	while ((i = atomic_fetch_add(&l->next, 1)) < l->n && !atomic_load(&l->err)) {
		int e = l->fn(l->ctx, w->id, i);

		if (e) {
			int zero = 0;

			atomic_compare_exchange_strong(&l->err, &zero, e);
		}
	}
	return NULL;
}

int parallel_for_worker(size_t n, int jobs, int (*fn)(void *ctx, int worker, size_t i), void *ctx)
{
	struct loop l = { .n = n, .fn = fn, .ctx = ctx };
	struct worker *w;
	pthread_t *tids;
	int started = 0, k;

	atomic_init(&l.next, 0);
	atomic_init(&l.err, 0);
	if (jobs < 1)
		jobs = 1;
	if ((size_t)jobs > n)
		jobs = (int)n;
	if (jobs <= 1) {
		struct worker one = { &l, 0 };

		worker_run(&one);
		return atomic_load(&l.err);
	}
	tids = calloc((size_t)jobs, sizeof(*tids));
	w = calloc((size_t)jobs, sizeof(*w));
	if (!tids || !w) {
		free(tids);
		free(w);
		return -ENOMEM;
	}
	for (k = 0; k < jobs; k++) {
		w[k] = (struct worker){ &l, k };
		if (pthread_create(&tids[k], NULL, worker_run, &w[k]))
			break;
		started++;
	}
	if (!started)
		worker_run(&w[0]); /* no threads: do it here */
	for (k = 0; k < started; k++)
		pthread_join(tids[k], NULL);
	free(tids);
	free(w);
	return atomic_load(&l.err);
}

struct plain {
	int (*fn)(void *ctx, size_t i);
	void *ctx;
};

static int plain_run(void *ctx, int worker, size_t i)
{
	const struct plain *p = ctx;

	(void)worker;
	return p->fn(p->ctx, i);
}

int parallel_for(size_t n, int jobs, int (*fn)(void *ctx, size_t i), void *ctx)
{
	struct plain p = { fn, ctx };

	return parallel_for_worker(n, jobs, plain_run, &p);
}
