/* SPDX-License-Identifier: MIT */
/*
 * A library whose constructor starts a thread. The loader runs the constructors of a
 * program's libraries before those of LD_PRELOAD objects, so this thread already exists when
 * the agent starts: the agent finds it in /proc/self/task and samples it from outside.
 */
#include <pthread.h>

#include "burn.h"

static pthread_t early;
static pthread_mutex_t go_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t go_cond = PTHREAD_COND_INITIALIZER;
static int go;

static __attribute__((noinline, noclone)) void early_burn(void)
{
	BURN_CPU_MS(300);
}

/* The thread waits for main to say go, so all its CPU time is spent after the agent began
   sampling it: the known answer does not depend on how long the agent took to start. */
static void *early_main(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&go_lock);
	while (!go)
		pthread_cond_wait(&go_cond, &go_lock);
	pthread_mutex_unlock(&go_lock);
	early_burn();
	return NULL;
}

__attribute__((constructor)) static void early_start(void)
{
	pthread_create(&early, NULL, early_main, NULL);
}

void early_thread_go(void);
void early_thread_join(void);

void early_thread_go(void)
{
	pthread_mutex_lock(&go_lock);
	go = 1;
	pthread_cond_signal(&go_cond);
	pthread_mutex_unlock(&go_lock);
}

void early_thread_join(void)
{
	pthread_join(early, NULL);
}
