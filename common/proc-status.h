/* SPDX-License-Identifier: MIT */
/* Small /proc files read whole, and the ids of /proc/<pid>/status. */
#ifndef PCOLLECT_COMMON_PROC_STATUS_H
#define PCOLLECT_COMMON_PROC_STATUS_H

#include <stddef.h>
#include <sys/types.h>

/*
 * Read the file at path (a /proc file of a page or so: status, stat) into buf, NUL-terminated,
 * at most size - 1 bytes in one read(): its length, or -errno. No allocation, async-safe.
 */
ssize_t proc_read_small(const char *path, char *buf, size_t size);

/*
 * The last id on the line that begins with key ("NSpid:", "NStgid:") of the status file at
 * path: the task's id in its own (innermost) pid namespace, whatever the namespace /proc was
 * mounted for. 0 when there is none.
 */
pid_t proc_status_inner_id(const char *path, const char *key);

#endif
