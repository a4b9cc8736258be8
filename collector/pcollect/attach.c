/* SPDX-License-Identifier: MIT */
/* pcollect -target-pid: load the agent into a running process, sample, let it go, finalize. */
#define LOG_DOMAIN "attach"
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "common/agent-env.h"
#include "common/data-counter.h"
#include "collector/pcollect/inject.h"
#include "collector/pcollect/launcher.h"
#include "common/log.h"
#include "common/meta.h"

/*
 * How (docs/pcollect.md, "Attaching"): one thread of the process is stopped with ptrace at a
 * safe point (collector/pcollect/inject.c), made to call dlopen() on the agent and the agent's
 * pcollect_attach() with the collection's configuration, and given back as it was; the
 * process's other threads are never stopped. From then on the agent samples as if it had
 * been preloaded, and is controlled through the collection's shared page: -command pause,
 * resume and stop from another shell, and at the end the detach, which every process of the
 * collection (the target and the children it forked or executed since) obeys by finishing
 * its streams and giving its signal back. Nothing of pcollect stays attached with ptrace
 * while sampling: a traced process stops at every signal it gets.
 */

#define DETACH_WAIT_NS  10000000000ll /* ns the processes get to let go */
#define CALL_TIMEOUT_MS 30000

static volatile sig_atomic_t stop_signal;

static void on_stop_signal(int sig)
{
	stop_signal = sig;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The target's command line (/proc/PID/cmdline) as an argv; the caller frees buf and argv. */
static char **target_argv(pid_t pid, char **bufp, int *argcp)
{
	char path[64], *buf = NULL, **argv;
	size_t len = 0, cap = 0, i, k = 0;
	int fd, argc = 0;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		for (;;) {
			ssize_t n;
			char *nb;

			if (len + 4096 > cap) {
				nb = realloc(buf, cap + 65536);
				if (!nb)
					break;
				buf = nb;
				cap += 65536;
			}
			n = read(fd, buf + len, cap - len - 1);
			if (n <= 0)
				break;
			len += (size_t)n;
		}
		close(fd);
	}
	for (i = 0; i < len; i++)
		if (!buf[i])
			argc++;
	argv = calloc((size_t)argc + 2, sizeof(*argv));
	if (!argv) {
		free(buf);
		return NULL;
	}
	for (i = 0; i < len && k < (size_t)argc; i += strlen(buf + i) + 1)
		argv[k++] = buf + i;
	if (!k) {
		/* A kernel thread or a process whose command line is gone: its name then. */
		argv[k++] = (char *)"[unknown]";
	}
	*bufp = buf;
	*argcp = (int)k;
	return argv;
}

/*
 * True when pid has exited and waits for its parent to reap it (a zombie: state Z or X in
 * /proc/PID/stat, one thread left): nothing runs in it to attach to, and every check on its
 * files would fail for that reason, not theirs.
 */
static bool target_exited(pid_t pid)
{
	char path[64], buf[512], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	/* "pid (comm) S ...": comm may hold ')' and blanks, the last ')' ends it. */
	if (!(p = strrchr(buf, ')')) || p[1] != ' ')
		return false;
	/* Field 20, num_threads: a main thread that called pthread_exit() is a zombie too while
	   the other threads run on. */
	if (p[2] == 'Z' || p[2] == 'X') {
		int field = 3;
		char *q = p + 2;

		while (field < 20 && (q = strchr(q, ' ')))
			q++, field++;
		return !q || atoi(q) <= 1;
	}
	return false;
}

/* A class-64 ELF executable, as the agent needs; an error message otherwise. */
static const char *target_kind(pid_t pid)
{
	unsigned char ident[EI_NIDENT];
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL; /* cannot tell: ptrace will say */
	if (read(fd, ident, sizeof(ident)) != (ssize_t)sizeof(ident) ||
	    memcmp(ident, ELFMAG, SELFMAG)) {
		close(fd);
		return NULL;
	}
	close(fd);
	return ident[EI_CLASS] == ELFCLASS64 ? NULL : "it is a 32-bit program";
}

/*
 * False when the process sees another file at path than we do (another mount namespace);
 * true when the same, or when we may not look (ptrace's refusal then says why).
 */
static bool same_file_there(pid_t pid, const char *path)
{
	char there[PATH_MAX + 64];
	struct stat a, b;

	snprintf(there, sizeof(there), "/proc/%d/root%s", (int)pid, path);
	if (stat(path, &a))
		return true;
	if (stat(there, &b))
		return errno == EACCES || errno == EPERM;
	return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* What ptrace refused, and how to be let in. */
static void refused(pid_t pid, const char *why)
{
	log_error("cannot attach to process %d: %s; attaching needs the right to ptrace it: the "
		  "same user and a process that is dumpable (not setuid, no PR_SET_DUMPABLE 0), "
		  "or CAP_SYS_PTRACE (root), and with Yama kernel.yama.ptrace_scope 1 a process "
		  "of your own is refused too: run as root or 'sysctl kernel.yama.ptrace_scope=0' "
		  "(docs/pcollect.md, Attaching)",
		  (int)pid, why);
}

/* The agent's configuration for pcollect_attach(): the environment's names, one a line. */
static char *attach_config(const struct collect_opts *o, const struct collection *c,
			   const char *agent_path)
{
	size_t size = 3 * PATH_MAX + 1024;
	char *buf = malloc(size);
	int n;

	if (!buf)
		return NULL;
	n = snprintf(buf, size,
		     "%s=%s\n%s=%s\n%s=%llu\n%s=%u\n%s=%s\n%s=0\n%s=%llu\n%s=%llu\n%s=%d\n%s=%d\n"
		     "%s=%d\n",
		     AGENT_ENV_RESULT_DIR, c->dir, AGENT_ENV_AGENT, agent_path,
		     AGENT_ENV_INTERVAL_NS, (unsigned long long)o->interval_ns,
		     AGENT_ENV_STACK_DEPTH, o->stack_depth, AGENT_ENV_SAMPLING_CLOCK,
		     o->task_clock ? "task-clock" : "timer", AGENT_ENV_DURATION_NS,
		     AGENT_ENV_START_NS, (unsigned long long)c->start_mono, AGENT_ENV_DATA_LIMIT,
		     (unsigned long long)(o->data_limit_mb * 1048576.0), AGENT_ENV_FOLLOW_CHILD,
		     o->follow_child ? 1 : 0, AGENT_ENV_RANK, c->rank, AGENT_ENV_LAUNCHER_PID,
		     (int)getpid());
	if (n > 0 && (size_t)n < size && o->signo)
		snprintf(buf + n, size - (size_t)n, "%s=%d\n", AGENT_ENV_SIGNAL, o->signo);
	return buf;
}

/* What pcollect_attach() answered (0 or -errno): pcollect's exit code, told. */
static int attach_answer(pid_t pid, long rc)
{
	if (rc == -EBUSY) {
		log_error("cannot attach to process %d: it is being profiled already", (int)pid);
		return EXIT_RUNTIME;
	}
	if (rc) {
		log_error("cannot attach to process %d: its agent could not start: %s (its log in "
			  "the result's log/ says more)",
			  (int)pid, strerror(-(int)rc));
		return EXIT_RUNTIME;
	}
	return 0;
}

/*
 * Stop a thread of pid, call dlopen(agent) and pcollect_attach(config) in it, give it back.
 * Returns 0, or pcollect's exit code (told).
 */
static int inject_agent(pid_t pid, const char *agent_path, const char *config, uint64_t *held_ns)
{
	uint64_t dl, dlerr, attach, a_path, a_cfg, handle = 0, rc = 0, t0;
	char msg[512];
	struct inject in;
	int ret, code = 0;

	/* ptrace first: where it is refused, the process's maps cannot be read either. */
	t0 = mono_ns();
	ret = inject_stop(&in, pid);
	if (ret == -EPERM) {
		refused(pid, in.err);
		return EXIT_RUNTIME;
	}
	if (ret) {
		log_error("cannot attach to process %d: %s", (int)pid, in.err);
		return ret == -ESRCH ? EXIT_USAGE : EXIT_RUNTIME;
	}
	dl = inject_symbol(pid, "libc.so", "dlopen");
	dlerr = inject_symbol(pid, "libc.so", "dlerror");
	if (!dl) { /* C libraries before glibc 2.34 keep dlopen in libdl */
		dl = inject_symbol(pid, "libdl.so", "dlopen");
		dlerr = inject_symbol(pid, "libdl.so", "dlerror");
	}
	if (!dl) {
		log_error("cannot attach to process %d: it has no dynamic loader to load the agent "
			  "with (no dlopen in a C library: statically linked?)",
			  (int)pid);
		code = EXIT_USAGE;
		goto out;
	}
	log_debug("thread %d stopped after %d tries, %s", (int)in.tid, in.attempts,
		  (long long)in.regs.orig_rax >= 0 ? "in a system call" : "in user code");
	a_path = inject_put(&in, agent_path, strlen(agent_path) + 1);
	a_cfg = inject_put(&in, config, strlen(config) + 1);
	if (!a_path || !a_cfg) {
		log_error("cannot attach to process %d: no room on the stack of thread %d",
			  (int)pid, (int)in.tid);
		code = EXIT_RUNTIME;
		goto out;
	}
	if (inject_call(&in, dl, a_path, RTLD_NOW | RTLD_GLOBAL, &handle, CALL_TIMEOUT_MS)) {
		log_error("cannot attach to process %d: dlopen of the agent: %s", (int)pid, in.err);
		code = EXIT_RUNTIME;
		goto out;
	}
	if (!handle) {
		uint64_t s = 0;

		msg[0] = '\0';
		if (dlerr && !inject_call(&in, dlerr, 0, 0, &s, CALL_TIMEOUT_MS) && s)
			inject_read_string(&in, s, msg, sizeof(msg));
		log_error("cannot attach to process %d: it cannot load the agent '%s': %s",
			  (int)pid, agent_path, msg[0] ? msg : "dlopen failed");
		code = EXIT_RUNTIME;
		goto out;
	}
	attach = inject_symbol(pid, agent_path, "pcollect_attach");
	if (!attach) {
		log_error("cannot attach to process %d: the agent it loaded has no pcollect_attach",
			  (int)pid);
		code = EXIT_RUNTIME;
		goto out;
	}
	if (inject_call(&in, attach, a_cfg, 0, &rc, CALL_TIMEOUT_MS)) {
		log_error("cannot attach to process %d: pcollect_attach: %s", (int)pid, in.err);
		code = EXIT_RUNTIME;
		goto out;
	}
	code = attach_answer(pid, (int)rc);
out:
	if (inject_release(&in))
		log_error("process %d: thread %d could not be given back as it was: %s", (int)pid,
			  (int)in.tid, strerror(errno));
	*held_ns = mono_ns() - t0;
	return code;
}

/*
 * -target-loads-agent: the target, our caller (the Python module's pcollect.profile()), loads
 * the agent and calls pcollect_attach(config) itself. It reads "agent PATH", the
 * configuration's lines and an empty line from our stdout, and answers on our stdin
 * "attached RC" (pcollect_attach's return); later a line or the end of stdin ends sampling.
 */
static int handshake_agent(pid_t pid, const char *agent_path, const char *config)
{
	char line[64];
	long rc;

	if (printf("agent %s\n%s\n", agent_path, config) < 0 || fflush(stdout)) {
		log_error(
			"cannot attach to process %d: cannot write its configuration to stdout: %s",
			(int)pid, strerror(errno));
		return EXIT_RUNTIME;
	}
	if (!fgets(line, sizeof(line), stdin) || sscanf(line, "attached %ld", &rc) != 1) {
		log_error("cannot attach to process %d: it gave no 'attached RC' answer on stdin "
			  "(-target-loads-agent)",
			  (int)pid);
		return EXIT_RUNTIME;
	}
	return attach_answer(pid, rc);
}

/* Why sampling ends: the first of these. */
static const char *wait_end(pid_t pid, struct collection *c, const struct collect_opts *o)
{
	int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	bool resumed = !o->resume_after_ns;
	const char *why = NULL;

	while (!why) {
		struct pollfd p[2] = { { pidfd, POLLIN, 0 }, { 0, POLLIN, 0 } };
		int ready = pidfd >= 0 ? poll(p, o->target_loads_agent ? 2 : 1, 20) : 0;

		if (pidfd < 0)
			ready = (usleep(20000), kill(pid, 0) && errno == ESRCH);
		if (ready > 0 && (pidfd < 0 || p[0].revents))
			why = "exit";
		else if (ready > 0 && p[1].revents)
			why = "command"; /* -target-loads-agent: the caller's line, or its end */
		else if (stop_signal)
			why = stop_signal == SIGINT ? "interrupt" : "signal";
		else if (o->duration_ns && mono_ns() - c->start_mono >= o->duration_ns)
			why = "duration";
		else if (__atomic_load_n(&c->counter->control, __ATOMIC_ACQUIRE) &
			 AGENT_CONTROL_STOPPED)
			why = "command";
		else if (!resumed)
			resumed = collection_resume_due(c, o);
	}
	if (pidfd >= 0)
		close(pidfd);
	return why;
}

int attach_run(const struct collect_opts *o)
{
	char agent_path[PATH_MAX], *cmd_buf = NULL, *config = NULL;
	struct collect_opts ao = *o;
	pid_t pid = (pid_t)o->target_pid;
	struct collection c;
	struct sigaction sa, old_int, old_term, old_hup;
	const char *why;
	uint64_t held_ns = 0, deadline;
	int code, alive;

	if (pid == getpid() || (pid == getppid() && !o->target_loads_agent)) {
		log_error("cannot attach to process %d: it is pcollect or its caller", (int)pid);
		return EXIT_USAGE;
	}
	if (kill(pid, 0) && errno == ESRCH) {
		log_error("cannot attach to process %d: no such process", (int)pid);
		return EXIT_USAGE;
	}
	if (target_exited(pid)) {
		log_error("cannot attach to process %d: it has exited (a zombie its parent has not "
			  "reaped yet)",
			  (int)pid);
		return EXIT_USAGE;
	}
	if ((why = target_kind(pid))) {
		log_error("cannot attach to process %d: %s (the agent is a 64-bit library)",
			  (int)pid, why);
		return EXIT_USAGE;
	}
	if (launcher_find_agent(agent_path, sizeof(agent_path))) {
		log_error("cannot find the agent 'libpcollect-agent.so' beside '/proc/self/exe' or "
			  "in its library directory");
		return EXIT_RUNTIME;
	}
	if (!same_file_there(pid, agent_path)) {
		log_error("cannot attach to process %d: it does not see the agent at '%s' (another "
			  "mount namespace, such as a container's: run pcollect inside it)",
			  (int)pid, agent_path);
		return EXIT_RUNTIME;
	}
	ao.argv = target_argv(pid, &cmd_buf, &ao.argc);
	if (!ao.argv) {
		log_error("cannot attach to process %d: %s", (int)pid, strerror(ENOMEM));
		return EXIT_RUNTIME;
	}
	if ((code = collection_begin(&c, &ao)))
		goto out;
	if (!same_file_there(pid, c.dir)) {
		log_error("cannot attach to process %d: it does not see the result directory '%s' "
			  "(another mount namespace: give -r a directory it shares)",
			  (int)pid, c.dir);
		collection_abandon(&c);
		code = EXIT_RUNTIME;
		goto out;
	}
	config = attach_config(&ao, &c, agent_path);
	if (!config) {
		collection_abandon(&c);
		code = EXIT_RUNTIME;
		goto out;
	}
	/* Ctrl-C, SIGTERM, SIGHUP end the sampling, never the target (it is not ours). */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	sigaction(SIGHUP, &sa, &old_hup);
	code = o->target_loads_agent ? handshake_agent(pid, agent_path, config)
				     : inject_agent(pid, agent_path, config, &held_ns);
	if (code) {
		collection_abandon(&c);
		goto restore;
	}
	log_debug("attached to process %d: one thread held %.3f ms", (int)pid, held_ns / 1e6);
	if (!o->quiet)
		log_info("attached to process %d (%s)%s", (int)pid, ao.argv[0],
			 o->duration_ns ? ""
					: ": Ctrl-C or 'pcollect -r DIR -command stop' ends it");
	why = wait_end(pid, &c, o);
	/* Every process of the collection finishes its streams and lets go. */
	data_counter_command(c.counter, AGENT_CONTROL_STOPPED | AGENT_CONTROL_DETACH, 0);
	deadline = mono_ns() + DETACH_WAIT_NS;
	while ((alive = data_counter_members_alive(c.counter)) && mono_ns() < deadline)
		usleep(5000);
	if (alive)
		log_warn("%d process(es) of the collection did not let go within %lld s: their "
			 "last samples may be missing",
			 alive, DETACH_WAIT_NS / 1000000000);
	log_debug("detached (%s)", why);
	meta_set(c.meta, "attach_end", why);
	meta_setf(c.meta, "attach_held_ns", "%llu", (unsigned long long)held_ns);
	if (!o->quiet)
		log_info("%s from process %d%s", "detached", (int)pid,
			 !strcmp(why, "exit") ? ": it ended" : "");
	collection_end(&c, &ao);
	code = EXIT_OK;
restore:
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	sigaction(SIGHUP, &old_hup, NULL);
out:
	free(config);
	free(ao.argv);
	free(cmd_buf);
	return code;
}
