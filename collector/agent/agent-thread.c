/* SPDX-License-Identifier: MIT */
/* The agent's threads: slots, one stream and one CPU-time timer per thread, thread hooks. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "collector/agent/agent-private.h"
#include "common/proc-status.h"
#include "common/result-dir.h"

static pid_t adopting_proc_tid; /* the /proc name of the thread being adopted (control_lock) */
/*
 * Memory for a thread's own tables, mapped rather than allocated: the C library gives a
 * thread's first malloc an arena of its own, 64 MiB of address space, which the program's
 * thread alone (that never allocates) would not have had (docs/pcollect.md, LIMITS).
 */
void *agent_map_zeroed(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

void agent_unmap(void *p, size_t len)
{
	if (p)
		munmap(p, len);
}

/*
 * The distinct stacks a thread's table holds before it starts over: fewer under an
 * address-space limit (RLIMIT_AS), where the program may need every megabyte it set.
 */
static void stack_table_size(size_t *slots, size_t *frames)
{
	static _Atomic int limited = -1;
	struct rlimit rl;

	if (atomic_load(&limited) < 0)
		atomic_store(&limited, !getrlimit(RLIMIT_AS, &rl) && rl.rlim_cur != RLIM_INFINITY);
	*slots = atomic_load(&limited) ? AGENT_STACK_SLOTS_LIMITED : AGENT_STACK_SLOTS;
	*frames = atomic_load(&limited) ? AGENT_STACK_FRAMES_LIMITED : AGENT_STACK_FRAMES;
}

pid_t agent_gettid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

/* The CPU-time clock of any thread of this process, as the kernel encodes it. */
static clockid_t thread_cpu_clock(pid_t tid)
{
	return (clockid_t)((~(unsigned int)tid) << 3) | 6; /* CPUCLOCK_PERTHREAD | SCHED */
}

static uint64_t clock_ns(clockid_t c)
{
	struct timespec ts;

	if (clock_gettime(c, &ts))
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * CPU time of t since its stream began, the time it was paused left out. A thread that ended
 * has no clock any more: an external one's last figure seen by the attached agent's scan.
 */
uint64_t agent_thread_cpu_used(struct agent_thread *t)
{
	uint64_t now = clock_ns(t->cpu_clock), paused = t->cpu_paused_ns, used;

	if (!now)
		return t->cpu_seen_ns;
	if (t->paused && now > t->paused_at_ns)
		paused += now - t->paused_at_ns;
	used = now > t->cpu_start_ns ? now - t->cpu_start_ns : 0;
	used = used > paused ? used - paused : 0;
	t->cpu_seen_ns = used;
	return used;
}

/* Take a thread's writer: spin briefly when its handler (or another user) holds it. */
static bool busy_acquire(struct agent_thread *t, int tries)
{
	int i;

	for (i = 0; i < tries; i++) {
		int expected = 0;

		if (atomic_compare_exchange_strong(&t->busy, &expected, 1))
			return true;
		sched_yield();
	}
	return false;
}

struct agent_thread *agent_thread_find_tid(pid_t tid)
{
	size_t i, n = atomic_load(&agent.nthreads);

	for (i = 0; i < n; i++) {
		struct agent_thread *t = agent.threads[i];

		if (t && t->tid == tid && atomic_load(&t->state) == AGENT_THREAD_LIVE)
			return t;
	}
	return NULL;
}

/* A free slot, marked ENDED (reserved) until its stream is open. */
static struct agent_thread *slot_take(void)
{
	AGENT_BUSY;
	struct agent_thread *t = NULL;
	size_t i, n;

	pthread_mutex_lock(&agent.lock);
	n = atomic_load(&agent.nthreads);
	for (i = 0; i < n; i++) {
		int expected = AGENT_THREAD_FREE;

		if (agent.threads[i] &&
		    atomic_compare_exchange_strong(&agent.threads[i]->state, &expected,
						   AGENT_THREAD_ENDED)) {
			t = agent.threads[i];
			break;
		}
	}
	if (!t && n < AGENT_MAX_THREADS) {
		t = agent_map_zeroed(sizeof(*t));
		if (t) {
			t->perf_fd = -1;
			t->perf_fd_sig = -1;
			atomic_store(&t->state, AGENT_THREAD_ENDED);
			agent.threads[n] = t;
			atomic_store(&agent.nthreads, n + 1);
		}
	}
	pthread_mutex_unlock(&agent.lock);
	return t;
}

static void thread_name(pid_t tid, bool self, char *name, size_t size)
{
	char path[64];
	ssize_t n;
	int fd;

	name[0] = '\0';
	if (self && !prctl(PR_GET_NAME, name)) {
		name[size - 1] = '\0';
		return;
	}
	snprintf(path, sizeof(path), "/proc/self/task/%d/comm", (int)tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, name, size - 1);
	close(fd);
	if (n < 0)
		n = 0;
	name[n] = '\0';
	if (n && name[n - 1] == '\n')
		name[n - 1] = '\0';
}

int agent_thread_open_stream(struct agent_thread *t)
{
	AGENT_BUSY;
	char path[PATH_MAX], gen[16], name[32], why[160];
	int ret;

	snprintf(gen, sizeof(gen), "x%u", agent.generation);
	if (result_path(path, sizeof(path), agent.cfg.result_dir, RESULT_PATH_RAW, agent.pid,
			t->tid, NULL, agent.generation ? gen : NULL) < 0)
		return -ENAMETOOLONG;
	ret = raw_window_create(&t->win, path, agent.cfg.file_mode, AGENT_WINDOW_SIZE);
	if (!ret) {
		raw_header_init(&t->hdr, agent.pid, t->tid, agent.cfg.rank, agent.cfg.host,
				agent.cfg.interval_ns, RAW_SAMPLE_THREAD_CPU);
		t->hdr.generation = agent.generation;
		ret = raw_writer_init_mapped(&t->w, raw_window_next, &t->win,
					     AGENT_CHUNK_MAX +
						     (agent.cfg.ring_ns ? AGENT_RING_ROOM : 0),
					     AGENT_RESERVE, &t->hdr);
		if (ret)
			raw_window_close(&t->win, 0);
	}
	if (ret) {
		snprintf(why, sizeof(why), "cannot %s its stream: %s",
			 t->win.error_op ? t->win.error_op : "create", strerror(-ret));
		agent_log("thread %d not sampled: %s '%s'", (int)t->tid, why, path);
		agent_note_disk_full(ret);
		agent_proc_note(t->tid, RAW_NOTE_NO_STREAM, why);
		return ret;
	}
	t->write_stopped = false;
	stack_table_reset(&t->stacks);
	/* -ring-buffer: chunks carry the time they opened, which bounds the one before. */
	t->w.clock = agent.cfg.ring_ns ? &t->hdr : NULL;
	t->ring_seq = t->w.seq;
	memset(t->lost_count, 0, sizeof(t->lost_count));
	memset(t->lost_weight, 0, sizeof(t->lost_weight));
	t->accounted = 0;
	t->samples = 0;
	t->cpu_looked_ns = 0;
	t->last_flush_ns = 0;
	t->cpu_clock = thread_cpu_clock(t->tid);
	t->cpu_start_ns = clock_ns(t->cpu_clock);
	t->cpu_unarmed = true;
	t->paused = false;
	t->cpu_paused_ns = 0;
	t->cpu_seen_ns = 0;
	/* memory-consumption takes no CPU samples: none is lost for want of a signal. */
	t->unsampled = agent.active && agent.cfg.signo <= 0 && !agent.cfg.memory;
	t->unsampled_from_ns = 0;
	thread_name(t->proc_tid ? t->proc_tid : t->tid, !t->external, name, sizeof(name));
	raw_writer_thread_start(&t->w, (uint32_t)t->tid, raw_header_now(&t->hdr), name);
	raw_writer_flush(&t->w);
	agent_account(t);
	agent_wait_thread_begin(t);
	agent_thread_give(t);
	atomic_store(&t->state, AGENT_THREAD_LIVE);
	return 0;
}

void agent_thread_release(struct agent_thread *t)
{
	agent_unmap(t->ips, t->ips_len);
	t->ips = NULL;
	stack_table_release(&t->stacks);
	agent_python_thread_free(t);
	agent_mpi_thread_free(t);
	agent_wait_thread_free(t);
	agent_region_free(t);
}

void agent_thread_drop_stream(struct agent_thread *t)
{
	raw_window_drop(&t->win);
	memset(&t->w, 0, sizeof(t->w));
}

/*
 * A thread of ours whose slot the attached agent's scan made first (external): it is ours
 * from now on, with its stream and its timer as they are.
 */
static struct agent_thread *take_over(struct agent_thread *t)
{
	t->external = false;
	t->pthread = pthread_self();
	agent_self = t;
	pthread_setspecific(agent.key, t);
	return t;
}

static struct agent_thread *thread_begin_locked(pid_t tid, bool external)
{
	AGENT_BUSY;
	struct agent_thread *t;
	size_t slots, frames;

	if (!agent.active)
		return NULL;
	if (!external && (t = agent_thread_find_tid(tid)))
		return take_over(t);
	t = slot_take();
	if (!t) {
		agent_log("no room for thread %d: not sampled", (int)tid);
		return NULL;
	}
	t->tid = tid;
	t->proc_tid = external ? adopting_proc_tid : 0;
	t->external = external;
	t->pthread = external ? 0 : pthread_self();
	t->has_timer = false;
	t->perf_fd = -1;
	t->perf_fd_sig = -1;
	/* A slot used before: nothing of its last thread's event is owed or carried. */
	atomic_store(&t->perf_owed, 0);
	atomic_store(&t->perf_unanswered, 0);
	atomic_store(&t->perf_dropped, false);
	t->gap_weight = 0;
	atomic_store(&t->busy, 1);
	t->ips_len = (agent.cfg.stack_depth + 64) * sizeof(uint64_t);
	t->ips = agent_map_zeroed(t->ips_len);
	stack_table_size(&slots, &frames);
	if (!t->ips || stack_table_init(&t->stacks, slots, frames) || agent_thread_open_stream(t)) {
		agent_thread_release(t);
		agent_thread_give(t);
		atomic_store(&t->state, AGENT_THREAD_FREE);
		return NULL;
	}
	if (!external) {
		agent_self = t;
		pthread_setspecific(agent.key, t);
	}
	agent_python_thread_begin(t);
	mem_thread_begin(t);
	return t;
}

/* Under the control lock: a thread never begins in the middle of a pause or a detach. */
struct agent_thread *agent_thread_begin(pid_t tid, bool external)
{
	struct agent_thread *t;

	pthread_mutex_lock(&agent.control_lock);
	t = thread_begin_locked(tid, external);
	pthread_mutex_unlock(&agent.control_lock);
	return t;
}

/* The timer (or event) of t is made, but while the collection is paused not started. */
static void thread_arm_locked(struct agent_thread *t)
{
	bool hold = atomic_load(&agent.paused) || agent_sampling_stopped();
	struct itimerspec its;
	struct sigevent sev;

	/*
	 * The stream's CPU time (THREAD_END's) counts from here, where sampling can begin: the
	 * agent's own start between (its module scan: 15 ms under ASan on a busy machine) is
	 * in no sample and in no total.
	 */
	if (t->cpu_unarmed) {
		t->cpu_unarmed = false;
		t->cpu_start_ns = clock_ns(t->cpu_clock);
	}

	if (hold && !t->paused) {
		t->paused = true;
		t->paused_at_ns = clock_ns(t->cpu_clock);
	}
	if (agent.cfg.memory || agent.cfg.signo <= 0)
		return; /* memory-consumption takes no CPU samples; no signal, none either */
	if (agent.cfg.task_clock && !t->has_timer &&
	    (t->perf_fd >= 0 || agent_thread_perf_open(t))) {
		if (hold || !ioctl(t->perf_fd, PERF_EVENT_IOC_REFRESH, AGENT_PERF_LIMIT))
			return;
		agent_log("cannot start the task-clock event of thread %d: %s", (int)t->tid,
			  strerror(errno));
		agent_thread_perf_close(t);
	}
	if (!t->has_timer) {
		memset(&sev, 0, sizeof(sev));
		sev.sigev_notify = SIGEV_THREAD_ID;
		sev.sigev_signo = agent.cfg.signo;
		sev.sigev_value.sival_ptr = AGENT_COOKIE;
		sev._sigev_un._tid = t->tid;
		if (timer_create(t->cpu_clock, &sev, &t->timer)) {
			agent_log("cannot create the timer of thread %d: %s", (int)t->tid,
				  strerror(errno));
			return;
		}
		t->has_timer = true;
	}
	if (hold)
		return;
	its.it_interval.tv_sec = (time_t)(agent.cfg.interval_ns / 1000000000u);
	its.it_interval.tv_nsec = (long)(agent.cfg.interval_ns % 1000000000u);
	its.it_value = its.it_interval;
	if (timer_settime(t->timer, 0, &its, NULL))
		agent_log("cannot arm the timer of thread %d: %s", (int)t->tid, strerror(errno));
}

void agent_thread_arm(struct agent_thread *t)
{
	pthread_mutex_lock(&agent.control_lock);
	if (atomic_load(&t->state) == AGENT_THREAD_LIVE)
		thread_arm_locked(t);
	pthread_mutex_unlock(&agent.control_lock);
}

void agent_threads_move_signal(void)
{
	size_t i, n = atomic_load(&agent.nthreads);

	for (i = 0; i < n; i++) {
		struct agent_thread *t = agent.threads[i];

		if (!t || atomic_load(&t->state) != AGENT_THREAD_LIVE)
			continue;
		if (agent.cfg.signo <= 0 && !t->unsampled && !agent.cfg.memory) {
			t->unsampled = true;
			t->unsampled_from_ns = agent_thread_cpu_used(t);
		}
		if (t->perf_fd >= 0 && agent.cfg.signo > 0) {
			/* The event goes on counting: only the signal it sends changes. */
			if (!fcntl(t->perf_fd, F_SETSIG, agent.cfg.signo))
				continue;
			agent_log("cannot move the task-clock event of thread %d: %s", (int)t->tid,
				  strerror(errno));
		}
		agent_thread_perf_close(t);
		/* A timer's signal is fixed at its creation: a new one, armed unless paused. */
		if (t->has_timer) {
			timer_delete(t->timer);
			t->has_timer = false;
		}
		if (!t->paused)
			thread_arm_locked(t);
	}
}

void agent_thread_pause(struct agent_thread *t)
{
	if (t->paused)
		return;
	t->paused = true;
	t->paused_at_ns = clock_ns(t->cpu_clock);
	agent_thread_disarm(t);
}

void agent_thread_unpause(struct agent_thread *t)
{
	uint64_t now;

	if (!t->paused)
		return;
	now = clock_ns(t->cpu_clock);
	if (now > t->paused_at_ns)
		t->cpu_paused_ns += now - t->paused_at_ns;
	t->paused = false;
	thread_arm_locked(t);
}

void agent_thread_disarm(struct agent_thread *t)
{
	struct itimerspec its;

	if (t->perf_fd >= 0)
		ioctl(t->perf_fd, PERF_EVENT_IOC_DISABLE, 0);
	if (!t->has_timer)
		return;
	memset(&its, 0, sizeof(its));
	timer_settime(t->timer, 0, &its, NULL);
}

void agent_thread_write_lost(struct agent_thread *t)
{
	int64_t now = raw_header_now(&t->hdr);
	unsigned r;

	/* Exchanges, since this thread's handler may add to them meanwhile. */
	for (r = 0; r < sizeof(t->lost_count) / sizeof(t->lost_count[0]); r++) {
		uint64_t count, weight;

		/* a weight alone: a task-clock tail (agent_thread_perf_tail()) */
		if (!__atomic_load_n(&t->lost_count[r], __ATOMIC_RELAXED) &&
		    !__atomic_load_n(&t->lost_weight[r], __ATOMIC_RELAXED))
			continue;
		count = __atomic_exchange_n(&t->lost_count[r], 0, __ATOMIC_RELAXED);
		weight = __atomic_exchange_n(&t->lost_weight[r], 0, __ATOMIC_RELAXED);
		if (raw_writer_lost(&t->w, now, r, count, weight)) {
			__atomic_add_fetch(&t->lost_count[r], count, __ATOMIC_RELAXED);
			__atomic_add_fetch(&t->lost_weight[r], weight, __ATOMIC_RELAXED);
		}
	}
}

void agent_thread_write_failed(struct agent_thread *t, uint64_t weight)
{
	unsigned reason = t->w.error == -EFBIG          ? RAW_LOST_FILE_SIZE_LIMIT
			  : agent_disk_full(t->w.error) ? RAW_LOST_DISK_FULL
			  : t->w.error == -ENOMEM       ? RAW_LOST_ADDRESS_SPACE
							: RAW_LOST_BUFFER;

	__atomic_add_fetch(&t->lost_count[reason], 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&t->lost_weight[reason], weight, __ATOMIC_RELAXED);
	if (t->write_stopped)
		return;
	/* Sampling of t stops here; the reserve says why at once, in case nothing else runs. */
	t->write_stopped = true;
	agent_note_disk_full(t->w.error);
	raw_writer_finishing(&t->w);
	agent_thread_write_lost(t);
	raw_writer_flush(&t->w);
}

/* The stream's last records: short waits, lost counts, Python notes, THREAD_END; the chunk
   closed. */
static void stream_finish(struct agent_thread *t)
{
	/* The short waits may be many records: before the reserve is all that is left. */
	agent_wait_thread_finish(t);
	raw_writer_finishing(&t->w);
	if (t->unsampled) {
		/* No signal was free: the samples its CPU time since would have had. */
		uint64_t used = agent_thread_cpu_used(t), w = 0;

		if (used > t->unsampled_from_ns)
			w = (used - t->unsampled_from_ns) / agent.cfg.interval_ns;
		t->lost_count[RAW_LOST_NO_SIGNAL] += w ? w : 1;
		t->lost_weight[RAW_LOST_NO_SIGNAL] += w;
		t->unsampled_from_ns = used;
	}
	agent_thread_write_lost(t);
	agent_mpi_thread_finish(t);
	agent_python_thread_finish(t);
	raw_writer_thread_end(&t->w, (uint32_t)t->tid, raw_header_now(&t->hdr),
			      agent_thread_cpu_used(t));
	raw_writer_flush(&t->w);
	agent_account(t);
}

/* Why t's stream stopped early, for the log and the process stream (thread context). */
static void stream_report_stop(struct agent_thread *t)
{
	char why[160];

	if (!t->write_stopped)
		return;
	snprintf(why, sizeof(why), "its stream stopped at %llu bytes: %s (%s)",
		 (unsigned long long)raw_writer_file_size(&t->w),
		 t->w.error == -EFBIG ? "the file size limit (RLIMIT_FSIZE) was reached"
		 : t->w.error == -ENOMEM
			 ? "no address space left for its next window (RLIMIT_AS, or all mapped)"
			 : strerror(-t->w.error),
		 t->win.error_op ? t->win.error_op : "map");
	agent_log("thread %d: %s", (int)t->tid, why);
	agent_proc_note(t->tid, RAW_NOTE_STREAM_STOPPED, why);
}

/*
 * Finish t's stream: timer gone, lost counts, THREAD_END with the CPU time used since the
 * stream began, last chunk closed, window unmapped and the file cut to its length. own: t is
 * the calling thread (its slot is then freed for reuse); otherwise the writer is taken from
 * under a possibly running handler and the slot stays ENDED with its writer held, so that
 * thread's handler never touches it again.
 */
bool agent_thread_end(struct agent_thread *t, bool own)
{
	AGENT_BUSY;
	int expected = AGENT_THREAD_LIVE;
	uint64_t count;
	bool counted;
	sigset_t old;

	if (own)
		agent_block_sampling(&old);
	if (!atomic_compare_exchange_strong(&t->state, &expected, AGENT_THREAD_ENDED))
		return false;
	if (t->has_timer) {
		timer_delete(t->timer);
		t->has_timer = false;
	}
	/* The event's last count, for what no sample took (agent_thread_perf_tail()). */
	counted = t->perf_fd >= 0 && read(t->perf_fd, &count, sizeof(count)) == sizeof(count);
	agent_thread_perf_close(t);
	if (!busy_acquire(t, own ? 1000 : 10000)) {
		agent_log("thread %d: writer busy at its end: last records lost", (int)t->tid);
		return false;
	}
	if (counted)
		agent_thread_perf_tail(t, count);
	stream_finish(t);
	stream_report_stop(t);
	raw_window_close(&t->win, raw_writer_file_size(&t->w));
	if (!own)
		return true;
	mem_thread_end(t, true);
	agent_thread_release(t);
	agent_self = NULL;
	agent_thread_give(t);
	atomic_store(&t->state, AGENT_THREAD_FREE);
	return true;
}

/*
 * The threads whose task-clock event was given up for want of a number (agent-fd.c): armed
 * again, with a new event if a number is free now, else with the timer (and its note), so
 * that no thread stops being sampled. From the control thread, under the control lock; one
 * whose writer is in use is armed at the next look.
 */
void agent_threads_rearm(void)
{
	int64_t interval = (int64_t)agent.cfg.interval_ns;
	size_t i, n = atomic_load(&agent.nthreads);

	for (i = 0; i < n && i < AGENT_MAX_THREADS; i++) {
		struct agent_thread *t = agent.threads[i];
		int expected = 0;
		int64_t carry;

		if (!t || atomic_load(&t->state) != AGENT_THREAD_LIVE ||
		    !atomic_load(&t->perf_dropped) ||
		    !atomic_compare_exchange_strong(&t->busy, &expected, 1))
			continue;
		atomic_store(&t->perf_dropped, false);
		/* A paused thread gets its event when it is unpaused. */
		if (atomic_load(&t->state) == AGENT_THREAD_LIVE && !t->paused && t->perf_fd < 0) {
			/* Its time since its last sample, which no signal could sample: the next
			   sample's, as a sample held back in the loader is (sample()). */
			carry = t->perf_carry +
				(int64_t)(agent_thread_cpu_used(t) - t->perf_dropped_ns);
			if (carry > 0)
				t->gap_weight += (uint64_t)((carry + interval / 2) / interval);
			t->perf_carry = 0;
			thread_arm_locked(t);
		}
		agent_thread_give(t);
	}
}

void agent_thread_key_destructor(void *p)
{
	struct agent_thread *t = p;

	if (t && t == agent_self)
		agent_thread_end(t, true);
}

/* True when /proc is mounted for another pid namespace than ours: it names us otherwise. */
static bool proc_foreign(void)
{
	char link[32];
	ssize_t n = readlink("/proc/self", link, sizeof(link) - 1);

	if (n <= 0)
		return false;
	link[n] = '\0';
	return atoi(link) != (int)getpid();
}

/* A thread's id in its own pid namespace, from its name in /proc/self/task. */
static pid_t task_own_tid(const char *name)
{
	char path[300];

	snprintf(path, sizeof(path), "/proc/self/task/%s/status", name);
	return proc_status_inner_id(path, "NSpid:");
}

int agent_tasks_each(void (*fn)(pid_t tid, pid_t proc_tid, void *ctx), void *ctx)
{
	AGENT_BUSY;
	bool foreign = proc_foreign();
	struct dirent *e;
	DIR *d = opendir("/proc/self/task");

	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		pid_t name = (pid_t)atoi(e->d_name);
		pid_t tid = foreign && name > 0 ? task_own_tid(e->d_name) : name;

		if (tid > 0)
			fn(tid, name, ctx);
	}
	closedir(d);
	return 0;
}

static void adopt_one(pid_t tid, pid_t proc_tid, void *self)
{
	struct agent_thread *t;

	if (tid == *(pid_t *)self || agent_thread_find_tid(tid))
		return;
	adopting_proc_tid = proc_tid;
	t = agent_thread_begin(tid, true);
	adopting_proc_tid = 0;
	if (t)
		agent_thread_arm(t);
}

/*
 * Threads that exist before the agent starts (another preloaded library's constructor may
 * create some, and an attached agent finds them all): no code of ours will run in them
 * before their first signal, so their slot is prepared here and their timer created with
 * their tid (as this process knows it: agent_tasks_each()); the handler finds the slot by tid.
 */
void agent_threads_adopt_existing(void)
{
	pid_t self = agent_gettid();

	pthread_mutex_lock(&agent.control_lock);
	agent_tasks_each(adopt_one, &self);
	pthread_mutex_unlock(&agent.control_lock);
}

/* ---- interposed thread functions ---------------------------------------------------------- */

struct thread_start {
	void *(*fn)(void *);
	void *arg;
	pid_t parent_tid;      /* the creating thread, 0 when it is not sampled */
	uint64_t parent_stack; /* its stack at pthread_create, an id of its stream */
};

void agent_origin_write(struct agent_thread *t, pid_t tid, uint64_t stack, uint32_t kind)
{
	sigset_t old;

	if (!agent_wait_writer_take(t, &old))
		return;
	raw_writer_origin(&t->w, raw_header_now(&t->hdr), (uint32_t)tid, stack, kind);
	agent_wait_writer_give(t, &old);
}

static void *thread_trampoline(void *p)
{
	struct thread_start s = *(struct thread_start *)p;
	struct agent_thread *t;

	/* Mapped, not allocated: a free() here would give the thread a malloc arena (64 MiB of
	   address space) the program's thread alone would not have. */
	agent_unmap(p, sizeof(s));
	/* Set up before the first instruction of the thread's own code, timer armed last. */
	if (agent.active) {
		pthread_mutex_lock(&agent.control_lock);
		t = agent_thread_begin(agent_gettid(), false);
		if (t) {
			/* The first record after its start: who created it, where. */
			if (s.parent_tid)
				agent_origin_write(t, s.parent_tid, s.parent_stack,
						   RAW_ORIGIN_CREATE);
			agent_thread_arm(t);
		}
		pthread_mutex_unlock(&agent.control_lock);
	}
	return s.fn(s.arg);
}

AGENT_EXPORT int pthread_create(pthread_t *thread, const pthread_attr_t *attr,
				void *(*start)(void *), void *arg)
{
	struct agent_thread *self;
	struct thread_start *s;
	int ret;

	if (!agent_real.pthread_create)
		agent_resolve();
	if (!agent.active || agent_sampling_stopped() || agent_control_creating())
		return agent_real.pthread_create(thread, attr, start, arg);
	s = agent_map_zeroed(sizeof(*s));
	if (!s)
		return agent_real.pthread_create(thread, attr, start, arg);
	s->fn = start;
	s->arg = arg;
	/* The creator's stack, in its own stream: the new thread names it (-stitch in preport). */
	self = agent_self;
	if (self && atomic_load(&self->state) == AGENT_THREAD_LIVE && !agent_in_vfork_child()) {
		s->parent_stack = agent_origin_stack_here(self);
		s->parent_tid = s->parent_stack ? self->tid : 0;
	}
	ret = agent_real.pthread_create(thread, attr, thread_trampoline, s);
	if (ret)
		agent_unmap(s, sizeof(*s));
	return ret;
}

AGENT_EXPORT int pthread_setname_np(pthread_t thread, const char *name)
{
	AGENT_BUSY;
	struct agent_thread *target = NULL;
	struct raw_writer *w;
	sigset_t old;
	size_t i, n;
	int ret;

	if (!agent_real.pthread_setname_np)
		agent_resolve();
	ret = agent_real.pthread_setname_np(thread, name);
	if (ret || !agent.active || agent_in_vfork_child())
		return ret;
	if (pthread_equal(thread, pthread_self())) {
		target = agent_self;
	} else {
		n = atomic_load(&agent.nthreads);
		for (i = 0; i < n && !target; i++) {
			struct agent_thread *t = agent.threads[i];

			if (t && !t->external && atomic_load(&t->state) == AGENT_THREAD_LIVE &&
			    pthread_equal(t->pthread, thread))
				target = t;
		}
	}
	if (!target)
		return ret;
	pthread_mutex_lock(&agent.lock);
	w = agent_proc_begin(&old);
	if (w)
		raw_writer_thread_name(w, (uint32_t)target->tid, raw_header_now(&agent.proc.hdr),
				       name);
	agent_proc_end(&old);
	pthread_mutex_unlock(&agent.lock);
	return ret;
}

/*
 * Before exec: the stream is finished as at the thread's end and the file cut to its length,
 * but the window stays mapped (the exec may fail). Written data is in the file already.
 */
void agent_thread_suspend(struct agent_thread *t)
{
	AGENT_BUSY;
	t->suspended = false;
	if (atomic_load(&t->state) != AGENT_THREAD_LIVE)
		return;
	agent_thread_disarm(t);
	if (!busy_acquire(t, t == agent_self ? 1000 : 10000))
		return;
	t->suspended = true;
	stream_finish(t);
	raw_window_cut(&t->win, raw_writer_file_size(&t->w));
}

void agent_thread_resume(struct agent_thread *t)
{
	AGENT_BUSY;
	char name[32];

	if (!t->suspended)
		return;
	t->suspended = false;
	/* The exec failed: the thread goes on, in a new span of the same stream. */
	if (raw_window_regrow(&t->win)) {
		agent_log("thread %d: cannot reopen its stream after a failed exec: %s",
			  (int)t->tid, strerror(t->win.error));
		t->write_stopped = true;
		agent_thread_give(t);
		return;
	}
	t->w.finishing = t->write_stopped;
	t->cpu_start_ns = clock_ns(t->cpu_clock);
	t->cpu_unarmed = true;
	thread_name(t->proc_tid ? t->proc_tid : t->tid, t == agent_self, name, sizeof(name));
	raw_writer_thread_start(&t->w, (uint32_t)t->tid, raw_header_now(&t->hdr), name);
	agent_thread_give(t);
	agent_thread_arm(t);
}
