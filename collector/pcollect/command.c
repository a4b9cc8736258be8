/* SPDX-License-Identifier: MIT */
/* pcollect -r DIR -command pause|resume|stop|snapshot: steer a collection that runs, from another
 * shell. */
#define LOG_DOMAIN "command"
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "common/data-counter.h"
#include "collector/pcollect/launcher.h"
#include "common/log.h"
#include "common/meta.h"
#include "common/result-dir.h"

#define OBEY_WAIT_NS 5000000000ll /* ns: how long -command waits for every process to obey */

/*
 * 1 when a launcher of dir says it runs and is alive (meta/<pid>.meta, status running), 0
 * when none does, -errno when its metadata cannot be read (-EACCES: another user's result).
 * *ring_ns gets its -ring-buffer (0: none).
 */
static int collection_running(const char *dir, uint64_t *ring_ns)
{
	char path[PATH_MAX];
	int running = 0;
	struct dirent *e;
	DIR *d;

	if (result_path(path, sizeof(path), dir, RESULT_PATH_META_DIR, 0, 0, NULL, NULL) < 0)
		return 0;
	if (!(d = opendir(path)))
		return errno == ENOENT || errno == ENOTDIR ? 0 : -errno;
	while (running <= 0 && (e = readdir(d))) {
		char file[PATH_MAX * 2];
		const char *status, *pid;
		struct meta m;
		int rc;

		if (!strstr(e->d_name, ".meta"))
			continue;
		snprintf(file, sizeof(file), "%s/%s", path, e->d_name);
		meta_init(&m);
		if ((rc = meta_read_file(&m, file)) == -EACCES || rc == -EPERM)
			running = rc;
		else if (!rc && (status = meta_get(&m, "status")) && !strcmp(status, "running") &&
			 (pid = meta_get(&m, "launcher_pid")) &&
			 (kill((pid_t)atoi(pid), 0) == 0 || errno == EPERM)) {
			const char *ring = meta_get(&m, "ring_buffer_ns");

			*ring_ns = ring ? strtoull(ring, NULL, 10) : 0;
			running = 1;
		}
		meta_release(&m);
	}
	closedir(d);
	return running;
}

/*
 * -command refused by the system (errnum: EACCES, EPERM): whose the result is, never "no
 * collection is running", which is not ours to know. Returns the exit code.
 */
static int refused(const char *command, const char *dir, const struct stat *st, int errnum)
{
	struct passwd *pw = getpwuid(st->st_uid);
	char owner[64];

	if (pw)
		snprintf(owner, sizeof(owner), "%s", pw->pw_name);
	else
		snprintf(owner, sizeof(owner), "%u", (unsigned)st->st_uid);
	log_error("cannot %s collection '%s': %s: the result is user %s's (only its owner or "
		  "root can steer its collection)",
		  command, dir, strerror(errnum), owner);
	return EXIT_RUNTIME;
}

int collect_command(const char *result_dir, const char *command, bool quiet)
{
	static const struct {
		const char *name, *done;
		uint32_t set, clear;
	} commands[] = {
		{ "pause", "paused", AGENT_CONTROL_PAUSED, 0 },
		{ "resume", "resumed", 0, AGENT_CONTROL_PAUSED },
		{ "stop", "stopped", AGENT_CONTROL_STOPPED, 0 },
		{ "snapshot", NULL, 0, 0 }, /* made here, ring.c */
	};
	struct agent_data_counter *c;
	struct stat st;
	uint64_t ring_ns = 0;
	uint32_t seq;
	int behind, running;
	size_t i;

	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(commands[i].name, command))
			break;
	if (i == sizeof(commands) / sizeof(commands[0])) {
		log_error(
			"invalid value '%s' for option '-command': one of pause, resume, stop, snapshot",
			command);
		return EXIT_USAGE;
	}
	if (!result_dir) {
		log_error("option '-command' needs the collection's result directory: pcollect -r "
			  "DIR -command %s",
			  command);
		return EXIT_USAGE;
	}
	if (stat(result_dir, &st) || !S_ISDIR(st.st_mode)) {
		log_error("cannot %s collection '%s': %s", command, result_dir,
			  errno ? strerror(errno) : "not a directory");
		return EXIT_USAGE;
	}
	if ((running = collection_running(result_dir, &ring_ns)) == -EACCES || running == -EPERM)
		return refused(command, result_dir, &st, -running);
	if (running < 0) {
		log_error("cannot %s collection '%s': cannot read its metadata: %s", command,
			  result_dir, strerror(-running));
		return EXIT_RUNTIME;
	}
	if (!running) {
		log_error("cannot %s collection '%s': no collection is running in it", command,
			  result_dir);
		return EXIT_RUNTIME;
	}
	if (!commands[i].done)
		return ring_snapshot(result_dir, ring_ns, quiet);
	c = data_counter_map(result_dir, 0);
	if (!c && (errno == EACCES || errno == EPERM))
		return refused(command, result_dir, &st, errno);
	if (!c) {
		log_error("cannot %s collection '%s': cannot map its control page: %s", command,
			  result_dir, strerror(errno));
		return EXIT_RUNTIME;
	}
	seq = data_counter_command(c, commands[i].set, commands[i].clear);
	/* Return once every process of the collection obeyed: sampling is paused now. */
	behind = data_counter_wait_applied(c, seq, OBEY_WAIT_NS);
	munmap(c, sizeof(*c));
	if (behind)
		log_warn("%d process(es) of collection '%s' did not answer within %lld s: they "
			 "obey when their control thread runs",
			 behind, result_dir, OBEY_WAIT_NS / 1000000000);
	if (!quiet)
		log_info("collection '%s' %s", result_dir, commands[i].done);
	return EXIT_OK;
}
