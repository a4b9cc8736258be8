/* SPDX-License-Identifier: MIT */
/* pcollect -r DIR -command pause|resume|stop: steer a collection that runs, from another shell. */
#define LOG_DOMAIN "command"
#include <dirent.h>
#include <errno.h>
#include <limits.h>
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

/* True when a launcher of dir says it runs and is alive (meta/<pid>.meta, status running). */
static bool collection_running(const char *dir)
{
	char path[PATH_MAX];
	bool running = false;
	struct dirent *e;
	DIR *d;

	if (result_path(path, sizeof(path), dir, RESULT_PATH_META_DIR, 0, 0, NULL, NULL) < 0 ||
	    !(d = opendir(path)))
		return false;
	while (!running && (e = readdir(d))) {
		char file[PATH_MAX * 2];
		const char *status, *pid;
		struct meta m;

		if (!strstr(e->d_name, ".meta"))
			continue;
		snprintf(file, sizeof(file), "%s/%s", path, e->d_name);
		meta_init(&m);
		if (!meta_read_file(&m, file) && (status = meta_get(&m, "status")) &&
		    !strcmp(status, "running") && (pid = meta_get(&m, "launcher_pid")) &&
		    (kill((pid_t)atoi(pid), 0) == 0 || errno == EPERM))
			running = true;
		meta_release(&m);
	}
	closedir(d);
	return running;
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
	};
	struct agent_data_counter *c;
	struct stat st;
	uint32_t seq;
	int behind;
	size_t i;

	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(commands[i].name, command))
			break;
	if (i == sizeof(commands) / sizeof(commands[0])) {
		log_error("invalid value '%s' for option '-command': one of pause, resume, stop",
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
	if (!collection_running(result_dir)) {
		log_error("cannot %s collection '%s': no collection is running in it", command,
			  result_dir);
		return EXIT_RUNTIME;
	}
	c = data_counter_map(result_dir, 0);
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
