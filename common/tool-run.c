/* SPDX-License-Identifier: MIT */
/* Find and run a sibling tool (common/tool-run.h). */
#define LOG_DOMAIN "tool"
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/log.h"
#include "common/tool-run.h"

extern char **environ;

int tool_exe_dir(char *dir, size_t size)
{
	ssize_t n = readlink("/proc/self/exe", dir, size - 1);
	char *slash;

	if (n <= 0)
		return -errno;
	dir[n] = '\0';
	slash = strrchr(dir, '/');
	if (!slash)
		return -ENOENT;
	*slash = '\0';
	return 0;
}

/* The build tree's directory of each tool: its component's. */
static const char *tool_component(const char *name)
{
	if (!strcmp(name, "pfinalize"))
		return "finalizer";
	if (!strcmp(name, "preport"))
		return "report";
	if (!strcmp(name, "pcollect"))
		return "collector";
	return NULL;
}

int tool_find(const char *name, char *path, size_t size)
{
	const char *component = tool_component(name);
	char dir[PATH_MAX], cand[PATH_MAX + 64];
	int i, n;

	if (tool_exe_dir(dir, sizeof(dir)))
		return -ENOENT;
	for (i = 0; i < 2; i++) {
		if (i == 0)
			n = snprintf(cand, sizeof(cand), "%s/%s", dir, name);
		else if (component)
			n = snprintf(cand, sizeof(cand), "%s/../%s/%s", dir, component, name);
		else
			break;
		if (n < 0 || (size_t)n >= sizeof(cand))
			continue;
		if (access(cand, X_OK)) {
			log_debug("no %s at '%s': %s", name, cand, strerror(errno));
			continue;
		}
		if (realpath(cand, path) && strlen(path) < size)
			return 0;
	}
	return -ENOENT;
}

pid_t tool_spawn(const char *name, char *const argv[], int err_fd)
{
	posix_spawn_file_actions_t fa;
	char path[PATH_MAX];
	pid_t pid;
	int ret;

	if (tool_find(name, path, sizeof(path)))
		return -ENOENT;
	log_debug("running '%s'", path);
	if ((ret = posix_spawn_file_actions_init(&fa)))
		return -ret;
	if (err_fd >= 0 && (ret = posix_spawn_file_actions_adddup2(&fa, err_fd, STDERR_FILENO))) {
		posix_spawn_file_actions_destroy(&fa);
		return -ret;
	}
	ret = posix_spawn(&pid, path, &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	return ret ? -ret : pid;
}

int tool_wait(pid_t pid, pid_t *ended)
{
	int status;
	pid_t p;

	while ((p = waitpid(pid, &status, 0)) < 0)
		if (errno != EINTR)
			return -errno;
	if (ended)
		*ended = p;
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

int tool_run(const char *name, char *const argv[])
{
	pid_t pid = tool_spawn(name, argv, -1);

	return pid < 0 ? (int)pid : tool_wait(pid, NULL);
}

const char *tool_speaks_as(const char *argv0, const char *own)
{
	const char *base = argv0 ? strrchr(argv0, '/') : NULL;

	base = base ? base + 1 : argv0;
	if (base &&
	    (!strcmp(base, "pcollect") || !strcmp(base, "preport") || !strcmp(base, "pfinalize")))
		return base;
	return own;
}
