/* SPDX-License-Identifier: MIT */
/* A stream file written through MAP_SHARED windows, holding no descriptor between windows. */
#include "common/raw-window.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * Only system calls here (async-signal-safe): windows are rolled inside the sampling handler.
 * Each operation opens the file, does its work and closes it again, so the program's own
 * close(), dup2() and RLIMIT_NOFILE never meet a descriptor of ours, and the numbers its open()
 * returns are those it would get without us.
 */

static size_t page_size(void)
{
	static size_t page;

	if (!page)
		page = (size_t)sysconf(_SC_PAGESIZE);
	return page;
}

static uint64_t round_up(uint64_t v, uint64_t to)
{
	return (v + to - 1) / to * to;
}

static int fail(struct raw_window_file *f, const char *op, int err)
{
	f->error = err;
	f->error_op = op;
	return -err;
}

/*
 * The soft RLIMIT_NOFILE is process-wide: two threads raising it at once would each take the
 * other's raised value for the one to put back, leave the limit raised for good, or lower it
 * under the other's open (one of them then has no descriptor, and its thread no stream). One
 * borrower at a time, then, with every signal blocked while it holds the lock (a handler of
 * ours may borrow too); the lock holds the owner's pid, so one inherited from a fork or left
 * by a vfork child (whose borrower does not exist in this process) is taken over.
 */
static _Atomic pid_t limit_owner;

void raw_window_limit_lock(sigset_t *old)
{
	pid_t self = getpid(), owner;
	sigset_t all;

	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, old);
	for (;;) {
		owner = 0;
		if (atomic_compare_exchange_weak(&limit_owner, &owner, self))
			return;
		if (owner && owner != self &&
		    atomic_compare_exchange_weak(&limit_owner, &owner, self))
			return;
		sched_yield();
	}
}

void raw_window_limit_unlock(const sigset_t *old)
{
	atomic_store(&limit_owner, 0);
	sigprocmask(SIG_SETMASK, old, NULL);
}

/*
 * open() that gets a descriptor even when the program has used all of RLIMIT_NOFILE: the soft
 * limit is raised for the moment of the open when the hard limit allows (the number we get is
 * then one the program cannot have), then put back. Another borrower may still hold the
 * number just above the limit (it closes it when its window is mapped): the limit goes up one
 * at a time until a number is free, at most RAW_WINDOW_BORROW_MAX above.
 */
int raw_window_open(const char *path, int flags, mode_t mode)
{
	struct rlimit rl, more;
	int fd = open(path, flags, mode), errsv = EMFILE;
	sigset_t old;
	rlim_t extra;

	if (fd >= 0 || errno != EMFILE)
		return fd;
	raw_window_limit_lock(&old);
	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur >= rl.rlim_max) {
		raw_window_limit_unlock(&old);
		return errno = EMFILE, -1;
	}
	more = rl;
	for (extra = 1; extra <= RAW_WINDOW_BORROW_MAX && rl.rlim_cur + extra <= rl.rlim_max;
	     extra++) {
		more.rlim_cur = rl.rlim_cur + extra;
		if (setrlimit(RLIMIT_NOFILE, &more))
			break;
		fd = open(path, flags, mode);
		errsv = errno;
		if (fd >= 0 || errsv != EMFILE)
			break;
	}
	setrlimit(RLIMIT_NOFILE, &rl);
	raw_window_limit_unlock(&old);
	errno = errsv;
	return fd;
}

int raw_window_reserve(int fd, uint64_t off, uint64_t len)
{
	static const uint8_t zeros[4096];
	uint64_t at;

	if (!fallocate(fd, 0, (off_t)off, (off_t)len))
		return 0;
	if (errno != EOPNOTSUPP && errno != ENOSYS)
		return -errno;
	/* A file system without fallocate (some network ones): write the zeros. */
	for (at = off; at < off + len;) {
		size_t n =
			off + len - at < sizeof(zeros) ? (size_t)(off + len - at) : sizeof(zeros);
		ssize_t w = pwrite(fd, zeros, n, (off_t)at);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		at += (uint64_t)w;
	}
	return 0;
}

/* The largest file size the program may make (RLIMIT_FSIZE), or UINT64_MAX. */
static uint64_t size_limit(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_FSIZE, &rl) || rl.rlim_cur == RLIM_INFINITY)
		return UINT64_MAX;
	return (uint64_t)rl.rlim_cur;
}

int raw_window_create(struct raw_window_file *f, const char *path, mode_t mode, size_t window)
{
	size_t len = strlen(path);
	int fd;

	memset(f, 0, sizeof(*f));
	if (len >= sizeof(f->path))
		return fail(f, "create", ENAMETOOLONG);
	memcpy(f->path, path, len + 1);
	f->window = round_up(window < page_size() ? page_size() : window, page_size());
	fd = raw_window_open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode);
	if (fd < 0)
		return fail(f, "create", errno);
	/* The program's umask must not widen or narrow what the result's mode says. */
	if (fchmod(fd, mode)) {
		int errsv = errno;

		close(fd);
		return fail(f, "create", errsv);
	}
	close(fd);
	return 0;
}

int raw_window_next(void *ctx, uint64_t off, size_t min, uint8_t **base, size_t *size)
{
	struct raw_window_file *f = ctx;
	uint64_t limit = size_limit();
	uint64_t want = round_up(min > f->window ? min : f->window, page_size());
	uint64_t need = round_up(min, page_size());
	void *map;
	int fd, ret;

	/* Past RLIMIT_FSIZE the kernel would send SIGXFSZ to the program: stop short of it. */
	if (off >= limit || limit - off < need)
		return fail(f, "map", EFBIG);
	if (limit - off < want)
		want = (limit - off) / page_size() * page_size();
	fd = raw_window_open(f->path, O_RDWR | O_CLOEXEC | O_NOFOLLOW, 0);
	if (fd < 0)
		return fail(f, "open", errno);
	ret = raw_window_reserve(fd, off, want);
	if (ret) {
		close(fd);
		return fail(f, "reserve", -ret);
	}
	map = mmap(NULL, (size_t)want, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)off);
	ret = map == MAP_FAILED ? errno : 0;
	close(fd);
	if (ret)
		return fail(f, "map", ret);
	if (f->map)
		munmap(f->map, f->map_size);
	f->map = map;
	f->map_size = (size_t)want;
	f->map_off = off;
	*base = map;
	*size = (size_t)want;
	return 0;
}

int raw_window_cut(struct raw_window_file *f, uint64_t size)
{
	int fd = raw_window_open(f->path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW, 0), ret = 0;

	if (fd < 0)
		return fail(f, "open", errno);
	if (ftruncate(fd, (off_t)size))
		ret = fail(f, "truncate", errno);
	close(fd);
	return ret;
}

int raw_window_regrow(struct raw_window_file *f)
{
	int fd, ret;

	if (!f->map)
		return 0;
	fd = raw_window_open(f->path, O_RDWR | O_CLOEXEC | O_NOFOLLOW, 0);
	if (fd < 0)
		return fail(f, "open", errno);
	ret = raw_window_reserve(fd, f->map_off, f->map_size);
	close(fd);
	return ret ? fail(f, "reserve", -ret) : 0;
}

int raw_window_close(struct raw_window_file *f, uint64_t size)
{
	raw_window_drop(f);
	return f->path[0] ? raw_window_cut(f, size) : 0;
}

void raw_window_drop(struct raw_window_file *f)
{
	if (f->map)
		munmap(f->map, f->map_size);
	f->map = NULL;
	f->map_size = 0;
}
