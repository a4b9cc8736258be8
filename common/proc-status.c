/* SPDX-License-Identifier: MIT */
/* Small /proc files read whole, and the ids of /proc/<pid>/status. */
#include "common/proc-status.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

ssize_t proc_read_small(const char *path, char *buf, size_t size)
{
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	if (n < 0)
		n = -errno;
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	return n;
}

pid_t proc_status_inner_id(const char *path, const char *key)
{
	char buf[4096], *p, *end;
	size_t klen = strlen(key);
	long last = 0;

	if (proc_read_small(path, buf, sizeof(buf)) <= 0)
		return 0;
	for (p = buf; p && strncmp(p, key, klen); p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		;
	for (p = p ? p + klen : NULL; p && *p && *p != '\n'; p = end) {
		long v = strtol(p, &end, 10);

		if (end == p)
			break;
		last = v;
	}
	return (pid_t)last;
}
