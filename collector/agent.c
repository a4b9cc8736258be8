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

#include "collector/agent-private.h"
#include "collector/data-counter.h"
#include "collector/proc-maps.h"
#include "common/result-dir.h"

struct agent_state agent = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
};
__thread struct agent_thread *agent_self AGENT_TLS;
__thread int agent_in_dl AGENT_TLS;
__thread int agent_in_unwind AGENT_TLS;

static int env_u64(const char *name, uint64_t *out)
{
	const char *s = getenv(name);
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

static int config_read(struct agent_config *c)
{
	const char *dir = getenv(AGENT_ENV_RESULT_DIR);
	const char *agent_path = getenv(AGENT_ENV_AGENT), *s;
	uint64_t v;

	memset(c, 0, sizeof(*c));
	if (!dir || dir[0] != '/' || strlen(dir) >= sizeof(c->result_dir))
		return -EINVAL;
	strcpy(c->result_dir, dir);
	if (agent_path && strlen(agent_path) < sizeof(c->agent_path))
		strcpy(c->agent_path, agent_path);
	/* -trace-mpi: the shims stay in LD_PRELOAD after the agent across exec and spawn. */
	if (getenv(AGENT_ENV_MPI_SHIMS) && strlen(getenv(AGENT_ENV_MPI_SHIMS)) < sizeof(c->mpi_shims))
		strcpy(c->mpi_shims, getenv(AGENT_ENV_MPI_SHIMS));
	snprintf(c->preload, sizeof(c->preload), "%s%s%s", c->agent_path,
		 c->mpi_shims[0] ? ":" : "", c->mpi_shims);
	c->mpi_threshold_ns = 100000;
	if (!env_u64(AGENT_ENV_MPI_THRESHOLD, &v))
		c->mpi_threshold_ns = v;
	c->interval_ns = 10000000;
	if (!env_u64(AGENT_ENV_INTERVAL_NS, &v) && v >= 100000 && v <= 10000000000ull)
		c->interval_ns = v;
	c->stack_depth = 256;
	if (!env_u64(AGENT_ENV_STACK_DEPTH, &v) && v >= 1 && v <= RAW_MAX_DEPTH)
		c->stack_depth = (uint32_t)v;
	if (!env_u64(AGENT_ENV_DURATION_NS, &v))
		c->duration_ns = v;
	if (!env_u64(AGENT_ENV_START_NS, &v))
		c->start_monotonic_ns = v;
	if (!env_u64(AGENT_ENV_DATA_LIMIT, &v))
		c->data_limit_bytes = v;
	c->follow_child =
		!(getenv(AGENT_ENV_FOLLOW_CHILD) && !strcmp(getenv(AGENT_ENV_FOLLOW_CHILD), "0"));
	c->rank = -1;
	if (getenv(AGENT_ENV_RANK))
		c->rank = atoi(getenv(AGENT_ENV_RANK));
	c->task_clock = getenv(AGENT_ENV_SAMPLING_CLOCK) &&
			!strcmp(getenv(AGENT_ENV_SAMPLING_CLOCK), "task-clock");
	if (!env_u64(AGENT_ENV_WAIT_THRESHOLD, &v)) {
		c->waits = true;
		c->wait_threshold_ns = v;
	}
	s = getenv(AGENT_ENV_MEMORY);
#ifndef AGENT_MEMORY
	s = NULL; /* the hotspots agent has no allocation wrappers */
#endif
	if (s && !strcmp(s, "exact")) {
		c->memory = true;
	} else if (s && !strncmp(s, "bytes:", 6)) {
		c->memory = true;
		c->mem_sample_bytes = strtoull(s + 6, NULL, 10);
	}
	c->signo = SIGRTMAX - 7;
	if (!env_u64(AGENT_ENV_SIGNAL, &v) && (int)v >= SIGRTMIN && (int)v <= SIGRTMAX)
		c->signo = (int)v;
	if (!env_u64(AGENT_ENV_LAUNCHER_PID, &v))
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

static void fork_prepare(void)
{
	AGENT_BUSY;
	pthread_mutex_lock(&agent.lock);
}

static void fork_parent(void)
{
	pthread_mutex_unlock(&agent.lock);
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
	agent.pid = getpid();
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
		free(t->ips);
		t->ips = NULL;
		stack_table_release(&t->stacks);
		agent_python_thread_free(t);
		agent_mpi_thread_free(t);
		agent_wait_thread_free(t);
		atomic_store(&t->busy, 0);
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
	} else {
		self = agent_thread_begin(agent_gettid(), false);
	}
	agent_modules_scan();
	if (self)
		agent_thread_arm(self);
	mem_agent_leave();
}

/* The constructor's work once the configuration says we profile this process. */
static void agent_init_active(void)
{
	AGENT_BUSY;
	struct agent_thread *t;
	sigset_t mask;

	origin_read();
	/*
	 * Without -follow-child only the launcher's own child (and the images it execs) is
	 * profiled; its descendants load the agent but stay idle.
	 */
	if (!agent.cfg.follow_child && agent.origin == RAW_PROCESS_START &&
	    agent.cfg.launcher_pid && agent.parent_pid != agent.cfg.launcher_pid)
		return;
	if (readlink("/proc/self/exe", agent.exe, sizeof(agent.exe) - 1) < 0)
		agent.exe[0] = '\0';
	/* Run through an explicit loader (ld-linux-x86-64.so.2 ./prog), /proc/self/exe is the
	   loader: the program is the file whose headers the loader mapped (AT_PHDR). */
	proc_maps_path_at(getauxval(AT_PHDR), agent.exe, sizeof(agent.exe));
	agent.data = data_counter_map(agent.cfg.result_dir, 0);
	if (pthread_key_create(&agent.key, agent_thread_key_destructor)) {
		agent_log("cannot create a thread key: sampling disabled");
		return;
	}
	pthread_atfork(fork_prepare, fork_parent, fork_child);
	unwinder_prepare();
	if (agent_signal_install()) {
		agent_log("cannot install the signal handler: %s", strerror(errno));
		return;
	}
	agent.active = true;
	if (agent_proc_open()) {
		agent.active = false;
		return;
	}
	if (agent.cfg.memory)
		mem_start();
	/* Without a stream (noted in the process stream) other threads may still be sampled. */
	t = agent_thread_begin(agent_gettid(), false);
	agent_modules_scan();
	agent_threads_adopt_existing();
	/* A mask inherited across exec may block our signal: programs cannot, the agent does. */
	sigemptyset(&mask);
	sigaddset(&mask, agent.cfg.signo);
	agent_real.pthread_sigmask(SIG_UNBLOCK, &mask, NULL);
	/* Waits are recorded from here on, when asked for: the streams exist. */
	agent_wait_init();
	if (t)
		agent_thread_arm(t);
}

__attribute__((constructor)) static void agent_init(void)
{
	agent_resolve();
	agent.pid = getpid();
	if (config_read(&agent.cfg))
		return; /* not started by pcollect: stay out of the way */
	mem_agent_enter();
	agent_init_active();
	mem_agent_leave();
}

/* At exit: stop every timer and finish every stream, this thread's and the others'. */
static void agent_shutdown(void)
{
	AGENT_BUSY;
	size_t i, n;

	if (!agent.active || agent_in_vfork_child())
		return;
	agent_wait_stop();
	mem_image_end();
	atomic_store(&agent.stopped, 1);
	n = atomic_load(&agent.nthreads);
	for (i = 0; i < n; i++) {
		struct agent_thread *t = agent.threads[i];

		if (t && atomic_load(&t->state) == AGENT_THREAD_LIVE)
			agent_thread_end(t, t == agent_self);
	}
	agent_proc_close();
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
