/* SPDX-License-Identifier: MIT */
/* pcollect's launcher: runs the target with the agent preloaded and records the collection. */
#define LOG_DOMAIN "launch"
#include "collector/pcollect/launcher.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/agent-env.h"
#include "common/data-counter.h"
#include "common/preload.h"
#include "collector/pcollect/target-check.h"
#include "common/log.h"
#include "common/meta.h"
#include "common/result-dir.h"
#include "common/tool-run.h"

#ifndef PCOLLECT_LIBDIR
#define PCOLLECT_LIBDIR "lib"
#endif
#ifndef PCOLLECT_DATADIR
#define PCOLLECT_DATADIR "share"
#endif
#define AGENT_NAME     "libpcollect-agent.so"
#define AGENT_MEM_NAME "libpcollect-agent-mem.so" /* with the allocator wrappers */
/* -trace-mpi: the shims built (one per MPI ABI whose headers were there), beside the agent. */
static const char *const mpi_shim_names[] = { "libpcollect-mpi-openmpi.so",
					      "libpcollect-mpi-mpich.so" };

static volatile sig_atomic_t target_pid;
static volatile sig_atomic_t snapshot_asked;
static pid_t snapshot_pid;     /* a snapshot being made (SIGUSR2), 0: none */
#define RING_TRIM_NS 200000000 /* -ring-buffer: old chunks dropped this often (ns) */
/* SIGXFSZ as pcollect found it: what the program gets (pcollect itself ignores it). */
static struct sigaction xfsz_inherited;

static uint64_t now_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * The agent file name (the hotspots agent, or memory-consumption's) beside pcollect (build
 * tree: build/collector/), or in the install tree's library directory (bin/pcollect,
 * <libdir>/pcollect/libpcollect-agent.so).
 */
static int find_agent(const char *name, char *buf, size_t size)
{
	char exe[PATH_MAX], cand[PATH_MAX + 64];
	int i;

	if (tool_exe_dir(exe, sizeof(exe)))
		return -ENOENT;
	for (i = 0; i < 3; i++) {
		if (i == 0)
			snprintf(cand, sizeof(cand), "%s/%s", exe, name);
		else if (i == 1 && PCOLLECT_LIBDIR[0] == '/')
			snprintf(cand, sizeof(cand), "%s/pcollect/%s", PCOLLECT_LIBDIR, name);
		else if (i == 1)
			snprintf(cand, sizeof(cand), "%s/../%s/pcollect/%s", exe, PCOLLECT_LIBDIR,
				 name);
		else
			snprintf(cand, sizeof(cand), "%s/../lib/pcollect/%s", exe, name);
		if (access(cand, R_OK)) {
			log_debug("no agent at '%s': %s", cand, strerror(errno));
			continue;
		}
		if (realpath(cand, buf) && strlen(buf) < size) {
			log_debug("agent '%s'", buf);
			return 0;
		}
	}
	return -ENOENT;
}

int launcher_find_agent(char *buf, size_t size)
{
	return find_agent(AGENT_NAME, buf, size);
}

/*
 * The MPI shims beside the agent, ':'-separated into buf, in the order they go into
 * LD_PRELOAD. Returns how many there are.
 */
static int find_mpi_shims(const char *agent_path, char *buf, size_t size)
{
	const char *slash = strrchr(agent_path, '/');
	char cand[PATH_MAX];
	size_t len = 0, i;
	int n = 0;

	buf[0] = '\0';
	for (i = 0; slash && i < sizeof(mpi_shim_names) / sizeof(mpi_shim_names[0]); i++) {
		snprintf(cand, sizeof(cand), "%.*s/%s", (int)(slash - agent_path), agent_path,
			 mpi_shim_names[i]);
		if (access(cand, R_OK)) {
			log_debug("no MPI shim at '%s': %s", cand, strerror(errno));
			continue;
		}
		if (len + strlen(cand) + 2 > size)
			break;
		len += (size_t)snprintf(buf + len, size - len, "%s%s", n ? ":" : "", cand);
		n++;
		log_debug("MPI shim '%s'", cand);
	}
	return n;
}

/*
 * The directory holding the Python API's module (pcollect/__init__.py): the build tree's
 * (build/api/python beside build/collector/) or the install tree's (<datadir>/pcollect/python).
 */
int launcher_find_python(char *buf, size_t size)
{
	char exe[PATH_MAX], cand[PATH_MAX + 64], init[PATH_MAX + 96];
	int i;

	if (tool_exe_dir(exe, sizeof(exe)))
		return -ENOENT;
	for (i = 0; i < 2; i++) {
		if (i == 0)
			snprintf(cand, sizeof(cand), "%s/../api/python", exe);
		else if (PCOLLECT_DATADIR[0] == '/')
			snprintf(cand, sizeof(cand), "%s/pcollect/python", PCOLLECT_DATADIR);
		else
			snprintf(cand, sizeof(cand), "%s/../%s/pcollect/python", exe,
				 PCOLLECT_DATADIR);
		snprintf(init, sizeof(init), "%s/pcollect/__init__.py", cand);
		if (access(init, R_OK))
			continue;
		if (realpath(cand, buf) && strlen(buf) < size) {
			log_debug("Python module 'pcollect' in '%s'", buf);
			return 0;
		}
	}
	return -ENOENT;
}

/* One argument as a shell would need it quoted. */
static void quote_arg(char *out, size_t size, size_t *len, const char *a)
{
	bool plain = *a != '\0';
	const char *p;

	for (p = a; *p; p++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
			    "-_./=:,+@%",
			    *p))
			plain = false;
#define PUT(c)                                                                                     \
	do {                                                                                       \
		if (*len + 1 < size)                                                               \
			out[(*len)++] = (c);                                                       \
	} while (0)
	if (plain) {
		for (p = a; *p; p++)
			PUT(*p);
	} else {
		PUT('\'');
		for (p = a; *p; p++) {
			if (*p == '\'') {
				PUT('\'');
				PUT('\\');
				PUT('\'');
			}
			PUT(*p);
		}
		PUT('\'');
	}
#undef PUT
	out[*len] = '\0';
}

static char *join_args(int argc, char **argv)
{
	size_t size = 16, len = 0;
	char *out;
	int i;

	for (i = 0; i < argc; i++)
		size += 4 * strlen(argv[i]) + 3;
	out = calloc(1, size);
	if (!out)
		return NULL;
	for (i = 0; i < argc; i++) {
		if (i) {
			out[len++] = ' ';
			out[len] = '\0';
		}
		quote_arg(out, size, &len, argv[i]);
	}
	return out;
}

static const char *finalization_name(enum collect_finalization f)
{
	static const char *const names[] = { "full", "fast", "deferred", "none" };
	return names[f];
}

static void meta_fill_start(struct meta *m, const struct collect_opts *o, const char *dir,
			    uint64_t start_real, uint64_t start_mono, int rank)
{
	char buf[PATH_MAX], *cmd = join_args(o->argc, o->argv);
	struct utsname u;
	struct passwd *pw = getpwuid(getuid());
	int i;

	meta_set(m, "analysis", o->analysis);
	meta_set(m, "command_line", cmd ? cmd : "");
	free(cmd);
	for (i = 0; i < o->argc; i++) {
		snprintf(buf, sizeof(buf), "argv.%d", i);
		meta_set(m, buf, o->argv[i]);
	}
	meta_setf(m, "argc", "%d", o->argc);
	if (o->command_line)
		meta_set(m, "collector_command_line", o->command_line);
	meta_set(m, "cwd", getcwd(buf, sizeof(buf)) ? buf : "");
	meta_set(m, "result_dir", dir);
	/* preport reads the build's source paths only from a result this user made here. */
	if (!result_dir_identity(dir, buf, sizeof(buf)))
		meta_set(m, "result_dir_id", buf);
	result_short_hostname(buf, sizeof(buf));
	meta_set(m, "host", buf);
	meta_set(m, "user", pw ? pw->pw_name : (getenv("USER") ? getenv("USER") : ""));
	if (uname(&u) == 0) {
		meta_set(m, "kernel", u.release);
		meta_set(m, "machine", u.machine);
	}
	meta_setf(m, "cpu_count", "%ld", sysconf(_SC_NPROCESSORS_ONLN));
	meta_setf(m, "start_realtime_ns", "%llu", (unsigned long long)start_real);
	meta_setf(m, "start_monotonic_ns", "%llu", (unsigned long long)start_mono);
	meta_setf(m, "interval_ns", "%llu", (unsigned long long)o->interval_ns);
	meta_setf(m, "stack_depth", "%u", o->stack_depth);
	meta_set(m, "sampling_clock", o->task_clock ? "task-clock" : "timer");
	meta_set(m, "wait_time", o->waits ? "1" : "0");
	if (o->waits)
		meta_setf(m, "wait_threshold_ns", "%llu", (unsigned long long)o->wait_threshold_ns);
	if (o->memory)
		meta_setf(m, "memory_sample_bytes", "%llu",
			  (unsigned long long)o->mem_sample_bytes);
	meta_setf(m, "duration_ns", "%llu", (unsigned long long)o->duration_ns);
	if (o->ring_ns)
		meta_setf(m, "ring_buffer_ns", "%llu", (unsigned long long)o->ring_ns);
	meta_set(m, "collector_version", PCOLLECT_VERSION);
	meta_setf(m, "data_limit_mb", "%g", o->data_limit_mb);
	meta_set(m, "data_limit_hit", "0");
	meta_setf(m, "rank", "%d", rank);
	meta_set(m, "finalization_mode", finalization_name(o->finalization));
	meta_set(m, "result_mode", o->result_mode == RESULT_MODE_GROUP ? "group" : "private");
	meta_set(m, "follow_child", o->follow_child ? "1" : "0");
	meta_set(m, "archive", o->archive ? "1" : "0");
	meta_set(m, "trace_mpi", o->trace_mpi ? "1" : "0");
	if (o->trace_mpi)
		meta_setf(m, "mpi_threshold_ns", "%llu", (unsigned long long)o->mpi_threshold_ns);
	meta_setf(m, "launcher_pid", "%d", (int)getpid());
	if (o->target_pid)
		meta_setf(m, "target_pid", "%d", o->target_pid);
	meta_set(m, "start_paused", o->start_paused ? "1" : "0");
	meta_setf(m, "resume_after_ns", "%llu", (unsigned long long)o->resume_after_ns);
	meta_set(m, "status", "running");
}

/* SIGINT/SIGTERM/SIGHUP sent to pcollect go to the target; a terminal's reach both already. */
static void forward_signal(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	if (target_pid > 0 && si->si_code <= 0 && si->si_pid != target_pid)
		kill((pid_t)target_pid, sig);
}

/*
 * A program ended by TERM, INT or HUP (a job's time limit, a terminal's ^C or hang-up): pcollect
 * ends by the same signal, so its caller (a shell, Slurm, timeout(1), a Python subprocess)
 * sees what it would see without us. Other deaths keep the exit status 128 + signal: a
 * SIGSEGV raised here would dump pcollect's core, not the program's.
 */
static void exit_as_target(int status)
{
	sigset_t set;
	int sig;

	if (!WIFSIGNALED(status))
		return;
	sig = WTERMSIG(status);
	if (sig != SIGTERM && sig != SIGINT && sig != SIGHUP)
		return;
	fflush(NULL);
	sigemptyset(&set);
	sigaddset(&set, sig);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	raise(sig);
}

/*
 * The Python API's pure-Python module (api/python/pcollect): "import pcollect" works in a
 * program run under pcollect. Put after the program's own PYTHONPATH, so that a pcollect
 * module of its own, or one installed, comes first.
 */
static void python_path_add(const char *pydir)
{
	const char *old = getenv("PYTHONPATH");
	size_t size;
	char *v;

	if (!pydir[0])
		return;
	if (!old || !*old) {
		setenv("PYTHONPATH", pydir, 1);
		return;
	}
	size = strlen(old) + strlen(pydir) + 2;
	v = malloc(size);
	if (!v)
		return;
	snprintf(v, size, "%s:%s", old, pydir);
	setenv("PYTHONPATH", v, 1);
	free(v);
}

static void child_exec(const struct collect_opts *o, const char *path, const char *agent_path,
		       const char *mpi_shims, const char *pydir, const char *dir,
		       uint64_t start_mono, int rank, int errfd)
{
	char buf[PATH_MAX + 64], *preload, *ours;
	const char *old = getenv("LD_PRELOAD");
	size_t preload_size = strlen(agent_path) + strlen(mpi_shims) + (old ? strlen(old) : 0) + 3;
	int err;

	/* INT, TERM and HUP are as pcollect's caller left them (pcollect forwards them from
	   after the fork on): a signal nohup or a shell ignores is ignored by the program too.
	   pcollect ignores SIGXFSZ for itself only: the program gets what it would get alone. */
	sigaction(SIGXFSZ, &xfsz_inherited, NULL);
	/* The agent first (then the MPI shims), a sanitizer runtime the user preloads still
	   ahead of it. */
	preload = malloc(preload_size);
	ours = malloc(preload_size);
	if (ours)
		snprintf(ours, preload_size, "%s%s%s", agent_path, *mpi_shims ? ":" : "",
			 mpi_shims);
	if (!preload || !ours || preload_compose(preload, preload_size, ours, old) < 0) {
		err = ENOMEM;
		if (write(errfd, &err, sizeof(err)) < 0)
			_exit(127);
		_exit(127);
	}
	setenv("LD_PRELOAD", preload, 1);
	free(preload);
	free(ours);
	if (*mpi_shims) {
		setenv(AGENT_ENV_MPI_SHIMS, mpi_shims, 1);
		snprintf(buf, sizeof(buf), "%llu", (unsigned long long)o->mpi_threshold_ns);
		setenv(AGENT_ENV_MPI_THRESHOLD, buf, 1);
	} else {
		unsetenv(AGENT_ENV_MPI_SHIMS);
	}
	python_path_add(pydir);
	setenv(AGENT_ENV_RESULT_DIR, dir, 1);
	setenv(AGENT_ENV_AGENT, agent_path, 1);
#define SETNUM(name, fmt, v)                                                                       \
	do {                                                                                       \
		snprintf(buf, sizeof(buf), fmt, v);                                                \
		setenv(name, buf, 1);                                                              \
	} while (0)
	SETNUM(AGENT_ENV_INTERVAL_NS, "%llu", (unsigned long long)o->interval_ns);
	SETNUM(AGENT_ENV_STACK_DEPTH, "%u", o->stack_depth);
	setenv(AGENT_ENV_SAMPLING_CLOCK, o->task_clock ? "task-clock" : "timer", 1);
	if (o->signo)
		SETNUM(AGENT_ENV_SIGNAL, "%d", o->signo);
	if (o->waits)
		SETNUM(AGENT_ENV_WAIT_THRESHOLD, "%llu", (unsigned long long)o->wait_threshold_ns);
	else
		unsetenv(AGENT_ENV_WAIT_THRESHOLD);
	if (!o->memory)
		unsetenv(AGENT_ENV_MEMORY);
	else if (o->mem_sample_bytes)
		SETNUM(AGENT_ENV_MEMORY, "bytes:%llu", (unsigned long long)o->mem_sample_bytes);
	else
		setenv(AGENT_ENV_MEMORY, "exact", 1);
	SETNUM(AGENT_ENV_DURATION_NS, "%llu", (unsigned long long)o->duration_ns);
	SETNUM(AGENT_ENV_START_NS, "%llu", (unsigned long long)start_mono);
	SETNUM(AGENT_ENV_DATA_LIMIT, "%llu", (unsigned long long)(o->data_limit_mb * 1048576.0));
	if (o->ring_ns)
		SETNUM(AGENT_ENV_RING_NS, "%llu", (unsigned long long)o->ring_ns);
	SETNUM(AGENT_ENV_FOLLOW_CHILD, "%d", o->follow_child ? 1 : 0);
	SETNUM(AGENT_ENV_RANK, "%d", rank);
	SETNUM(AGENT_ENV_LAUNCHER_PID, "%d", (int)getppid());
#undef SETNUM
	unsetenv(AGENT_ENV_EXEC);
	execv(path, o->argv);
	if (errno == ENOEXEC) {
		/* What execvp() does with a file the kernel cannot run: give it to the shell. */
		char **argv = calloc((size_t)o->argc + 2, sizeof(char *));

		if (argv) {
			argv[0] = "sh";
			argv[1] = (char *)path;
			memcpy(argv + 2, o->argv + 1, (size_t)(o->argc - 1) * sizeof(char *));
			execv("/bin/sh", argv);
		}
	}
	err = errno;
	if (write(errfd, &err, sizeof(err)) < 0)
		_exit(127);
	_exit(127);
}

/* SIGUSR2 to pcollect: a snapshot of the collection (the wait below makes it). */
static void ask_snapshot(int sig)
{
	(void)sig;
	snapshot_asked = 1;
}

/*
 * A snapshot made by a child of ours, so that the loop below goes on dropping old chunks and
 * sees the program's end meanwhile. The terminal's signals are the program's, not its.
 */
static void snapshot_start(const struct collection *c, const struct collect_opts *o)
{
	pid_t p;

	fflush(NULL);
	p = fork();
	if (p == 0) {
		int code;

		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
		code = ring_snapshot(c->dir, o->ring_ns, o->quiet);
		fflush(NULL);
		_exit(code);
	}
	if (p < 0)
		ring_snapshot(c->dir, o->ring_ns, o->quiet);
	else
		snapshot_pid = p;
}

/*
 * The target's end; until -resume-after is due, a look every few ms whether it is; under
 * -ring-buffer, the streams' old chunks dropped every RING_TRIM_NS; a snapshot when asked.
 */
static int wait_target(pid_t pid, int *status, struct collection *c, const struct collect_opts *o,
		       bool *resumed)
{
	uint64_t trimmed = now_ns(CLOCK_MONOTONIC);

	for (;;) {
		pid_t r = waitpid(pid, status, *resumed && !o->ring_ns ? 0 : WNOHANG);

		if (r == pid)
			return 0;
		if (r < 0 && errno != EINTR)
			return -errno;
		if (snapshot_asked && !snapshot_pid) {
			snapshot_asked = 0;
			snapshot_start(c, o);
		}
		if (snapshot_pid > 0 && waitpid(snapshot_pid, NULL, WNOHANG) == snapshot_pid)
			snapshot_pid = 0;
		if (o->ring_ns && now_ns(CLOCK_MONOTONIC) - trimmed >= RING_TRIM_NS) {
			ring_trim(c->dir, o->ring_ns, 0);
			trimmed = now_ns(CLOCK_MONOTONIC);
		}
		if (!*resumed && !(*resumed = collection_resume_due(c, o))) {
			struct timespec ts = { 0, 5000000 };

			nanosleep(&ts, NULL);
		} else if (o->ring_ns) {
			struct timespec ts = { 0, RING_TRIM_NS / 4 };

			nanosleep(&ts, NULL);
		}
	}
}

int collection_begin(struct collection *c, const struct collect_opts *o)
{
	char err[600];
	int rc;

	memset(c, 0, sizeof(*c));
	c->rank = -1;
	result_in_parallel_job(&c->rank);
	rc = result_dir_name(c->name, sizeof(c->name), o->result_dir, o->analysis);
	if (rc && o->result_dir) {
		log_error("cannot use result directory '%s': %s", o->result_dir, strerror(-rc));
		return EXIT_USAGE;
	}
	if (rc) {
		log_error("cannot choose a result directory name in the current directory: %s",
			  strerror(-rc));
		return EXIT_RUNTIME;
	}
	rc = result_dir_create(c->name, o->result_mode, &c->created, err, sizeof(err));
	if (rc) {
		log_error("%s", err);
		/* The directory named is in the way (it holds data, it is a file, another user's,
		   the name is too long): the user picks another. Other refusals are the system's.
		 */
		return rc == -EEXIST || rc == -ENOTDIR || rc == -ENAMETOOLONG || rc == -EPERM
			       ? EXIT_USAGE
			       : EXIT_RUNTIME;
	}
	if (!realpath(c->name, c->dir)) {
		log_error("cannot resolve result directory '%s': %s", c->name, strerror(errno));
		return EXIT_RUNTIME;
	}
	log_debug("result directory '%s'%s%s, rank %d", c->dir, c->created ? " (created)" : "",
		  result_in_parallel_job(NULL) ? " shared by the job's ranks" : "", c->rank);
	c->counter = data_counter_map(c->dir, 1);
	/* Held to pcollect's end, whatever ends it: an attached agent sees it go and lets the
	   process go by itself (agent_attach_poll()). */
	if (c->counter && data_counter_hold(c->dir) < 0)
		log_debug("cannot hold the control page of '%s': %s", c->dir, strerror(errno));
	if (!c->counter && (o->start_paused || o->target_pid)) {
		log_error("cannot create the collection's control page in '%s': %s", c->dir,
			  strerror(errno));
		collection_abandon(c);
		return EXIT_RUNTIME;
	}
	if (!c->counter)
		log_warn("cannot create the data counter in '%s': %s; -data-limit and -command "
			 "not available",
			 c->dir, strerror(errno));
	if (o->start_paused)
		data_counter_command(c->counter, AGENT_CONTROL_PAUSED, 0);
	result_path(c->meta_path, sizeof(c->meta_path), c->dir, RESULT_PATH_META, getpid(), 0, NULL,
		    NULL);
	c->meta = calloc(1, sizeof(*c->meta));
	if (!c->meta) {
		log_error("cannot start the collection: %s", strerror(ENOMEM));
		collection_abandon(c);
		return EXIT_RUNTIME;
	}
	meta_init(c->meta);
	c->start_real = now_ns(CLOCK_REALTIME);
	c->start_mono = now_ns(CLOCK_MONOTONIC);
	meta_fill_start(c->meta, o, c->dir, c->start_real, c->start_mono, c->rank);
	if ((rc = meta_write_file(c->meta, c->meta_path, result_file_mode(c->dir))))
		log_warn("cannot write metadata '%s': %s", c->meta_path, strerror(-rc));
	if (!o->quiet)
		log_info("collecting %s%s into '%s'%s", o->analysis,
			 o->analysis_default ? " (no -collect given: the default analysis)" : "",
			 c->name, o->start_paused ? " (paused)" : "");
	return 0;
}

void collection_abandon(struct collection *c)
{
	char path[PATH_MAX];

	if (c->meta) {
		meta_release(c->meta);
		free(c->meta);
		c->meta = NULL;
	}
	if (c->meta_path[0])
		unlink(c->meta_path);
	if (c->counter) {
		munmap(c->counter, sizeof(*c->counter));
		c->counter = NULL;
		if (!data_counter_path(path, sizeof(path), c->dir))
			unlink(path);
	}
	if (c->created)
		result_dir_remove_empty(c->dir);
}

bool collection_resume_due(struct collection *c, const struct collect_opts *o)
{
	if (!o->resume_after_ns || !c->counter ||
	    now_ns(CLOCK_MONOTONIC) - c->start_mono < o->resume_after_ns)
		return false;
	data_counter_command(c->counter, 0, AGENT_CONTROL_PAUSED);
	log_debug("-resume-after: collection resumed");
	return true;
}

int launcher_run_tool(const char *name, char **argv)
{
	int code;

	/* Our buffered output comes first: the tool writes to the same descriptors. */
	fflush(NULL);
	code = tool_run(name, argv);
	if (code == -ENOENT) {
		log_error("cannot find '%s' beside pcollect or in its build directory", name);
		return EXIT_RUNTIME;
	}
	if (code < 0) {
		log_error("cannot run '%s': %s", name, strerror(-code));
		return EXIT_RUNTIME;
	}
	return code;
}

/*
 * Finalize the result with pfinalize, given the collection's options: its search directories
 * (binaries as "bin:=DIR", so that no directory name is read as a type), -finalization-mode,
 * -quiet or -verbose. It speaks as pcollect and tells its own failures. Returns its exit
 * status, nonzero when the finalization failed.
 */
static int collection_finalize(const struct collection *c, const struct collect_opts *o)
{
	size_t n = 0, i, max = 7 + 2 * (o->nsearch_dirs + o->nsource_dirs);
	char **argv = calloc(max, sizeof(*argv)),
	     **bins = calloc(o->nsearch_dirs + 1, sizeof(*bins));
	int code = EXIT_RUNTIME;

	if (!argv || !bins) {
		log_error("%s", strerror(ENOMEM));
		goto out;
	}
	argv[n++] = "pcollect";
	argv[n++] = "-r";
	argv[n++] = (char *)c->dir;
	for (i = 0; i < o->nsearch_dirs; i++) {
		if (asprintf(&bins[i], "bin:=%s", o->search_dirs[i]) < 0) {
			bins[i] = NULL;
			log_error("%s", strerror(ENOMEM));
			goto out;
		}
		argv[n++] = "-search-dir";
		argv[n++] = bins[i];
	}
	for (i = 0; i < o->nsource_dirs; i++) {
		argv[n++] = "-source-search-dir";
		argv[n++] = (char *)o->source_dirs[i];
	}
	if (o->finalization == COLLECT_FINALIZE_FAST)
		argv[n++] = "-finalization-mode=fast";
	if (o->quiet)
		argv[n++] = "-quiet";
	else if (log_level() > 0)
		argv[n++] = "-verbose";
	code = launcher_run_tool("pfinalize", argv);
out:
	for (i = 0; bins && i < o->nsearch_dirs; i++)
		free(bins[i]);
	free(bins);
	free(argv);
	return code;
}

void collection_end(struct collection *c, const struct collect_opts *o)
{
	struct meta *m = c->meta;
	uint64_t end_real = now_ns(CLOCK_REALTIME), end_mono = now_ns(CLOCK_MONOTONIC);
	bool limit_hit = false;
	int rc, full;

	if (c->counter && o->data_limit_mb && __atomic_load_n(&c->counter->hit, __ATOMIC_RELAXED))
		limit_hit = true;
	meta_setf(m, "end_realtime_ns", "%llu", (unsigned long long)end_real);
	meta_setf(m, "end_monotonic_ns", "%llu", (unsigned long long)end_mono);
	meta_setf(m, "elapsed_ns", "%llu", (unsigned long long)(end_mono - c->start_mono));
	meta_set(m, "data_limit_hit", limit_hit ? "1" : "0");
	if (c->counter)
		meta_setf(m, "raw_bytes", "%llu",
			  (unsigned long long)__atomic_load_n(&c->counter->bytes,
							      __ATOMIC_RELAXED));
	meta_set(m, "status", "done");
	if ((rc = meta_write_file(m, c->meta_path, result_file_mode(c->dir))))
		log_error("cannot write metadata '%s': %s", c->meta_path, strerror(-rc));
	meta_release(m);
	free(m);
	c->meta = NULL;
	if (limit_hit)
		log_error("data limit of %g MB reached: sampling stopped before the end of the "
			  "run, the profile covers only its start (raise -data-limit, 0 for none)",
			  o->data_limit_mb);
	full = c->counter ? (int)__atomic_load_n(&c->counter->disk_full, __ATOMIC_RELAXED) : 0;
	if (full)
		log_error("the file system of '%s' is full (%s): sampling stopped where a stream "
			  "could not grow, and threads started later were not sampled; make room "
			  "or choose another -r (pfinalize's summary names the threads)",
			  c->name, strerror(full));

	/* archive_result() and pfinalize tell their own failures (docs/errors.md). */
	if (o->archive || o->finalization == COLLECT_FINALIZE_DEFERRED)
		archive_result(c->dir, o->quiet);
	if ((o->finalization == COLLECT_FINALIZE_FULL ||
	     o->finalization == COLLECT_FINALIZE_FAST) &&
	    collection_finalize(c, o))
		log_error("finalization of '%s' failed; the raw data is kept: run "
			  "'pfinalize -r %s' to retry",
			  c->name, c->name);
	if (!o->quiet)
		log_info("result in '%s'", c->name);
}

int collect_run(const struct collect_opts *o)
{
	char path[PATH_MAX], agent_path[PATH_MAX], pydir[PATH_MAX], err[600];
	char mpi_shims[2 * PATH_MAX] = "";
	struct collection c;
	struct sigaction sa;
	int status = 0, pipefd[2], child_err = 0, code, rc;
	bool resumed;
	pid_t pid;
	ssize_t n;

	/*
	 * A file we write (metadata, the database) past the caller's RLIMIT_FSIZE must fail with
	 * "File too large", not kill pcollect; the program's child restores the default.
	 */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_IGN;
	sigaction(SIGXFSZ, &sa, &xfsz_inherited);
	/* Everything that can refuse the target is checked before the directory exists. */
	if (target_check(o->argv[0], path, sizeof(path), err, sizeof(err))) {
		log_error("%s", err);
		return EXIT_USAGE;
	}
	if (find_agent(o->memory ? AGENT_MEM_NAME : AGENT_NAME, agent_path, sizeof(agent_path))) {
		log_error("cannot find the agent '%s' beside '%s' or in its library directory",
			  o->memory ? AGENT_MEM_NAME : AGENT_NAME, "/proc/self/exe");
		return EXIT_RUNTIME;
	}
	if (o->trace_mpi && !find_mpi_shims(agent_path, mpi_shims, sizeof(mpi_shims))) {
		log_error("option '-trace-mpi': no MPI shim beside the agent '%s': this pcollect "
			  "was built without the headers of Open MPI or MPICH (libopenmpi-dev, "
			  "libmpich-dev)",
			  agent_path);
		return EXIT_USAGE;
	}
	if (launcher_find_python(pydir, sizeof(pydir)))
		pydir[0] = '\0';
	if ((rc = collection_begin(&c, o)))
		return rc;
	log_debug("target '%s' runs as '%s'", o->argv[0], path);
	if (pipe2(pipefd, O_CLOEXEC)) {
		log_error("cannot create a pipe: %s", strerror(errno));
		collection_abandon(&c);
		return EXIT_RUNTIME;
	}

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = forward_signal;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		log_error("cannot start '%s': %s", o->argv[0], strerror(errno));
		collection_abandon(&c);
		return EXIT_RUNTIME;
	}
	if (pid == 0) {
		close(pipefd[0]);
		child_exec(o, path, agent_path, mpi_shims, pydir, c.dir, c.start_mono, c.rank,
			   pipefd[1]);
	}
	target_pid = pid;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	/* No SA_RESTART: the snapshot is made by wait_target(), whose waitpid() it interrupts. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = ask_snapshot;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR2, &sa, NULL);
	close(pipefd[1]);
	do
		n = read(pipefd[0], &child_err, sizeof(child_err));
	while (n < 0 && errno == EINTR);
	close(pipefd[0]);
	resumed = !o->resume_after_ns;
	wait_target(pid, &status, &c, o, &resumed);
	/* The window is the last seconds before the program's end; a snapshot is let finish. */
	if (o->ring_ns)
		ring_trim(c.dir, o->ring_ns, now_ns(CLOCK_MONOTONIC));
	while (snapshot_pid > 0 && waitpid(snapshot_pid, NULL, 0) < 0 && errno == EINTR)
		;
	/*
	 * The program is gone; what is left is ours to finish. A job's end signals the whole
	 * process group more than once (timeout(1) sends TERM to pcollect, then to its group;
	 * Slurm to every process of the step): they must not stop the finalization, nor
	 * pfinalize, which inherits them ignored. KILL still does (docs/pcollect.md).
	 */
	signal(SIGINT, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	signal(SIGHUP, SIG_IGN);

	if (n == (ssize_t)sizeof(child_err)) {
		log_error("cannot run '%s': %s", o->argv[0], strerror(child_err));
		collection_abandon(&c);
		return EXIT_USAGE;
	}
	if (WIFSIGNALED(status)) {
		code = 128 + WTERMSIG(status);
		meta_setf(c.meta, "exit_signal", "%d", WTERMSIG(status));
	} else {
		code = WEXITSTATUS(status);
		meta_setf(c.meta, "exit_code", "%d", code);
	}
	collection_end(&c, o);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	exit_as_target(status);
	return code;
}
