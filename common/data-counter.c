/* SPDX-License-Identifier: MIT */
/* The page all processes of a collection share: the raw-data counter and the control word. */
#include "common/data-counter.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "common/proc-status.h"
#include "common/raw-window.h"
#include "common/result-dir.h"

int data_counter_path(char *buf, size_t size, const char *dir)
{
	int n = result_path(buf, size, dir, RESULT_PATH_DATA_USED, 0, 0, NULL, NULL);

	return n < 0 ? n : 0;
}

/*
 * A new counter, whole: made under a name of this process's, its blocks reserved, then
 * linked to path, which either appears whole or is someone else's already (EEXIST: every
 * launcher of a node's ranks shares the one the first made). Returns its descriptor, or
 * -EEXIST, or -errno.
 */
static int counter_create(const char *path, mode_t mode)
{
	char tmp[4096];
	int fd, err, n = snprintf(tmp, sizeof(tmp), "%s.%d", path, (int)getpid());

	if (n < 0 || (size_t)n >= sizeof(tmp))
		return -ENAMETOOLONG;
	unlink(tmp); /* one a killed process of this pid left */
	fd = result_create_file(tmp, mode);
	if (fd < 0)
		return fd;
	/*
	 * Its blocks reserved, not a hole: every process stores into the mapping, and a store
	 * into a page a full disk cannot give is a SIGBUS, in the program. For the same reason
	 * a file shorter than the counter (its reservation failed) is not mapped.
	 */
	err = raw_window_reserve(fd, 0, sizeof(struct agent_data_counter));
	if (!err && link(tmp, path))
		err = -errno;
	unlink(tmp);
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

struct agent_data_counter *data_counter_map(const char *dir, int create)
{
	char path[4096];
	struct stat st;
	void *p = MAP_FAILED;
	int fd = -1, err;

	if ((err = data_counter_path(path, sizeof(path), dir)))
		goto out;
	/* The agent maps it and closes the descriptor at once: nothing of ours stays open. */
	if (create)
		fd = counter_create(path, result_file_mode(dir));
	if (!create || fd == -EEXIST) {
		fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
		if (fd < 0)
			fd = -errno;
	}
	if (fd < 0) {
		err = fd;
		goto out;
	}
	if (fstat(fd, &st))
		err = -errno;
	else if (!S_ISREG(st.st_mode) || (uint64_t)st.st_size < sizeof(struct agent_data_counter))
		err = -ENOSPC;
	if (!err) {
		p = mmap(NULL, sizeof(struct agent_data_counter), PROT_READ | PROT_WRITE,
			 MAP_SHARED, fd, 0);
		err = p == MAP_FAILED ? -errno : 0;
	}
	close(fd);
out:
	errno = -err;
	return err ? NULL : p;
}

uint32_t data_counter_command(struct agent_data_counter *c, uint32_t set, uint32_t clear)
{
	uint32_t old = __atomic_load_n(&c->control, __ATOMIC_RELAXED), want, seq;

	do
		want = (old | set) & ~clear;
	while (!__atomic_compare_exchange_n(&c->control, &old, want, false, __ATOMIC_SEQ_CST,
					    __ATOMIC_RELAXED));
	seq = __atomic_add_fetch(&c->control_seq, 1, __ATOMIC_SEQ_CST);
	/* A shared (not private) futex: the waiters are other processes mapping the same file. */
	syscall(SYS_futex, &c->control_seq, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
	return seq;
}

void data_counter_wait(struct agent_data_counter *c, uint32_t seq, int64_t timeout_ns)
{
	struct timespec ts = { (time_t)(timeout_ns / 1000000000), (long)(timeout_ns % 1000000000) };

	syscall(SYS_futex, &c->control_seq, FUTEX_WAIT, seq, timeout_ns < 0 ? NULL : &ts, NULL, 0);
}

uint64_t data_counter_start_ticks(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long long ticks = 0;
	int field;

	/* Our own through /proc/self: a /proc of another pid namespace numbers us otherwise. */
	if (pid == getpid())
		snprintf(path, sizeof(path), "/proc/self/stat");
	else
		snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (proc_read_small(path, buf, sizeof(buf)) <= 0)
		return 0;
	/* The name in parentheses may hold spaces and parentheses: count from the last ')'. */
	p = strrchr(buf, ')');
	if (!p)
		return 0;
	/* Field 3 (state) follows; the start time is field 22. A zombie has not started. */
	if (p[1] == ' ' && p[2] == 'Z')
		return 0;
	for (field = 2; *p && field < 22; p++)
		if (*p == ' ')
			field++;
	if (sscanf(p, "%llu", &ticks) != 1)
		return 0;
	return ticks;
}

int data_counter_join(struct agent_data_counter *c, pid_t pid)
{
	uint64_t ticks = data_counter_start_ticks(pid);
	size_t i;

	if (!ticks)
		return -ESRCH;
	for (i = 0; i < AGENT_MAX_MEMBERS; i++)
		if (__atomic_load_n(&c->members[i].pid, __ATOMIC_RELAXED) == pid) {
			/* An exec keeps the pid: the entry stays this process's. */
			__atomic_store_n(&c->members[i].start_ticks, ticks, __ATOMIC_RELAXED);
			return (int)i;
		}
	for (i = 0; i < AGENT_MAX_MEMBERS; i++) {
		int32_t free_pid = 0;

		/* The entry is ours once the pid is in; a reader takes a start time of 0 (not
		   stored yet) for this process's. */
		if (__atomic_load_n(&c->members[i].pid, __ATOMIC_RELAXED) ||
		    !__atomic_compare_exchange_n(&c->members[i].pid, &free_pid, pid, false,
						 __ATOMIC_SEQ_CST, __ATOMIC_RELAXED))
			continue;
		__atomic_store_n(&c->members[i].applied,
				 __atomic_load_n(&c->control_seq, __ATOMIC_SEQ_CST),
				 __ATOMIC_SEQ_CST);
		__atomic_store_n(&c->members[i].start_ticks, ticks, __ATOMIC_SEQ_CST);
		return (int)i;
	}
	return -ENOSPC;
}

void data_counter_leave(struct agent_data_counter *c, pid_t pid)
{
	size_t i;

	for (i = 0; i < AGENT_MAX_MEMBERS; i++) {
		int32_t p = pid;

		__atomic_compare_exchange_n(&c->members[i].pid, &p, 0, false, __ATOMIC_SEQ_CST,
					    __ATOMIC_RELAXED);
	}
}

/*
 * A member of a pid namespace below ours (pcollect -target-pid into a container) entered
 * the pid it knows itself by: the process here that started at ticks and is pid there, found
 * once by a look through /proc and remembered; 0 when there is none.
 */
static pid_t member_here(pid_t pid, uint64_t ticks)
{
	static struct {
		pid_t pid, here;
		uint64_t ticks;
	} seen[AGENT_MAX_MEMBERS];
	static size_t nseen;
	struct dirent *e;
	pid_t here = 0;
	size_t i;
	DIR *d;

	for (i = 0; i < nseen; i++)
		if (seen[i].pid == pid && seen[i].ticks == ticks)
			return data_counter_start_ticks(seen[i].here) == ticks ? seen[i].here : 0;
	if (!ticks || !(d = opendir("/proc")))
		return 0;
	while (!here && (e = readdir(d))) {
		pid_t n = (pid_t)atoi(e->d_name);
		char status[64];

		snprintf(status, sizeof(status), "/proc/%d/status", (int)n);
		if (n > 0 && n != pid && data_counter_start_ticks(n) == ticks &&
		    proc_status_inner_id(status, "NStgid:") == pid)
			here = n;
	}
	closedir(d);
	if (here && nseen < AGENT_MAX_MEMBERS) {
		seen[nseen].pid = pid;
		seen[nseen].ticks = ticks;
		seen[nseen++].here = here;
	}
	return here;
}

int data_counter_members_alive(struct agent_data_counter *c)
{
	int alive = 0;
	size_t i;

	for (i = 0; i < AGENT_MAX_MEMBERS; i++) {
		int32_t pid = __atomic_load_n(&c->members[i].pid, __ATOMIC_SEQ_CST);
		uint64_t ticks, want;

		if (!pid)
			continue;
		ticks = data_counter_start_ticks(pid);
		want = __atomic_load_n(&c->members[i].start_ticks, __ATOMIC_SEQ_CST);
		if ((ticks && (ticks == want || !want)) || member_here(pid, want))
			alive++;
		else
			__atomic_compare_exchange_n(&c->members[i].pid, &pid, 0, false,
						    __ATOMIC_SEQ_CST, __ATOMIC_RELAXED);
	}
	return alive;
}

void data_counter_applied(struct agent_data_counter *c, int index, pid_t pid, uint32_t seq)
{
	if (index >= 0 && index < AGENT_MAX_MEMBERS &&
	    __atomic_load_n(&c->members[index].pid, __ATOMIC_RELAXED) == pid)
		__atomic_store_n(&c->members[index].applied, seq, __ATOMIC_RELEASE);
}

int data_counter_wait_applied(struct agent_data_counter *c, uint32_t seq, int64_t timeout_ns)
{
	struct timespec ts = { 0, 2000000 };
	int64_t waited = 0;
	int behind;

	for (;;) {
		size_t i;

		behind = 0;
		data_counter_members_alive(c); /* the entries of the dead cleared */
		for (i = 0; i < AGENT_MAX_MEMBERS; i++) {
			uint32_t applied;

			if (!__atomic_load_n(&c->members[i].pid, __ATOMIC_ACQUIRE))
				continue;
			applied = __atomic_load_n(&c->members[i].applied, __ATOMIC_ACQUIRE);
			if ((int32_t)(applied - seq) < 0)
				behind++;
		}
		if (!behind || waited >= timeout_ns)
			return behind;
		nanosleep(&ts, NULL);
		waited += ts.tv_nsec;
	}
}

int data_counter_hold(const char *dir)
{
	char path[4096];
	int fd, err;

	if ((err = data_counter_path(path, sizeof(path), dir)))
		return err;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	if (flock(fd, LOCK_SH)) {
		err = -errno;
		close(fd);
		return err;
	}
	return fd;
}

bool data_counter_collectors_gone(const char *dir)
{
	char path[4096];
	bool gone;
	int fd;

	if (data_counter_path(path, sizeof(path), dir))
		return false;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return false;
	/* An exclusive lock is had only when no collector holds its shared one. */
	gone = !flock(fd, LOCK_EX | LOCK_NB);
	close(fd); /* and the lock with it */
	return gone;
}
