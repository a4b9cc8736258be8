/* SPDX-License-Identifier: MIT */
/* Whether a result is still being collected: a launcher of it runs on this host. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/meta.h"
#include "common/result-dir.h"

/* pid runs here and is a pcollect (not another program that got the number since). */
static bool launcher_alive(long pid)
{
	char path[64], comm[32] = "";
	ssize_t n;
	int fd;

	if (pid <= 0 || pid > INT_MAX || (kill((pid_t)pid, 0) && errno != EPERM))
		return false;
	snprintf(path, sizeof(path), "/proc/%ld/comm", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return true; /* no /proc to ask: the pid is believed */
	n = read(fd, comm, sizeof(comm) - 1);
	close(fd);
	comm[n > 0 ? n : 0] = '\0';
	return !strncmp(comm, "pcollect", 8);
}

long result_dir_collecting(const char *dir)
{
	char meta_dir[PATH_MAX], path[PATH_MAX + 256], host[256];
	struct dirent *e;
	long found = 0;
	DIR *d;

	if (result_path(meta_dir, sizeof(meta_dir), dir, RESULT_PATH_META_DIR, 0, 0, NULL, NULL) <
		    0 ||
	    !(d = opendir(meta_dir)))
		return 0;
	result_short_hostname(host, sizeof(host));
	while (!found && (e = readdir(d))) {
		size_t len = strlen(e->d_name);
		const char *status, *pid, *where;
		struct meta m;

		if (e->d_name[0] == '.' || len < 6 || strcmp(e->d_name + len - 5, ".meta"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", meta_dir, e->d_name);
		meta_init(&m);
		if (!meta_read_file(&m, path)) {
			status = meta_get(&m, "status");
			pid = meta_get(&m, "launcher_pid");
			where = meta_get(&m, "host");
			/* A launcher on another host of a parallel job cannot be asked. */
			if (status && !strcmp(status, "running") && pid &&
			    (!where || !strcmp(where, host)) && launcher_alive(atol(pid)))
				found = atol(pid);
		}
		meta_release(&m);
	}
	closedir(d);
	return found;
}
