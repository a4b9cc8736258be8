/* SPDX-License-Identifier: MIT */
/* The preloaded agent: configuration, start before main, fork handling, end at exit. */
#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "collector/agent/agent-private.h"
#include "common/data-counter.h"
#include "common/proc-maps.h"
#include "common/result-dir.h"

struct agent_state agent = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.control_lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP,
};
__thread struct agent_thread *agent_self AGENT_TLS;
__thread int agent_in_dl AGENT_TLS;
__thread int agent_in_unwind AGENT_TLS;

/* Where the configuration comes from: the environment, or pcollect_attach()'s string. */
typedef const char *(*config_lookup_fn)(const char *name, void *ctx);

static const char *env_lookup(const char *name, void *ctx)
{
	(void)ctx;
	return getenv(name);
}

static int env_u64(config_lookup_fn get, void *ctx, const char *name, uint64_t *out)
{
	const char *s = get(name, ctx);
	char *end;
	unsigned long long v;

	if (!s || !*s)
		return -ENOENT;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end)
		return -EINVAL;
	*out = v;
	return 0;
}

uint64_t agent_now_mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * Messages go to DIR/log/agent.<pid>.log, never to the program's stdout or stderr. The file is
 * opened for each message and closed again: logging is rare, and a descriptor kept open would
 * be one the program's close loops and dup2() could hit (a program that closes 0-2 and opens
 * files of its own must not find our log among them).
 */
void agent_log(const char *fmt, ...)
{
	AGENT_BUSY;
	char buf[512], path[PATH_MAX];
	struct rlimit rl;
	struct stat st;
	va_list ap;
	int n, m, fd;

	n = snprintf(buf, sizeof(buf), "pcollect-agent[%d]: ", (int)agent.pid);
	va_start(ap, fmt);
	m = vsnprintf(buf + n, sizeof(buf) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	if (m < 0)
		return;
	n += m;
	if ((size_t)n > sizeof(buf) - 2)
		n = (int)sizeof(buf) - 2;
	buf[n++] = '\n';
	if (result_path(path, sizeof(path), agent.cfg.result_dir, RESULT_PATH_LOG, agent.pid, 0,
			NULL, NULL) < 0)
		return;
	fd = raw_window_open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW,
			     agent.cfg.file_mode ? agent.cfg.file_mode : 0600);
	if (fd < 0)
		return;
	/* Past RLIMIT_FSIZE the write would send SIGXFSZ to the program: drop the message. */
	if (!fstat(fd, &st) && !getrlimit(RLIMIT_FSIZE, &rl) && rl.rlim_cur != RLIM_INFINITY &&
	    (uint64_t)st.st_size + (uint64_t)n > (uint64_t)rl.rlim_cur) {
		close(fd);
		return;
	}
	if (st.st_size == 0)
		fchmod(fd, agent.cfg.file_mode ? agent.cfg.file_mode : 0600);
	if (write(fd, buf, (size_t)n) < 0) {
		close(fd);
		return;
	}
	close(fd);
}

/*
 * Add what thread t wrote since last time to the shared counter; past the limit, stop
 * sampling in every process of the collection. Async-signal-safe.
 */
void agent_account(struct agent_thread *t)
{
	agent_account_bytes(&t->accounted, t->w.bytes_written);
}

void agent_account_bytes(uint64_t *accounted, uint64_t written)
{
	uint64_t delta = written - *accounted;
	uint64_t total;

	if (!delta || !agent.data)
		return;
	*accounted = written;
	total = __atomic_add_fetch(&agent.data->bytes, delta, __ATOMIC_RELAXED);
	/*
	 * Past the limit the timers keep firing, unlike after -command stop: each sample not
	 * taken is counted (LOST, data-limit) so that pfinalize blames no clock for it.
	 */
	if (agent.cfg.data_limit_bytes && total >= agent.cfg.data_limit_bytes)
		__atomic_store_n(&agent.data->hit, 1, __ATOMIC_RELAXED);
}

bool agent_data_limit_hit(void)
{
	return agent.cfg.data_limit_bytes && agent.data &&
	       __atomic_load_n(&agent.data->hit, __ATOMIC_RELAXED);
}

bool agent_sampling_stopped(void)
{
	return atomic_load_explicit(&agent.stopped, memory_order_relaxed) || agent_data_limit_hit();
}

bool agent_paused(void)
{
	return atomic_load_explicit(&agent.paused, memory_order_relaxed) ||
	       agent_sampling_stopped();
}

static int config_read(struct agent_config *c, config_lookup_fn get, void *ctx)
{
	const char *dir = get(AGENT_ENV_RESULT_DIR, ctx), *agent_path, *s;
	uint64_t v;

	/* Each value is copied before the next is looked up (string_lookup() reuses one). */
	memset(c, 0, sizeof(*c));
	if (!dir || dir[0] != '/' || strlen(dir) >= sizeof(c->result_dir))
		return -EINVAL;
	snprintf(c->result_dir, sizeof(c->result_dir), "%s", dir);
	agent_path = get(AGENT_ENV_AGENT, ctx);
	if (agent_path && strlen(agent_path) < sizeof(c->agent_path))
		snprintf(c->agent_path, sizeof(c->agent_path), "%s", agent_path);
	/* -trace-mpi: the shims stay in LD_PRELOAD after the agent across exec and spawn. */
	s = get(AGENT_ENV_MPI_SHIMS, ctx);
	if (s && strlen(s) < sizeof(c->mpi_shims))
		snprintf(c->mpi_shims, sizeof(c->mpi_shims), "%s", s);
	snprintf(c->preload, sizeof(c->preload), "%s%s%s", c->agent_path,
		 c->mpi_shims[0] ? ":" : "", c->mpi_shims);
	c->mpi_threshold_ns = 100000;
	if (!env_u64(get, ctx, AGENT_ENV_MPI_THRESHOLD, &v))
		c->mpi_threshold_ns = v;
	c->interval_ns = 10000000;
	if (!env_u64(get, ctx, AGENT_ENV_INTERVAL_NS, &v) && v >= 100000 && v <= 10000000000ull)
		c->interval_ns = v;
	c->stack_depth = 256;
	if (!env_u64(get, ctx, AGENT_ENV_STACK_DEPTH, &v) && v >= 1 && v <= RAW_MAX_DEPTH)
		c->stack_depth = (uint32_t)v;
	if (!env_u64(get, ctx, AGENT_ENV_DURATION_NS, &v))
		c->duration_ns = v;
	if (!env_u64(get, ctx, AGENT_ENV_START_NS, &v))
		c->start_monotonic_ns = v;
	if (!env_u64(get, ctx, AGENT_ENV_DATA_LIMIT, &v))
		c->data_limit_bytes = v;
	if (!env_u64(get, ctx, AGENT_ENV_RING_NS, &v))
		c->ring_ns = v;
	s = get(AGENT_ENV_FOLLOW_CHILD, ctx);
	c->follow_child = !(s && !strcmp(s, "0"));
	c->rank = -1;
	if ((s = get(AGENT_ENV_RANK, ctx)))
		c->rank = atoi(s);
	s = get(AGENT_ENV_SAMPLING_CLOCK, ctx);
	c->task_clock = s && !strcmp(s, "task-clock");
	if (!env_u64(get, ctx, AGENT_ENV_WAIT_THRESHOLD, &v)) {
		c->waits = true;
		c->wait_threshold_ns = v;
	}
	s = get(AGENT_ENV_MEMORY, ctx);
#ifndef AGENT_MEMORY
	s = NULL; /* the hotspots agent has no allocation wrappers */
#endif
	if (s && !strcmp(s, "exact")) {
		c->memory = true;
	} else if (s && !strncmp(s, "bytes:", 6)) {
		c->memory = true;
		c->mem_sample_bytes = strtoull(s + 6, NULL, 10);
	}
	/* Without PCOLLECT_SIGNAL, agent_start() chooses a free one. */
	if (!env_u64(get, ctx, AGENT_ENV_SIGNAL, &v) && (int)v >= SIGRTMIN && (int)v <= SIGRTMAX) {
		c->signo = (int)v;
		c->signo_forced = true;
	}
	if (!env_u64(get, ctx, AGENT_ENV_LAUNCHER_PID, &v))
		c->launcher_pid = (pid_t)v;
	result_short_hostname(c->host, sizeof(c->host));
	c->file_mode = result_file_mode(c->result_dir);
	return 0;
}

/* Which image this is: a new process, or the same pid after exec (PCOLLECT_EXEC=pid:gen). */
static void origin_read(void)
{
	const char *ex = getenv(AGENT_ENV_EXEC);
	unsigned long pid, gen;

	agent.origin = RAW_PROCESS_START;
	agent.generation = 0;
	agent.parent_pid = getppid();
	if (ex && sscanf(ex, "%lu:%lu", &pid, &gen) == 2 && (pid_t)pid == agent.pid) {
		agent.origin = RAW_PROCESS_EXEC;
		agent.generation = (uint32_t)gen;
		agent.parent_pid = agent.pid;
	}
}

/* Run the unwinder once outside any handler so its lazy set-up never happens in one. */
static void unwinder_prepare(void)
{
	unw_context_t uc;
	unw_cursor_t c;
	int i = 0;

	/* libunwind sets up its address checks here: no pipe for it (agent-fd.c). */
	agent_in_unwind++;
	unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
	if (unw_getcontext(&uc) || unw_init_local(&c, &uc)) {
		agent_in_unwind--;
		return;
	}
	while (i++ < 64 && unw_step(&c) > 0)
		;
	agent_in_unwind--;
}

/* The control lock first, as everywhere: the child must find neither held mid-change. */
static void fork_prepare(void)
{
	AGENT_BUSY;
	pthread_mutex_lock(&agent.control_lock);
	pthread_mutex_lock(&agent.lock);
}

static void fork_parent(void)
{
	pthread_mutex_unlock(&agent.lock);
	pthread_mutex_unlock(&agent.control_lock);
}

static void control_lock_init(void)
{
	pthread_mutexattr_t a;

	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
	pthread_mutex_init(&agent.control_lock, &a);
	pthread_mutexattr_destroy(&a);
}

/*
 * The child of fork(): only the calling thread survives. Every window is MAP_SHARED and
 * inherited: it maps the parent's file, so the child lets go of all of them before anything
 * is written (no timer or event of ours fires in the child before agent_thread_arm()). Other
 * threads' slots are dropped. The calling thread gets a new stream in the child's name, the
 * child a process stream (origin FORK) with the module list, and a new timer (timers are not
 * inherited).
 */
static void fork_child(void)
{
	AGENT_BUSY;
	struct agent_thread *self = agent_self;
	pid_t parent = agent.pid;
	size_t i, n;

	pthread_mutex_init(&agent.lock, NULL);
	control_lock_init();
	agent_python_fork_child();
	agent.pid = getpid();
	agent.control_thread = false; /* the parent's is not in the child */
	if (!agent.active)
		return;
	mem_agent_enter();
	n = atomic_load(&agent.nthreads);
	for (i = 0; i < n; i++) {
		struct agent_thread *t = agent.threads[i];

		if (!t)
			continue;
		/* The parent's task-clock events: they count the parent's threads. */
		agent_thread_perf_close(t);
		if (atomic_load(&t->state) == AGENT_THREAD_FREE)
			continue;
		agent_thread_drop_stream(t);
		if (t == self)
			continue;
		mem_thread_drop(t);
		agent_thread_release(t);
		agent_thread_give(t);
		atomic_store(&t->state, AGENT_THREAD_FREE);
	}
	agent_proc_drop();
	if (!agent.cfg.follow_child) {
		agent.active = false;
		agent_wait_stop();
		atomic_store(&agent.stopped, 1);
		mem_fork_child(); /* nothing recorded: the parent's file let go */
		mem_agent_leave();
		return;
	}
	agent.origin = RAW_PROCESS_FORK;
	agent.parent_pid = parent;
	agent.generation = 0;
	agent_modules_reset();
	agent_proc_open();
	mem_fork_child();
	if (self) {
		/* The old stream and its stack ids belong to the parent. */
		self->tid = agent_gettid();
		self->has_timer = false;
		if (agent_thread_open_stream(self)) {
			atomic_store(&self->state, AGENT_THREAD_ENDED);
			agent_self = NULL;
			agent_modules_scan();
			mem_agent_leave();
			return;
		}
		/* Code ids are per stream: the child describes its code objects again. */
		agent_python_thread_restart(self);
		mem_thread_begin(self);
		agent_region_restart(self);
	} else {
		self = agent_thread_begin(agent_gettid(), false);
	}
	agent_modules_scan();
	if (agent.data)
		agent.member = data_counter_join(agent.data, agent.pid);
	if (self)
		agent_thread_arm(self);
	agent_control_start();
	mem_agent_leave();
}

/*
 * Everything after the configuration, for the preloaded agent's start and for
 * pcollect_attach(): the signal handler, the process stream, a stream and a timer for every
 * thread, the module list, the control thread. 0, or -errno with the agent left idle.
 */
static int agent_start(void)
{
	AGENT_BUSY;
	static bool once;
	struct agent_thread *t;
	sigset_t mask;
	int ret = 0;

	if (readlink("/proc/self/exe", agent.exe, sizeof(agent.exe) - 1) < 0)
		agent.exe[0] = '\0';
	/* Run through an explicit loader (ld-linux-x86-64.so.2 ./prog), /proc/self/exe is the
	   loader: the program is the file whose headers the loader mapped (AT_PHDR). */
	proc_maps_path_at(getauxval(AT_PHDR), agent.exe, sizeof(agent.exe));
	agent.data = data_counter_map(agent.cfg.result_dir, 0);
	if (!agent.data && agent.attached)
		return -EIO; /* pcollect could neither control nor detach it */
	/* A collection stopped, or let go of, before this process began: stay idle. */
	if (agent_control_word() & (AGENT_CONTROL_STOPPED | AGENT_CONTROL_DETACH))
		return -ECANCELED;
	if (!once) {
		if (pthread_key_create(&agent.key, agent_thread_key_destructor)) {
			agent_log("cannot create a thread key: sampling disabled");
			return -EAGAIN;
		}
		pthread_atfork(fork_prepare, fork_parent, fork_child);
		once = true;
	}
	unwinder_prepare();
	if (!agent.cfg.signo_forced && !(agent.cfg.signo = agent_signal_choose(NULL)))
		agent_log("no real-time signal is free (each has a handler, is blocked or is held "
			  "by a signalfd): nothing is sampled");
	if (agent_signal_install()) {
		ret = -errno;
		agent_log("cannot install the signal handler: %s", strerror(errno));
		return ret;
	}
	pthread_mutex_lock(&agent.control_lock);
	atomic_store(&agent.stopped, 0);
	atomic_store(&agent.paused, (agent_control_word() & AGENT_CONTROL_PAUSED) != 0);
	agent.active = true;
	if ((ret = agent_proc_open())) {
		agent.active = false;
		pthread_mutex_unlock(&agent.control_lock);
		return ret;
	}
	if (agent.cfg.memory)
		mem_start();
	if (agent.data)
		agent.member = data_counter_join(agent.data, agent.pid);
	/* Without a stream (noted in the process stream) other threads may still be sampled. */
	t = agent_thread_begin(agent_gettid(), false);
	/* The scan takes the loader's lock: never under the control lock (agent-attach.c). */
	pthread_mutex_unlock(&agent.control_lock);
	agent_modules_scan();
	if (agent.attached)
		agent_got_patch();
	pthread_mutex_lock(&agent.control_lock);
	agent_threads_adopt_existing();
	/*
	 * A mask inherited across exec may block a signal forced on us: the agent unblocks it.
	 * Attached, this runs in a call pcollect injected, under a mask of its own that it puts
	 * back when the call returns (collector/pcollect/inject.c): nothing to unblock.
	 */
	if (agent.cfg.signo > 0 && !agent.attached) {
		sigemptyset(&mask);
		sigaddset(&mask, agent.cfg.signo);
		agent_real.pthread_sigmask(SIG_UNBLOCK, &mask, NULL);
	}
	/* Waits are recorded from here on, when asked for: the streams exist. */
	agent_wait_init();
	/* The stream's CPU time counts from here (agent_thread_arm()): the scan is not in it. */
	if (t)
		agent_thread_arm(t);
	agent_control_start();
	pthread_mutex_unlock(&agent.control_lock);
	return 0;
}

/*
 * Preloaded by pcollect (LD_PRELOAD names us). Loaded with dlopen instead (pcollect
 * -target-pid, or a program's own), the collection is begun by pcollect_attach() alone, never
 * from PCOLLECT_* variables the process merely inherited.
 */
static bool preloaded(void)
{
	const char *p = getenv("LD_PRELOAD");
	Dl_info info;
	const char *name;

	if (!p || !dladdr((void *)agent_start, &info) || !info.dli_fname)
		return false;
	name = strrchr(info.dli_fname, '/');
	return strstr(p, name ? name + 1 : info.dli_fname) != NULL;
}

__attribute__((constructor)) static void agent_init(void)
{
	AGENT_BUSY;

	agent_resolve();
	agent.pid = getpid();
	if (!preloaded() || config_read(&agent.cfg, env_lookup, NULL))
		return; /* not started by pcollect: stay out of the way */
	origin_read();
	/*
	 * Without -follow-child only the launcher's own child (and the images it execs) is
	 * profiled; its descendants load the agent but stay idle.
	 */
	if (!agent.cfg.follow_child && agent.origin == RAW_PROCESS_START &&
	    agent.cfg.launcher_pid && agent.parent_pid != agent.cfg.launcher_pid)
		return;
	/* memory-consumption: the agent's own allocations from here on are not the program's. */
	mem_agent_enter();
	agent_start();
	mem_agent_leave();
}

/* pcollect_attach()'s configuration: "NAME=VALUE" lines with the environment's names. */
static const char *string_lookup(const char *name, void *ctx)
{
	static char value[PATH_MAX];
	const char *p = ctx;
	size_t n = strlen(name);

	while (p && *p) {
		const char *end = strchr(p, '\n');
		size_t len = end ? (size_t)(end - p) : strlen(p);

		if (len > n && !strncmp(p, name, n) && p[n] == '=' && len - n - 1 < sizeof(value)) {
			memcpy(value, p + n + 1, len - n - 1);
			value[len - n - 1] = '\0';
			return value;
		}
		p = end ? end + 1 : NULL;
	}
	return NULL;
}

/*
 * Called by pcollect -target-pid in a thread of the running program it stopped (docs/
 * pcollect.md): begin a collection with the configuration given ("NAME=VALUE" lines, the
 * environment's names), as the preloaded agent does before main. The interposition the
 * loader would have given is put in the modules' GOT entries instead (agent-got.c), and the
 * control thread looks for new threads and modules. Returns 0, -EBUSY when a collection runs
 * already, or -errno (the agent log says more).
 */
AGENT_EXPORT int pcollect_attach(const char *config)
{
	AGENT_BUSY;
	struct agent_config c;
	int ret;

	if (agent.active)
		return -EBUSY;
	/* config_read() takes one value at a time: string_lookup's buffer is reused. */
	if (!config || config_read(&c, string_lookup, (void *)config))
		return -EINVAL;
	agent.cfg = c;
	agent.pid = getpid();
	agent.origin = RAW_PROCESS_START;
	agent.generation = 0;
	agent.parent_pid = getppid();
	agent.attached = true;
	agent_resolve();
	ret = agent_start();
	if (ret)
		agent.attached = false;
	else
		agent_log("attached to process %d: sampling every %llu ns", (int)agent.pid,
			  (unsigned long long)agent.cfg.interval_ns);
	return ret;
}

/* At exit: stop every timer and finish every stream, this thread's and the others'. */
void agent_shutdown(void)
{
	AGENT_BUSY;
	size_t i, n;
	bool stopped_early;

	if (!agent.active || agent_in_vfork_child())
		return;
	agent_control_quit();
	agent_wait_stop();
	mem_image_end();
	stopped_early = agent_sampling_stopped();
	atomic_store(&agent.stopped, 1);
	n = atomic_load(&agent.nthreads);
	for (i = 0; i < n; i++) {
		struct agent_thread *t = agent.threads[i];

		if (t && atomic_load(&t->state) == AGENT_THREAD_LIVE)
			agent_thread_end(t, t == agent_self);
	}
	if (stopped_early)
		agent_proc_note_cpu();
	agent_proc_close();
	if (agent.data)
		data_counter_leave(agent.data, agent.pid);
	agent.active = false;
}

__attribute__((destructor)) static void agent_fini(void)
{
	agent_shutdown();
}

/*
 * _exit() skips destructors, and fork children and shells end with it: finish the streams
 * first. Not in a vfork child, whose memory is the parent's.
 */
AGENT_EXPORT void _exit(int status)
{
	if (!agent_real.exit_)
		agent_resolve();
	agent_shutdown();
	if (agent_real.exit_)
		agent_real.exit_(status);
	syscall(SYS_exit_group, status);
	for (;;)
		;
}

AGENT_EXPORT void _Exit(int status)
{
	_exit(status);
}
