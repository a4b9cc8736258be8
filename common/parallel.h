/* SPDX-License-Identifier: MIT */
/* A minimal parallel loop on pthreads: the finalizer's one way to spread work over threads. */
#ifndef PCOLLECT_COMMON_PARALLEL_H
#define PCOLLECT_COMMON_PARALLEL_H

#include <stddef.h>

/*
 * Run fn(ctx, worker, i) for every i in [0, n) on up to jobs threads (never more than n), each
 * i once, in no fixed order. worker, in [0, jobs), names the thread that runs the call: a
 * thread is one worker for the whole loop, so state kept per worker (a file handle, a scratch
 * array) needs no lock. Fewer workers run when threads cannot be started (at least worker 0,
 * on the calling thread if need be). After an error no new i is started. Returns 0 or the
 * first error fn returned (or -ENOMEM).
 */
int parallel_for_worker(size_t n, int jobs, int (*fn)(void *ctx, int worker, size_t i), void *ctx);

/* parallel_for_worker() for a loop that keeps no state per worker: fn(ctx, i). */
int parallel_for(size_t n, int jobs, int (*fn)(void *ctx, size_t i), void *ctx);

#endif
