/* SPDX-License-Identifier: MIT */
/* An agent loaded into a running process: new threads and modules found, then the detach. */
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "collector/agent/agent-private.h"
#include "common/data-counter.h"

/*
 * pcollect -target-pid loads the agent with dlopen into a process that runs already and
 * calls pcollect_attach() (agent.c). What LD_PRELOAD gives a launched program is then
 * missing: the agent's functions are found after the program's. agent-got.c points the
 * modules' imports of them at ours instead, which covers threads created with pthread_create,
 * dlopen, exec, spawn and the rest from the program's own code; what goes around the GOT
 * (raw clone(), a library loaded by the C library itself) is found here, by the control
 * thread, every CONTROL_POLL_NS: threads it does not know are adopted as the threads that
 * existed at attach time are, and the modules are scanned again when the loader's count of
 * loads and unloads moved.
 */

struct loader_counts {
	unsigned long long adds, subs;
};

static int counts_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	struct loader_counts *c = data;

	if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof(info->dlpi_subs)) {
		c->adds = info->dlpi_adds;
		c->subs = info->dlpi_subs;
	}
	return 1;
}

/* True when modules were loaded or unloaded since the last call. */
static bool loader_changed(void)
{
	static struct loader_counts seen;
	struct loader_counts now = { 0, 0 };

	agent_real.dl_iterate_phdr(counts_cb, &now);
	if (now.adds == seen.adds && now.subs == seen.subs)
		return false;
	seen = now;
	return true;
}

/* True when tid is a thread of this process now. */
static bool task_alive(pid_t tid, const pid_t *tids, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (tids[i] == tid)
			return true;
	return false;
}

struct task_list {
	pid_t tids[1024];
	size_t n;
};

static void task_add(pid_t tid, pid_t proc_tid, void *ctx)
{
	struct task_list *l = ctx;

	(void)proc_tid;
	if (l->n < sizeof(l->tids) / sizeof(l->tids[0]))
		l->tids[l->n++] = tid;
}

/*
 * Threads the agent adopted (external) end without telling it: their stream ends when their
 * tid is gone from /proc/self/task, with the CPU time last seen (a thread's clock goes with
 * it). control_lock held.
 */
static void end_gone_threads(void)
{
	struct task_list l;
	size_t i, nslots;

	l.n = 0;
	if (agent_tasks_each(task_add, &l))
		return;
	if (l.n == sizeof(l.tids) / sizeof(l.tids[0]))
		return; /* more threads than we listed: end none by mistake */
	nslots = atomic_load(&agent.nthreads);
	for (i = 0; i < nslots; i++) {
		struct agent_thread *t = agent.threads[i];

		if (!t || !t->external || atomic_load(&t->state) != AGENT_THREAD_LIVE)
			continue;
		if (task_alive(t->tid, l.tids, l.n)) {
			agent_thread_cpu_used(t); /* the figure to end with, should it go */
			continue;
		}
		if (agent_thread_end(t, false))
			agent_thread_release(t);
	}
}

/*
 * The pcollect that attached us died (SIGKILL, a crash): no one will tell us to detach, so the
 * process is let go at once, as pcollect would have (its hold on the control page is gone:
 * data_counter_collectors_gone()). Asked twice a second at most.
 */
static bool collector_gone(void)
{
	static int64_t next;
	struct timespec ts;
	int64_t now;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
	if (now < next)
		return false;
	next = now + 500000000;
	return data_counter_collectors_gone(agent.cfg.result_dir);
}

void agent_attach_poll(void)
{
	/*
	 * Modules first and without the control lock: the scan takes the loader's lock, and a
	 * thread holding that lock (a library's constructor) may wait for a thread it made,
	 * which waits for the control lock to begin.
	 */
	if (loader_changed()) {
		agent_modules_scan();
		agent_got_patch();
	}
	pthread_mutex_lock(&agent.control_lock);
	if (agent.active && agent.attached && collector_gone()) {
		agent_log("its collector (pcollect) is gone: letting process %d go",
			  (int)agent.pid);
		agent_detach();
	} else if (agent.active && !agent_sampling_stopped()) {
		agent_threads_adopt_existing();
		end_gone_threads();
	}
	pthread_mutex_unlock(&agent.control_lock);
}

/*
 * Let the process go: every stream finished (THREAD_END, the file cut to its length), every
 * timer and event gone, our signal's disposition given back with nothing of ours pending,
 * the GOT entries put back. The agent stays loaded (a thread may still be in one of its
 * functions, such as the start of a thread it made) and idle; the program runs on as it
 * would have. The slots of this attachment are never used again. control_lock held.
 */
void agent_detach(void)
{
	size_t i, n = atomic_load(&agent.nthreads);
	bool *held = calloc(n + 1, sizeof(*held));

	atomic_store(&agent.stopped, 1);
	agent.active = false; /* interposers and new threads pass through from now on */
	for (i = 0; i < n; i++) {
		struct agent_thread *t = agent.threads[i];

		if (t && atomic_load(&t->state) == AGENT_THREAD_LIVE) {
			bool h = agent_thread_end(t, false);

			if (held)
				held[i] = h;
		}
	}
	agent_proc_close();
	/* No handler of ours starts after this; one that started finds every writer held. */
	agent_signal_restore();
	agent_got_restore();
	for (i = 0; held && i < n; i++)
		if (held[i])
			agent_thread_release(agent.threads[i]);
	free(held);
	pthread_mutex_lock(&agent.lock);
	agent_modules_reset();
	pthread_mutex_unlock(&agent.lock);
	if (agent.data)
		data_counter_leave(agent.data, agent.pid);
	agent_log("detached from process %d", (int)agent.pid);
	agent.attached = false;
}
