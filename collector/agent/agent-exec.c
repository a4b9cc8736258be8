/* SPDX-License-Identifier: MIT */
/* The agent across exec and spawn: streams finished first, the agent kept in the new image. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "collector/agent/agent-private.h"
#include "common/preload.h"

extern char **environ;

/*
 * A vfork() child shares the parent's memory until it execs: it must not touch the agent's
 * state (the parent's other threads go on using it). fork() children have their pid set by
 * the atfork handler, so a pid that differs from ours means vfork (or a raw clone).
 */
bool agent_in_vfork_child(void)
{
	return agent.active && (pid_t)syscall(SYS_getpid) != agent.pid;
}

/*
 * A new environment in one anonymous mapping (no malloc: this may run in a vfork child):
 * envp without PCOLLECT_* (but the start-up hook's settings) and LD_PRELOAD, then LD_PRELOAD with
 * the agent first and the program's own preloads after it (a sanitizer runtime ahead of it:
 * preload_compose()), then the agent's configuration. exec_var: a "PCOLLECT_EXEC=pid:gen" entry for
 * the new image, or NULL.
 */
struct env_buf {
	char **envp;
	void *map;
	size_t map_len;
};

static void env_release(struct env_buf *b);

static bool has_prefix(const char *s, const char *p)
{
	return !strncmp(s, p, strlen(p));
}

/* The user's settings of pcollect's Python start-up hook (api/python/sitecustomize.py), which
   the agent does not set: kept across an exec (a python3 that is a shell script). */
static bool env_program_knob(const char *s)
{
	return has_prefix(s, "PCOLLECT_ASYNCIO=") || has_prefix(s, "PCOLLECT_POOLS=");
}

static int env_build(struct env_buf *b, char *const envp[], const char *exec_var)
{
	const struct agent_config *c = &agent.cfg;
	const char *preload = NULL;
	size_t n = 0, strings = 0, i;
	char *p, *end, **out;
	int len;

	memset(b, 0, sizeof(*b));
	if (!c->agent_path[0])
		return -EINVAL;
	for (i = 0; envp && envp[i]; i++) {
		n++;
		strings += strlen(envp[i]) + 1;
		if (has_prefix(envp[i], "LD_PRELOAD="))
			preload = envp[i] + 11;
	}
	/* Our variables: two paths, the program's preloads and a few numbers. */
	strings += 2 * strlen(c->result_dir) + 2 * strlen(c->agent_path) + 2 * strlen(c->preload) +
		   strlen(c->mpi_shims) + 1024 + (preload ? strlen(preload) : 0) +
		   (exec_var ? strlen(exec_var) : 0);
	b->map_len = (n + 20) * sizeof(char *) + strings;
	b->map = mmap(NULL, b->map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (b->map == MAP_FAILED) {
		b->map = NULL;
		return -ENOMEM;
	}
	out = b->map;
	b->envp = out;
	p = (char *)(out + n + 20);
	end = (char *)b->map + b->map_len;
	for (i = 0; i < n; i++) {
		if ((has_prefix(envp[i], AGENT_ENV_PREFIX) && !env_program_knob(envp[i])) ||
		    has_prefix(envp[i], "LD_PRELOAD="))
			continue;
		*out++ = envp[i];
	}
	*out++ = p;
	p += snprintf(p, (size_t)(end - p), "LD_PRELOAD=");
	/* The room for it was counted above: ours, a ':' and the program's preloads. */
	len = preload_compose(p, (size_t)(end - p), c->preload, preload);
	if (len < 0) {
		env_release(b);
		return -ENAMETOOLONG;
	}
	p += len + 1;
#define VAR(...)                                                                                   \
	do {                                                                                       \
		*out++ = p;                                                                        \
		p += snprintf(p, (size_t)(end - p), __VA_ARGS__) + 1;                              \
	} while (0)
	VAR("%s=%s", AGENT_ENV_RESULT_DIR, c->result_dir);
	VAR("%s=%llu", AGENT_ENV_INTERVAL_NS, (unsigned long long)c->interval_ns);
	VAR("%s=%u", AGENT_ENV_STACK_DEPTH, c->stack_depth);
	VAR("%s=%llu", AGENT_ENV_DURATION_NS, (unsigned long long)c->duration_ns);
	VAR("%s=%llu", AGENT_ENV_START_NS, (unsigned long long)c->start_monotonic_ns);
	VAR("%s=%llu", AGENT_ENV_DATA_LIMIT, (unsigned long long)c->data_limit_bytes);
	if (c->ring_ns)
		VAR("%s=%llu", AGENT_ENV_RING_NS, (unsigned long long)c->ring_ns);
	VAR("%s=%d", AGENT_ENV_FOLLOW_CHILD, c->follow_child ? 1 : 0);
	VAR("%s=%d", AGENT_ENV_RANK, c->rank);
	VAR("%s=%s", AGENT_ENV_AGENT, c->agent_path);
	VAR("%s=%d", AGENT_ENV_LAUNCHER_PID, (int)c->launcher_pid);
	/* A signal the agent chose is chosen again by the new image, which may use it. */
	if (c->signo_forced)
		VAR("%s=%d", AGENT_ENV_SIGNAL, c->signo);
	if (c->mpi_shims[0]) {
		VAR("%s=%s", AGENT_ENV_MPI_SHIMS, c->mpi_shims);
		VAR("%s=%llu", AGENT_ENV_MPI_THRESHOLD, (unsigned long long)c->mpi_threshold_ns);
	}
	VAR("%s=%s", AGENT_ENV_SAMPLING_CLOCK, c->task_clock ? "task-clock" : "timer");
	if (c->waits)
		VAR("%s=%llu", AGENT_ENV_WAIT_THRESHOLD, (unsigned long long)c->wait_threshold_ns);
	if (c->memory && c->mem_sample_bytes)
		VAR("%s=bytes:%llu", AGENT_ENV_MEMORY, (unsigned long long)c->mem_sample_bytes);
	else if (c->memory)
		VAR("%s=exact", AGENT_ENV_MEMORY);
	if (exec_var)
		VAR("%s", exec_var);
#undef VAR
	*out = NULL;
	return 0;
}

static void env_release(struct env_buf *b)
{
	if (b->map)
		munmap(b->map, b->map_len);
	b->map = NULL;
}

/*
 * Before an exec that replaces this image: finish every thread's stream (THREAD_END, last
 * chunk closed, file cut to its length) and the process stream, stop every timer, and consume
 * any of our signals still pending, since pending signals survive exec and the new image's
 * default action would end the process. The windows go with the old image.
 */
static void exec_prepare(void)
{
	AGENT_BUSY;
	struct timespec zero = { 0, 0 };
	sigset_t mask, old;
	size_t i, n = atomic_load(&agent.nthreads);

	mem_image_end();
	for (i = 0; i < n; i++)
		if (agent.threads[i])
			agent_thread_suspend(agent.threads[i]);
	/* The image ends here when the exec succeeds: a failed one notes again at its end. */
	if (agent_sampling_stopped())
		agent_proc_note_cpu();
	agent_proc_suspend();
	sigemptyset(&mask);
	sigaddset(&mask, agent.cfg.signo);
	agent_real.pthread_sigmask(SIG_BLOCK, &mask, &old);
	while (agent_real.sigtimedwait(&mask, NULL, &zero) > 0)
		;
	agent_real.pthread_sigmask(SIG_SETMASK, &old, NULL);
}

static void exec_failed(void)
{
	size_t i, n = atomic_load(&agent.nthreads);

	agent_proc_resume();
	for (i = 0; i < n; i++)
		if (agent.threads[i])
			agent_thread_resume(agent.threads[i]);
	mem_image_resume();
}

/* How each exec call goes: the environment for the new image, streams finished, undo on failure. */
struct exec_ctx {
	struct env_buf env;
	char *const *envp;
	bool prepared;
	int saved_errno;
};

static void exec_begin(struct exec_ctx *x, char *const envp[])
{
	char var[64];
	bool vfork_child = agent_in_vfork_child();

	memset(x, 0, sizeof(*x));
	x->envp = envp;
	if (!agent.active)
		return; /* an idle image passes the environment on as it is */
	snprintf(var, sizeof(var), "%s=%d:%u", AGENT_ENV_EXEC, (int)agent.pid,
		 agent.generation + 1);
	if (env_build(&x->env, envp, vfork_child ? NULL : var) == 0)
		x->envp = x->env.envp;
	if (!vfork_child) {
		exec_prepare();
		x->prepared = true;
	}
}

static int exec_end(struct exec_ctx *x, int ret)
{
	int err = errno;

	if (x->prepared)
		exec_failed();
	env_release(&x->env);
	errno = err;
	return ret;
}

typedef int (*exec_fn)(const char *, char *const[], char *const[]);

/* execve and execvpe: *real (agent_real's, resolved first) with the agent's environment. */
static int exec_with(exec_fn *real, const char *path, char *const argv[], char *const envp[])
{
	struct exec_ctx x;

	if (!*real)
		agent_resolve();
	exec_begin(&x, envp);
	return exec_end(&x, (*real)(path, argv, x.envp));
}

AGENT_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	return exec_with(&agent_real.execve, path, argv, envp);
}

AGENT_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	return exec_with(&agent_real.execvpe, file, argv, envp);
}

AGENT_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
	struct exec_ctx x;

	if (!agent_real.fexecve)
		agent_resolve();
	exec_begin(&x, envp);
	return exec_end(&x, agent_real.fexecve(fd, argv, x.envp));
}

AGENT_EXPORT int execv(const char *path, char *const argv[])
{
	return execve(path, argv, environ);
}

AGENT_EXPORT int execvp(const char *file, char *const argv[])
{
	return execvpe(file, argv, environ);
}

/* The execl family: argv from the variable arguments, on the stack (vfork-safe). */
#define ARGS_FROM_VA(first, argv, envp_out, with_env)                                              \
	do {                                                                                       \
		va_list ap;                                                                        \
		size_t n_ = 1;                                                                     \
		va_start(ap, first);                                                               \
		while (va_arg(ap, char *))                                                         \
			n_++;                                                                      \
		va_end(ap);                                                                        \
		argv = alloca((n_ + 1) * sizeof(char *));                                          \
		argv[0] = (char *)first;                                                           \
		va_start(ap, first);                                                               \
		for (size_t i_ = 1; i_ <= n_; i_++)                                                \
			argv[i_] = va_arg(ap, char *);                                             \
		if (with_env)                                                                      \
			envp_out = va_arg(ap, char **);                                            \
		va_end(ap);                                                                        \
	} while (0)

AGENT_EXPORT int execl(const char *path, const char *arg, ...)
{
	char **argv, **envp = environ;

	ARGS_FROM_VA(arg, argv, envp, 0);
	return execve(path, argv, envp);
}

AGENT_EXPORT int execlp(const char *file, const char *arg, ...)
{
	char **argv, **envp = environ;

	ARGS_FROM_VA(arg, argv, envp, 0);
	return execvpe(file, argv, envp);
}

AGENT_EXPORT int execle(const char *path, const char *arg, ...)
{
	char **argv, **envp = environ;

	ARGS_FROM_VA(arg, argv, envp, 1);
	return execve(path, argv, envp);
}

/*
 * posix_spawn: the child is a new process; give it the agent even when the program passes an
 * environment of its own (children are profiled only with -follow-child).
 */
typedef int (*spawn_fn)(pid_t *, const char *, const posix_spawn_file_actions_t *,
			const posix_spawnattr_t *, char *const[], char *const[]);

/* posix_spawn and posix_spawnp: *real (resolved first) with the agent's environment. */
static int spawn_with(spawn_fn *real, pid_t *pid, const char *path,
		      const posix_spawn_file_actions_t *fa, const posix_spawnattr_t *attr,
		      char *const argv[], char *const envp[])
{
	struct env_buf b;
	int ret;

	if (!*real)
		agent_resolve();
	if (!agent.active || !agent.cfg.follow_child || env_build(&b, envp, NULL))
		return (*real)(pid, path, fa, attr, argv, envp);
	ret = (*real)(pid, path, fa, attr, argv, b.envp);
	env_release(&b);
	return ret;
}

AGENT_EXPORT int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa,
			     const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	return spawn_with(&agent_real.posix_spawn, pid, path, fa, attr, argv, envp);
}

AGENT_EXPORT int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *fa,
			      const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	return spawn_with(&agent_real.posix_spawnp, pid, file, fa, attr, argv, envp);
}
