/* SPDX-License-Identifier: MIT */
/* pcollect's launcher: runs the target with the agent preloaded and records the collection. */
#define LOG_DOMAIN "launch"
#include "collector/launcher.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "collector/agent-env.h"
#include "collector/data-counter.h"
#include "collector/preload.h"
#include "collector/target-check.h"
#include "common/log.h"
#include "common/meta.h"
#include "common/result-dir.h"
#include "finalizer/finalize.h"

#ifndef PCOLLECT_LIBDIR
#define PCOLLECT_LIBDIR "lib"
#endif
#define AGENT_NAME "libpcollect-agent.so"
#define AGENT_MEM_NAME "libpcollect-agent-mem.so" /* with the allocator wrappers */
/* -trace-mpi: the shims built (one per MPI ABI whose headers were there), beside the agent. */
static const char *const mpi_shim_names[] = { "libpcollect-mpi-openmpi.so",
					      "libpcollect-mpi-mpich.so" };

static volatile sig_atomic_t target_pid;
/* SIGXFSZ as pcollect found it: what the program gets (pcollect itself ignores it). */
static struct sigaction xfsz_inherited;

static uint64_t now_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * The agent beside the launcher (build tree: build/collector/), or in the install tree's
 * library directory (bin/pcollect, <libdir>/pcollect/libpcollect-agent.so).
 */
static int find_agent(const char *name, char *buf, size_t size)
{
	char exe[PATH_MAX], cand[PATH_MAX + 64];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	char *slash;
	int i;

	if (n <= 0)
		return -errno;
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	if (!slash)
		return -ENOENT;
	*slash = '\0';
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
		meta_setf(m, "wait_threshold_ns", "%llu",
			  (unsigned long long)o->wait_threshold_ns);
	if (o->memory)
		meta_setf(m, "memory_sample_bytes", "%llu",
			  (unsigned long long)o->mem_sample_bytes);
	meta_setf(m, "duration_ns", "%llu", (unsigned long long)o->duration_ns);
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
	meta_set(m, "status", "running");
}

/* SIGINT/SIGTERM/SIGHUP sent to pcollect go to the target; a terminal's reach both already. */
static void forward_signal(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	if (target_pid > 0 && si->si_code <= 0 && si->si_pid != target_pid)
		kill((pid_t)target_pid, sig);
}

static void child_exec(const struct collect_opts *o, const char *path, const char *agent_path,
		       const char *mpi_shims, const char *dir, uint64_t start_mono, int rank,
		       int errfd)
{
	char buf[PATH_MAX + 64], *preload, *ours;
	const char *old = getenv("LD_PRELOAD");
	size_t preload_size = strlen(agent_path) + strlen(mpi_shims) + (old ? strlen(old) : 0) + 3;
	int err;

	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	/* pcollect ignores SIGXFSZ for itself only: the program gets what it would get alone. */
	sigaction(SIGXFSZ, &xfsz_inherited, NULL);
	/* The agent first (then the MPI shims), a sanitizer runtime the user preloads still
	   ahead of it. */
	preload = malloc(preload_size);
	ours = malloc(preload_size);
	if (ours)
		snprintf(ours, preload_size, "%s%s%s", agent_path, *mpi_shims ? ":" : "", mpi_shims);
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

static int wait_target(pid_t pid, int *status)
{
	for (;;) {
		pid_t r = waitpid(pid, status, 0);

		if (r == pid)
			return 0;
		if (r < 0 && errno != EINTR)
			return -errno;
	}
}

int collect_run(const struct collect_opts *o)
{
	char path[PATH_MAX], agent_path[PATH_MAX], name[PATH_MAX], dir[PATH_MAX];
	char err[600], meta_path[PATH_MAX], mpi_shims[2 * PATH_MAX] = "";
	uint64_t start_real, start_mono, end_real, end_mono;
	struct agent_data_counter *counter;
	struct sigaction sa;
	bool created = false, limit_hit = false;
	int rank = -1, status = 0, pipefd[2], child_err = 0, code, rc, full;
	struct meta m;
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
			  "libmpich-dev)", agent_path);
		return EXIT_USAGE;
	}
	result_in_parallel_job(&rank);
	rc = result_dir_name(name, sizeof(name), o->result_dir, o->analysis);
	if (rc && o->result_dir) {
		log_error("cannot use result directory '%s': %s", o->result_dir, strerror(-rc));
		return EXIT_USAGE;
	}
	if (rc) {
		log_error("cannot choose a result directory name in the current directory: %s",
			  strerror(-rc));
		return EXIT_RUNTIME;
	}
	rc = result_dir_create(name, o->result_mode, &created, err, sizeof(err));
	if (rc) {
		log_error("%s", err);
		/* The directory named is in the way (it holds data, it is a file, the name is
		   too long): the user picks another. Other refusals are the system's. */
		return rc == -EEXIST || rc == -ENOTDIR || rc == -ENAMETOOLONG ? EXIT_USAGE
									      : EXIT_RUNTIME;
	}
	if (!realpath(name, dir)) {
		log_error("cannot resolve result directory '%s': %s", name, strerror(errno));
		return EXIT_RUNTIME;
	}
	log_debug("result directory '%s'%s%s, rank %d", dir, created ? " (created)" : "",
		  result_in_parallel_job(NULL) ? " shared by the job's ranks" : "", rank);
	log_debug("target '%s' runs as '%s'", o->argv[0], path);
	counter = data_counter_map(dir, 1);
	if (!counter)
		log_warn("cannot create the data counter in '%s': %s; -data-limit not enforced",
			 dir, strerror(errno));
	result_path(meta_path, sizeof(meta_path), dir, RESULT_PATH_META, getpid(), 0, NULL, NULL);

	if (pipe2(pipefd, O_CLOEXEC)) {
		log_error("cannot create a pipe: %s", strerror(errno));
		return EXIT_RUNTIME;
	}
	meta_init(&m);
	start_real = now_ns(CLOCK_REALTIME);
	start_mono = now_ns(CLOCK_MONOTONIC);
	meta_fill_start(&m, o, dir, start_real, start_mono, rank);
	if ((rc = meta_write_file(&m, meta_path, result_file_mode(dir))))
		log_warn("cannot write metadata '%s': %s", meta_path, strerror(-rc));
	if (!o->quiet)
		log_info("collecting %s into '%s'", o->analysis, name);

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = forward_signal;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		log_error("cannot start '%s': %s", o->argv[0], strerror(errno));
		meta_release(&m);
		return EXIT_RUNTIME;
	}
	if (pid == 0) {
		close(pipefd[0]);
		child_exec(o, path, agent_path, mpi_shims, dir, start_mono, rank, pipefd[1]);
	}
	target_pid = pid;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	close(pipefd[1]);
	do
		n = read(pipefd[0], &child_err, sizeof(child_err));
	while (n < 0 && errno == EINTR);
	close(pipefd[0]);
	wait_target(pid, &status);
	end_real = now_ns(CLOCK_REALTIME);
	end_mono = now_ns(CLOCK_MONOTONIC);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);

	if (n == (ssize_t)sizeof(child_err)) {
		log_error("cannot run '%s': %s", o->argv[0], strerror(child_err));
		meta_release(&m);
		unlink(meta_path);
		if (created)
			result_dir_remove_empty(dir);
		return EXIT_USAGE;
	}
	if (WIFSIGNALED(status)) {
		code = 128 + WTERMSIG(status);
		meta_setf(&m, "exit_signal", "%d", WTERMSIG(status));
	} else {
		code = WEXITSTATUS(status);
		meta_setf(&m, "exit_code", "%d", code);
	}
	if (counter && o->data_limit_mb && __atomic_load_n(&counter->hit, __ATOMIC_RELAXED))
		limit_hit = true;
	meta_setf(&m, "end_realtime_ns", "%llu", (unsigned long long)end_real);
	meta_setf(&m, "end_monotonic_ns", "%llu", (unsigned long long)end_mono);
	meta_setf(&m, "elapsed_ns", "%llu", (unsigned long long)(end_mono - start_mono));
	meta_set(&m, "data_limit_hit", limit_hit ? "1" : "0");
	if (counter)
		meta_setf(&m, "raw_bytes", "%llu",
			  (unsigned long long)__atomic_load_n(&counter->bytes, __ATOMIC_RELAXED));
	meta_set(&m, "status", "done");
	if ((rc = meta_write_file(&m, meta_path, result_file_mode(dir))))
		log_error("cannot write metadata '%s': %s", meta_path, strerror(-rc));
	meta_release(&m);
	if (limit_hit)
		log_error("data limit of %g MB reached: sampling stopped before the end of the "
			  "run, the profile covers only its start (raise -data-limit, 0 for none)",
			  o->data_limit_mb);
	full = counter ? (int)__atomic_load_n(&counter->disk_full, __ATOMIC_RELAXED) : 0;
	if (full)
		log_error("the file system of '%s' is full (%s): sampling stopped where a stream "
			  "could not grow, and threads started later were not sampled; make room "
			  "or choose another -r (pfinalize's summary names the threads)",
			  name, strerror(full));

	/* archive_result() and finalize_run() tell their own failures (docs/errors.md). */
	if (o->archive || o->finalization == COLLECT_FINALIZE_DEFERRED)
		archive_result(dir, o->quiet);
	if (o->finalization == COLLECT_FINALIZE_FULL || o->finalization == COLLECT_FINALIZE_FAST) {
		struct finalize_opts fo = {
			.result_dir = dir,
			.search_dirs = o->search_dirs,
			.nsearch_dirs = o->nsearch_dirs,
			.source_dirs = o->source_dirs,
			.nsource_dirs = o->nsource_dirs,
			.fast = o->finalization == COLLECT_FINALIZE_FAST,
			.quiet = o->quiet,
		};

		if (finalize_run(&fo))
			log_error("finalization of '%s' failed; the raw data is kept: run "
				  "'pfinalize -r %s' to retry",
				  name, name);
	}
	if (!o->quiet)
		log_info("result in '%s'", name);
	return code;
}
