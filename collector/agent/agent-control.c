/* SPDX-License-Identifier: MIT */
/* The agent's control: pause, resume, stop and detach, the control thread, the API's entry. */
#include <dlfcn.h>
#include <errno.h>
#include <sched.h>
#include <linux/futex.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/prctl.h>

#include "collector/agent/agent-private.h"
#include "common/data-counter.h"
#include "common/agent-api.h"

/*
 * Who controls a collection: the launcher (-start-paused, -resume-after, detach after
 * -target-pid), pcollect -command from another shell, and the program through the API. All
 * change one control word in the collection's shared page (common/data-counter.h) and
 * wake the futex beside it; every process of the collection has a control thread waiting on
 * it, which obeys: timers disarmed while paused (no signal at all, not samples dropped), timers
 * gone when stopped, streams finished and the process let go when detached. The program's
 * own calls are obeyed in its process before they return, then by the others' control
 * threads. Nothing is sent to the program: no signal interrupts a system call of it.
 */

/* ns: how often an attached agent looks for threads and modules it was not told of */
#define CONTROL_POLL_NS 100000000ll
/* ns: how often Python's thread names are read (agent-python.c), ~14 guarded reads a thread */
#define PY_NAMES_POLL_NS 250000000ll
#define CONTROL_STACK    (256u << 10) /* bytes of the control thread's stack */
/* ns: the longest agent_control_start() waits for the thread it made to run */
#define CONTROL_START_NS 2000000000ull

static _Atomic int quit, running;
static __thread int creating AGENT_TLS;

uint32_t agent_control_word(void)
{
	if (agent.data)
		return __atomic_load_n(&agent.data->control, __ATOMIC_ACQUIRE);
	return __atomic_load_n(&agent.local_control, __ATOMIC_ACQUIRE);
}

bool agent_control_creating(void)
{
	return creating;
}

/* Every live thread of this process paused or resumed (control_lock held). */
static void set_paused(bool paused)
{
	size_t i, n;

	if (atomic_load(&agent.paused) == paused)
		return;
	atomic_store(&agent.paused, paused);
	n = atomic_load(&agent.nthreads);
	for (i = 0; i < n; i++) {
		struct agent_thread *t = agent.threads[i];

		if (!t || atomic_load(&t->state) != AGENT_THREAD_LIVE)
			continue;
		if (paused)
			agent_thread_pause(t);
		else
			agent_thread_unpause(t);
	}
}

static void disarm_all(void)
{
	size_t i, n = atomic_load(&agent.nthreads);

	for (i = 0; i < n; i++) {
		struct agent_thread *t = agent.threads[i];

		if (t && atomic_load(&t->state) == AGENT_THREAD_LIVE)
			agent_thread_disarm(t);
	}
}

static int64_t duration_left_ns(void)
{
	uint64_t now;

	if (!agent.cfg.duration_ns || !agent.cfg.start_monotonic_ns)
		return -1;
	now = agent_now_mono();
	if (now - agent.cfg.start_monotonic_ns >= agent.cfg.duration_ns)
		return 0;
	return (int64_t)(agent.cfg.start_monotonic_ns + agent.cfg.duration_ns - now);
}

void agent_control_apply(void)
{
	uint32_t seq = agent.data ? __atomic_load_n(&agent.data->control_seq, __ATOMIC_ACQUIRE) : 0;
	uint32_t w;

	pthread_mutex_lock(&agent.control_lock);
	if (!agent.active || agent_in_vfork_child())
		goto out;
	/* The word after the sequence: it is at least as new as the change seq counts. */
	w = agent_control_word();
	if (w & AGENT_CONTROL_DETACH) {
		agent_detach();
		goto out;
	}
	/*
	 * Stopped (or -duration passed): no timer fires any more. Unlike a pause, the CPU time
	 * after it stays in THREAD_END: the profile covers the start. Past -data-limit the
	 * timers run on: sample() counts what it no longer records (agent_account_bytes()).
	 */
	if ((w & AGENT_CONTROL_STOPPED) || duration_left_ns() == 0) {
		atomic_store(&agent.stopped, 1);
		disarm_all();
		goto out;
	}
	set_paused(w & AGENT_CONTROL_PAUSED);
out:
	/* pcollect -command returns once every process says it obeyed. */
	if (agent.data && agent.active)
		data_counter_applied(agent.data, agent.member, agent.pid, seq);
	pthread_mutex_unlock(&agent.control_lock);
}

void agent_control_command(uint32_t set, uint32_t clear)
{
	if (agent.data) {
		data_counter_command(agent.data, set, clear);
	} else {
		uint32_t w = __atomic_load_n(&agent.local_control, __ATOMIC_RELAXED);

		__atomic_store_n(&agent.local_control, (w | set) & ~clear, __ATOMIC_RELEASE);
	}
	agent_control_apply();
}

static int64_t wait_ns(void)
{
	int64_t left = duration_left_ns(), poll = agent_exit_poll_ns();

	/* Waits in progress are put on record within a poll of AGENT_WAIT_OPEN_NS, Python's
	   thread names read every poll; the end of main's last thread is seen within
	   agent_exit_poll_ns(). */
	if ((agent.attached || agent_waits_on || agent.cfg.mpi_shims[0]) && poll > CONTROL_POLL_NS)
		poll = CONTROL_POLL_NS;
	/* While threads are sampled with task-clock events, one given up is armed again this
	   soon (agent_threads_rearm()). */
	if (agent.cfg.task_clock && !atomic_load(&agent.stopped) && !atomic_load(&agent.paused) &&
	    poll > AGENT_CPU_LOOK_NS)
		poll = AGENT_CPU_LOOK_NS;
	if (pyagent_active() && poll > PY_NAMES_POLL_NS)
		poll = PY_NAMES_POLL_NS;
	return left < 0 || left > poll ? poll : left;
}

static void *control_main(void *arg)
{
	AGENT_BUSY; /* its futex waits and locks are not the program's waits */
	uint64_t exit_seen = agent_now_mono();

	(void)arg;
	prctl(PR_SET_NAME, "pcollect-ctl", 0, 0, 0);
	atomic_store(&running, 1);
	syscall(SYS_futex, &running, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	while (!atomic_load(&quit) && agent.active) {
		uint32_t seq = __atomic_load_n(&agent.data->control_seq, __ATOMIC_ACQUIRE);

		agent_control_apply();
		if (!agent.active || atomic_load(&quit))
			break;
		if (agent.attached)
			agent_attach_poll();
		if (!agent.active)
			break; /* let go by itself: its collector is gone (agent_attach_poll()) */
		agent_wait_scan();
		agent_mpi_scan();
		/* under the lock a pause takes: a thread's paused time is consistent */
		pthread_mutex_lock(&agent.control_lock);
		agent_threads_rearm();
		pthread_mutex_unlock(&agent.control_lock);
		agent_python_names();
		data_counter_wait(agent.data, seq, wait_ns());
		/* The program has no thread left: the process must end (agent-exit.c). Looked at
		   every agent_exit_poll_ns(), not at every look at the CPU time: /proc/self/stat
		   costs tens of microseconds. */
		if (agent_now_mono() - exit_seen >= (uint64_t)agent_exit_poll_ns() / 10 * 9) {
			exit_seen = agent_now_mono();
			if (agent_exit_last_thread())
				return NULL;
		}
	}
	pthread_mutex_lock(&agent.control_lock);
	agent.control_thread = false;
	pthread_mutex_unlock(&agent.control_lock);
	return NULL;
}

/*
 * Wait, asleep, for the control thread to run, at most CONTROL_START_NS. The creating thread
 * is sampled by then: a wait that spun (sched_yield) burnt its CPU time in the agent for as
 * long as the new thread waited for a CPU, 1-4 ms now and then on a busy machine (most of
 * the agent's own samples of a Python start with 100 imports).
 */
static void control_wait_running(void)
{
	uint64_t t0 = agent_now_mono(), spent;

	while (!atomic_load(&running) && (spent = agent_now_mono() - t0) < CONTROL_START_NS) {
		uint64_t left = CONTROL_START_NS - spent;
		struct timespec ts = { .tv_sec = (time_t)(left / 1000000000u),
				       .tv_nsec = (long)(left % 1000000000u) };

		syscall(SYS_futex, &running, FUTEX_WAIT_PRIVATE, 0, &ts, NULL, 0);
	}
}

int agent_control_start(void)
{
	int (*create)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
	pthread_attr_t a;
	pthread_t th;
	sigset_t all, old;
	int ret;

	if (!agent.data || agent.control_thread || !agent.active)
		return 0;
	/*
	 * Through the program's own pthread_create: a sanitizer runtime preloaded ahead of us
	 * must know every thread; ours, when it is the one found, passes this one on
	 * unsampled (creating). All signals blocked: the program's go to its own threads.
	 */
	create = (int (*)(pthread_t *, const pthread_attr_t *, void *(*)(void *),
			  void *))dlsym(RTLD_DEFAULT, "pthread_create");
	if (!create)
		create = agent_real.pthread_create;
	pthread_attr_init(&a);
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&a, CONTROL_STACK);
	sigfillset(&all);
	agent_real.pthread_sigmask(SIG_SETMASK, &all, &old);
	atomic_store(&quit, 0);
	atomic_store(&running, 0);
	creating = 1;
	ret = create(&th, &a, control_main, NULL);
	creating = 0;
	agent_real.pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&a);
	if (ret) {
		agent_log("cannot start the control thread: %s: this process obeys only the "
			  "program's own pause and resume",
			  strerror(ret));
		return -ret;
	}
	/*
	 * Back once the thread runs our code: its start in the C library and in a sanitizer's
	 * runtime allocates (pthread_getattr_np), and a program that forks first thing would
	 * give its child that allocator's lock held by a thread the child has not (GCC 12's
	 * AddressSanitizer takes no lock around fork): the child's own control thread then
	 * waited for it forever, and the child obeyed no command.
	 */
	control_wait_running();
	agent.control_thread = true;
	return 0;
}

void agent_control_quit(void)
{
	int i;

	atomic_store(&quit, 1);
	/* Let a change the control thread is making end first; never wait for long at exit. */
	for (i = 0; i < 1000; i++) {
		if (!pthread_mutex_trylock(&agent.control_lock)) {
			pthread_mutex_unlock(&agent.control_lock);
			return;
		}
		sched_yield();
	}
}

/* The API's one entry point (common/agent-api.h): libpcollect and the Python module. */
AGENT_EXPORT int pcollect_agent_call(int op, const char *arg)
{
	AGENT_BUSY;

	if (!agent.active || agent_in_vfork_child())
		return -1;
	switch (op) {
	case PCOLLECT_OP_PROBE:
		return 0;
	case PCOLLECT_OP_PAUSE:
		agent_control_command(AGENT_CONTROL_PAUSED, 0);
		return 0;
	case PCOLLECT_OP_RESUME:
		agent_control_command(0, AGENT_CONTROL_PAUSED);
		return 0;
	case PCOLLECT_OP_REGION_BEGIN:
		return agent_region_begin(arg);
	case PCOLLECT_OP_REGION_END:
		return agent_region_end();
	case PCOLLECT_OP_TASK_WAIT:
		return agent_task_wait(arg);
	case PCOLLECT_OP_ORIGIN_TAKE:
		return agent_origin_take();
	case PCOLLECT_OP_ORIGIN_TASK:
		return agent_origin_task(arg);
	default:
		return -1;
	}
}

void agent_note_disk_full(int err)
{
	uint32_t none = 0;

	if (agent_disk_full(err) && agent.data)
		__atomic_compare_exchange_n(&agent.data->disk_full, &none, (uint32_t)-err, false,
					    __ATOMIC_RELAXED, __ATOMIC_RELAXED);
}
