/* SPDX-License-Identifier: MIT */
/* The agent's own descriptors (task-clock events): kept high, out of the program's close loops. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "collector/agent/agent-private.h"
#include "common/raw-window.h"

/*
 * Streams hold no descriptor (common/raw-window.h). Two kinds cannot be avoided: a thread's
 * perf task-clock event (-knob sampling-clock=task-clock), and the pipe libunwind uses to
 * check an address before it reads it. Both are put out of the program's way: at or above the
 * soft RLIMIT_NOFILE when the hard limit leaves room (numbers the program's open() never
 * returns), else just under it (F_DUPFD_CLOEXEC, downwards). close(), close_range(),
 * closefrom(), dup2() and dup3() are interposed so the program's close loops and dup2() onto
 * other numbers cannot take them:
 *   - close() of one of ours fails with EBADF, as it would without us (the program never had
 *     that number); ours stays open and sampling goes on;
 *   - close_range() and closefrom() close everything asked but ours;
 *   - dup2()/dup3() onto a task-clock event first moves the event to another number, then
 *     gives the program the number it asked for; onto libunwind's pipe, the pipe is given up
 *     (libunwind keeps its numbers and cannot be told new ones) and libunwind makes another.
 * A close_range(2) made with syscall() directly cannot be interposed: it closes ours, and that
 * thread's sampling stops (its task-clock event is gone; the handler reads nothing from it).
 *
 * libunwind keeps the two numbers of its pipe forever; when a read from the first fails it
 * closes both numbers (which may be the program's files by then) and makes a new pipe, and a
 * number the program took over would be read from and written to. While the agent unwinds
 * (agent_in_unwind), its read() of a number its pipe had before the program took it fails
 * with EBADF, its close() of such a number does nothing, and its pipe2() gets a pipe placed
 * like the others: libunwind touches no descriptor of the program. (A close_range(2) made
 * with syscall() that takes the pipe cannot be seen: then libunwind would use whatever the
 * program opens at those numbers.)
 */

#define FD_BITS 65536
static _Atomic uint8_t fds_ever[FD_BITS / 8]; /* ours at some time: signals name them */
static _Atomic uint8_t fds_held[FD_BITS / 8]; /* ours now */
static _Atomic int nheld;
static _Atomic int unwinder_pipe[2] = { -1, -1 }; /* libunwind's pipe, when ours */
static _Atomic int stale_pipe[2] = { -1, -1 };    /* its numbers after the program took one */

static void bit_set(_Atomic uint8_t *set, int fd)
{
	atomic_fetch_or(&set[fd / 8], (uint8_t)(1u << (fd % 8)));
}

static void bit_clear(_Atomic uint8_t *set, int fd)
{
	atomic_fetch_and(&set[fd / 8], (uint8_t) ~(1u << (fd % 8)));
}

static bool bit_test(_Atomic uint8_t *set, int fd)
{
	return fd >= 0 && fd < FD_BITS &&
	       (atomic_load_explicit(&set[fd / 8], memory_order_relaxed) & (1u << (fd % 8)));
}

bool agent_perf_fd_ours(int fd)
{
	return bit_test(fds_ever, fd);
}

static bool held(int fd)
{
	return atomic_load_explicit(&nheld, memory_order_relaxed) && bit_test(fds_held, fd);
}

static int real_close(int fd)
{
	if (!agent_real.close)
		agent_resolve();
	return agent_real.close ? agent_real.close(fd) : (int)syscall(SYS_close, fd);
}

/* The soft and hard RLIMIT_NOFILE, the soft one at most FD_BITS. */
static void nofile_limits(long *soft, long *hard)
{
	struct rlimit rl;

	*soft = *hard = FD_BITS;
	if (getrlimit(RLIMIT_NOFILE, &rl))
		return;
	if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < (rlim_t)FD_BITS)
		*soft = (long)rl.rlim_cur;
	if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < (rlim_t)FD_BITS)
		*hard = (long)rl.rlim_max;
}

/*
 * A copy of fd where the program's open() does not reach: at the soft RLIMIT_NOFILE or above
 * (the limit raised for the moment of the copy) when the hard limit allows, else the highest
 * free number under it, looking at most 256 numbers down; never avoid. Returns it, or -errno.
 */
static int dup_high(int fd, int avoid)
{
	long soft, hard, target;
	int nfd;

	nofile_limits(&soft, &hard);
	if (hard > soft) {
		struct rlimit rl, more;
		sigset_t old;

		/* Raised by one borrower at a time (common/raw-window.h). */
		raw_window_limit_lock(&old);
		nfd = -1;
		if (!getrlimit(RLIMIT_NOFILE, &rl)) {
			more = rl;
			more.rlim_cur = (rlim_t)(hard < soft + 256 ? hard : soft + 256);
			if (!setrlimit(RLIMIT_NOFILE, &more)) {
				nfd = fcntl(fd, F_DUPFD_CLOEXEC, (int)soft);
				if (nfd == avoid && nfd >= 0)
					nfd = fcntl(fd, F_DUPFD_CLOEXEC, avoid + 1);
				setrlimit(RLIMIT_NOFILE, &rl);
			}
		}
		raw_window_limit_unlock(&old);
		if (nfd >= 0 && nfd < FD_BITS)
			return nfd;
		if (nfd >= 0)
			real_close(nfd);
	}
	for (target = soft - 1; target >= 0 && target >= soft - 256; target--) {
		if (target == avoid || held((int)target))
			continue;
		nfd = fcntl(fd, F_DUPFD_CLOEXEC, (int)target);
		if (nfd >= 0 && nfd != avoid)
			return nfd;
		if (nfd >= 0)
			real_close(nfd);
		else if (errno != EMFILE && errno != EINVAL)
			return -errno;
	}
	return -EMFILE;
}

int agent_fd_take(int fd)
{
	int nfd = dup_high(fd, -1);

	if (nfd >= 0 && nfd < FD_BITS) {
		real_close(fd);
		fd = nfd;
	} else if (nfd >= 0) {
		real_close(nfd);
	}
	if (fd >= FD_BITS) {
		/* Beyond what the guards can track: better no event than an unguarded one. */
		real_close(fd);
		return -EMFILE;
	}
	bit_set(fds_ever, fd);
	bit_set(fds_held, fd);
	atomic_fetch_add(&nheld, 1);
	return fd;
}

static void forget(int fd);

void agent_fd_release(int fd)
{
	forget(fd);
	real_close(fd);
}

/* The thread whose task-clock event is fd, or NULL. */
static struct agent_thread *owner_of(int fd)
{
	size_t i, n = atomic_load(&agent.nthreads);

	for (i = 0; i < n; i++) {
		struct agent_thread *t = agent.threads[i];

		if (t && t->perf_fd == fd)
			return t;
	}
	return NULL;
}

static void forget(int fd)
{
	if (held(fd)) {
		bit_clear(fds_held, fd);
		atomic_fetch_sub(&nheld, 1);
	}
}

/*
 * The program wants a number of libunwind's pipe: the pipe is given up (the other end closed,
 * both numbers no longer ours), and libunwind's next read of its old number fails, so it
 * makes a new pipe (agent_in_unwind).
 */
static bool give_up_pipe(int fd)
{
	int a = atomic_load(&unwinder_pipe[0]), b = atomic_load(&unwinder_pipe[1]);

	if (fd < 0 || (fd != a && fd != b))
		return false;
	forget(a);
	forget(b);
	atomic_store(&stale_pipe[0], a);
	atomic_store(&stale_pipe[1], b);
	atomic_store(&unwinder_pipe[0], -1);
	atomic_store(&unwinder_pipe[1], -1);
	real_close(fd == a ? b : a);
	return true;
}

/* A number libunwind still thinks is its pipe's, which is the program's now. */
static bool stale(int fd)
{
	return fd >= 0 && (fd == atomic_load(&stale_pipe[0]) || fd == atomic_load(&stale_pipe[1]));
}

/*
 * The program wants the number fd, which is ours: move ours elsewhere first. Its owner's
 * handler must not be using it meanwhile (it reads the event with its busy flag held).
 */
static void move_away(int fd)
{
	struct agent_thread *t;
	bool held_busy = false;
	int nfd, i;

	if (give_up_pipe(fd))
		return;
	t = owner_of(fd);
	for (i = 0; t && i < 100000 && !held_busy; i++) {
		int expected = 0;

		held_busy = atomic_compare_exchange_strong(&t->busy, &expected, 1);
		if (!held_busy)
			sched_yield();
	}
	nfd = dup_high(fd, fd);
	if (nfd >= 0 && nfd < FD_BITS) {
		/*
		 * Its signals go on naming the number O_ASYNC was set through (t->perf_fd_sig,
		 * in fds_ever for good). Setting O_ASYNC again through nfd would leave a moment
		 * without the kernel's fasync entry, and an overflow then sends no signal: one
		 * that turned the event off (POLL_HUP) would leave it off for good.
		 */
		bit_set(fds_held, nfd);
		atomic_fetch_add(&nheld, 1);
		if (t)
			t->perf_fd = nfd;
	} else {
		if (nfd >= 0)
			real_close(nfd);
		/* Nowhere to go: that thread's event is given up (its handler reads nothing),
		   and the control thread arms it again: a new event, else the timer. */
		if (t)
			agent_thread_perf_drop(t);
	}
	forget(fd);
	if (held_busy)
		agent_thread_give(t);
	/* The program's dup2() replaces fd (closing it) next. */
}

AGENT_EXPORT int pipe2(int fds[2], int flags)
{
	int ret, a, b;

	if (!agent_real.pipe2)
		agent_resolve();
	ret = agent_real.pipe2(fds, flags);
	if (ret || !agent_in_unwind)
		return ret;
	/* libunwind's pipe: out of the program's way, and known as its pipe. */
	a = agent_fd_take(fds[0]);
	b = agent_fd_take(fds[1]);
	if (a < 0 || b < 0) {
		if (a >= 0)
			agent_fd_release(a);
		if (b >= 0)
			agent_fd_release(b);
		errno = EMFILE;
		return -1;
	}
	fds[0] = a;
	fds[1] = b;
	atomic_store(&unwinder_pipe[0], a);
	atomic_store(&unwinder_pipe[1], b);
	atomic_store(&stale_pipe[0], -1);
	atomic_store(&stale_pipe[1], -1);
	return 0;
}

AGENT_EXPORT int pipe(int fds[2])
{
	return pipe2(fds, 0);
}

AGENT_EXPORT ssize_t read(int fd, void *buf, size_t len)
{
	struct agent_wait_call c;
	ssize_t r;

	if (!agent_real.read)
		agent_resolve();
	/* libunwind reading its old pipe number, the program's now: refused, it makes a pipe. */
	if (__builtin_expect(agent_in_unwind, 0) && stale(fd)) {
		errno = EBADF;
		return -1;
	}
	/* A read that blocks is a wait (agent-wait-io.c has the other I/O calls). */
	if (!agent_wait_enter(&c, AGENT_WAIT_SITE, AGENT_WAIT_SP))
		return agent_real.read(fd, buf, len);
	agent_wait_open(&c, RAW_WAIT_READ, fd < 0 ? 0 : (uint64_t)fd);
	r = agent_real.read(fd, buf, len);
	agent_wait_leave_io(&c, RAW_WAIT_READ, fd);
	return r;
}

AGENT_EXPORT int close(int fd)
{
	if (__builtin_expect(agent_in_unwind, 0)) {
		/* libunwind letting go of its old pipe: ours are closed, the program's left. */
		if (held(fd)) {
			give_up_pipe(fd);
			agent_fd_release(fd);
			return 0;
		}
		if (stale(fd))
			return 0;
		return real_close(fd);
	}
	if (held(fd)) {
		/* Not the program's descriptor: what it would get without us. */
		errno = EBADF;
		return -1;
	}
	return real_close(fd);
}

AGENT_EXPORT int dup2(int oldfd, int newfd)
{
	if (!agent_real.dup2)
		agent_resolve();
	if (oldfd != newfd && held(newfd) && !held(oldfd))
		move_away(newfd);
	return agent_real.dup2(oldfd, newfd);
}

AGENT_EXPORT int dup3(int oldfd, int newfd, int flags)
{
	if (!agent_real.dup3)
		agent_resolve();
	if (oldfd != newfd && held(newfd) && !held(oldfd))
		move_away(newfd);
	return agent_real.dup3(oldfd, newfd, flags);
}

/* close_range(2) of [first, last] without ours: the pieces between them. */
static int close_range_sys(unsigned first, unsigned last, int flags)
{
	if (agent_real.close_range)
		return agent_real.close_range(first, last, flags);
	return (int)syscall(SYS_close_range, first, last, flags);
}

static int close_pieces(unsigned first, unsigned last, int flags)
{
	unsigned lo = first, fd;
	int ret = 0;

	/* Marking close-on-exec spares nothing of ours (ours are close-on-exec already). */
	if ((flags & CLOSE_RANGE_CLOEXEC) || !atomic_load(&nheld))
		return close_range_sys(first, last, flags);
	for (fd = first; fd < FD_BITS && fd <= last; fd++) {
		if (!held((int)fd))
			continue;
		if (fd > lo && (ret = close_range_sys(lo, fd - 1, flags)))
			return ret;
		flags &= ~CLOSE_RANGE_UNSHARE; /* done once, by the first piece */
		lo = fd + 1;
		if (fd == last)
			return 0;
	}
	return lo <= last ? close_range_sys(lo, last, flags) : 0;
}

AGENT_EXPORT int close_range(unsigned first, unsigned last, int flags)
{
	if (!agent_real.close || !agent_real.close_range)
		agent_resolve();
	if (first > last)
		return close_range_sys(first, last, flags);
	return close_pieces(first, last, flags);
}

AGENT_EXPORT void closefrom(int lowfd)
{
	if (!agent_real.close)
		agent_resolve();
	if (lowfd < 0)
		lowfd = 0;
	if (!atomic_load(&nheld) && agent_real.closefrom) {
		agent_real.closefrom(lowfd);
		return;
	}
	if (close_pieces((unsigned)lowfd, ~0u, 0) && errno == ENOSYS) {
		/* An old kernel: close them one by one, as glibc's closefrom does. */
		struct rlimit rl;
		long fd, top = getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur == RLIM_INFINITY ||
					       rl.rlim_cur > (rlim_t)FD_BITS
				       ? FD_BITS
				       : (long)rl.rlim_cur;

		for (fd = lowfd; fd < top; fd++)
			if (!held((int)fd))
				real_close((int)fd);
	}
}
