/* SPDX-License-Identifier: MIT */
/* Sleeps and waits with a timeout (poll, select, epoll): measured, and never cut short by us. */
#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <unistd.h>

#include "collector/agent/agent-private.h"

/*
 * These calls are not restarted after a signal handler runs, whatever SA_RESTART says: they
 * fail with EINTR (and a sleep returns early). Our sampling signal is a CPU-time timer, which
 * does not fire while a thread sleeps, but it may fire just as the thread enters the call
 * and interrupt it. The program would not have been interrupted without us, so a call that
 * fails with EINTR while only our signal arrived (agent_sig_count moved) is resumed for the
 * time left: a relative sleep with the remainder the kernel gives, an absolute one as it
 * was, a timeout by the deadline taken at the start. The program sees its full sleep and no
 * EINTR, and its own signals interrupt it as before (a signal of the program arriving in the
 * same instant as ours is the one case that cannot be told apart). This holds whether or not
 * waits are recorded.
 */

static struct {
	int (*nanosleep)(const struct timespec *, struct timespec *);
	int (*clock_nanosleep)(clockid_t, int, const struct timespec *, struct timespec *);
	int (*usleep)(useconds_t);
	unsigned (*sleep)(unsigned);
	int (*poll)(struct pollfd *, nfds_t, int);
	int (*ppoll)(struct pollfd *, nfds_t, const struct timespec *, const sigset_t *);
	int (*select)(int, fd_set *, fd_set *, fd_set *, struct timeval *);
	int (*pselect)(int, fd_set *, fd_set *, fd_set *, const struct timespec *,
		       const sigset_t *);
	int (*epoll_wait)(int, struct epoll_event *, int, int);
	int (*epoll_pwait)(int, struct epoll_event *, int, int, const sigset_t *);
	int (*epoll_pwait2)(int, struct epoll_event *, int, const struct timespec *,
			    const sigset_t *);
} real;

void agent_wait_sleep_resolve(void)
{
#define R(field) *(void **)&real.field = dlsym(RTLD_NEXT, #field)
	R(nanosleep);
	R(clock_nanosleep);
	R(usleep);
	R(sleep);
	R(poll);
	R(ppoll);
	R(select);
	R(pselect);
	R(epoll_wait);
	R(epoll_pwait);
	R(epoll_pwait2);
#undef R
}

#define REAL(field) (real.field ? real.field : (agent_wait_sleep_resolve(), real.field))

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Interrupted by our signal alone: the call must go on. */
static bool ours(int failed, int err, unsigned sigs)
{
	return failed && err == EINTR && sigs != agent_sig_count && agent.active;
}

/* ns of a timespec; negative or out-of-range values give 0 (the kernel refuses them). */
static uint64_t ts_ns(const struct timespec *ts)
{
	if (ts->tv_sec < 0 || ts->tv_nsec < 0 || ts->tv_nsec >= 1000000000)
		return 0;
	return (uint64_t)ts->tv_sec * 1000000000u + (uint64_t)ts->tv_nsec;
}

/* The time left to deadline (CLOCK_MONOTONIC ns) as a timespec; false when it is past. */
static bool left_until(uint64_t deadline, struct timespec *ts)
{
	uint64_t now = mono_ns();

	if (now >= deadline)
		return false;
	ts->tv_sec = (time_t)((deadline - now) / 1000000000u);
	ts->tv_nsec = (long)((deadline - now) % 1000000000u);
	return true;
}

/* A timeout in ms from now to deadline, rounded up (a wait never ends early), 0 when past. */
static int ms_until(uint64_t deadline)
{
	uint64_t now = mono_ns(), ms;

	if (now >= deadline)
		return 0;
	ms = (deadline - now + 999999) / 1000000;
	return ms > INT32_MAX ? INT32_MAX : (int)ms;
}

/* ---- sleeps ------------------------------------------------------------------------------ */

AGENT_EXPORT int nanosleep(const struct timespec *req, struct timespec *rem)
{
	struct agent_wait_call c;
	struct timespec left, next;
	bool measured = agent_wait_enter(&c, AGENT_WAIT_SITE, AGENT_WAIT_SP);
	int r, saved = errno;
	unsigned sigs;

	if (measured)
		agent_wait_open(&c, RAW_WAIT_SLEEP, 0);

	for (;;) {
		sigs = agent_sig_count;
		r = REAL(nanosleep)(req, rem ? rem : &left);
		if (!ours(r, errno, sigs))
			break;
		next = rem ? *rem : left;
		req = &next;
		errno = saved;
	}
	if (measured)
		agent_wait_leave(&c, RAW_WAIT_SLEEP, 0);
	return r;
}

AGENT_EXPORT int clock_nanosleep(clockid_t clock, int flags, const struct timespec *req,
				 struct timespec *rem)
{
	struct agent_wait_call c;
	struct timespec left, next;
	bool measured = agent_wait_enter(&c, AGENT_WAIT_SITE, AGENT_WAIT_SP);
	unsigned sigs;
	int r;

	if (measured)
		agent_wait_open(&c, RAW_WAIT_SLEEP, 0);

	for (;;) {
		sigs = agent_sig_count;
		/* Returns the error number; errno is not used. */
		r = REAL(clock_nanosleep)(clock, flags, req, rem ? rem : &left);
		if (!ours(r != 0, r, sigs))
			break;
		/* An absolute sleep goes on to the same time; a relative one for what is left. */
		if (!(flags & TIMER_ABSTIME)) {
			next = rem ? *rem : left;
			req = &next;
		}
	}
	if (measured)
		agent_wait_leave(&c, RAW_WAIT_SLEEP, 0);
	return r;
}

/*
 * A relative sleep of req on nanosleep, resumed after our signal: usleep() and sleep() are
 * this in glibc too. Returns nanosleep's result, *rem what was left when the program's own
 * signal interrupted it.
 */
static int sleep_for(struct timespec req, struct timespec *rem)
{
	int r, saved = errno;
	unsigned sigs;

	for (;;) {
		sigs = agent_sig_count;
		r = REAL(nanosleep)(&req, rem);
		if (!ours(r, errno, sigs))
			return r;
		req = *rem;
		errno = saved;
	}
}

AGENT_EXPORT int usleep(useconds_t us)
{
	struct timespec req = { (time_t)(us / 1000000u), (long)(us % 1000000u) * 1000 }, rem;
	struct agent_wait_call c;
	bool measured;
	int r;

	if (!agent.active)
		return REAL(usleep)(us);
	measured = agent_wait_enter(&c, AGENT_WAIT_SITE, AGENT_WAIT_SP);
	if (measured)
		agent_wait_open(&c, RAW_WAIT_SLEEP, 0);
	r = sleep_for(req, &rem);
	if (measured)
		agent_wait_leave(&c, RAW_WAIT_SLEEP, 0);
	return r;
}

AGENT_EXPORT unsigned sleep(unsigned seconds)
{
	struct timespec req = { (time_t)seconds, 0 }, rem;
	struct agent_wait_call c;
	int saved = errno;
	bool measured;
	unsigned r = 0;

	if (!agent.active)
		return REAL(sleep)(seconds);
	measured = agent_wait_enter(&c, AGENT_WAIT_SITE, AGENT_WAIT_SP);
	if (measured)
		agent_wait_open(&c, RAW_WAIT_SLEEP, 0);
	/* Interrupted, sleep() gives the whole seconds it did not sleep, errno EINTR. */
	if (sleep_for(req, &rem))
		r = errno == EINTR ? (unsigned)rem.tv_sec : seconds;
	else
		errno = saved;
	if (measured)
		agent_wait_leave(&c, RAW_WAIT_SLEEP, 0);
	return r;
}

/* ---- poll, select, epoll ----------------------------------------------------------------- */

/* The lowest descriptor in a select() set, the object of the wait; 0 when none. */
static uint64_t first_fd(int n, const fd_set *a, const fd_set *b, const fd_set *c)
{
	int fd;

	for (fd = 0; fd < n && fd < FD_SETSIZE; fd++)
		if ((a && FD_ISSET(fd, a)) || (b && FD_ISSET(fd, b)) || (c && FD_ISSET(fd, c)))
			return (uint64_t)fd;
	return 0;
}

/* One call of the poll family, its arguments kept for a resumption. */
enum pcall_fn { P_POLL, P_PPOLL, P_SELECT, P_PSELECT, P_EPOLL, P_EPOLL_P, P_EPOLL_P2 };
struct pcall {
	enum pcall_fn fn;
	struct pollfd *fds;
	nfds_t n;
	int nfds;
	fd_set *rd, *wr, *ex;
	struct timeval *tv; /* select: the kernel counts it down itself */
	int epfd, max;
	struct epoll_event *ev;
	const sigset_t *mask;
	int ms;                     /* poll, epoll_wait, epoll_pwait: ms, negative none */
	const struct timespec *tmo; /* ppoll, pselect, epoll_pwait2: NULL none */
};

static int pcall_real(const struct pcall *p)
{
	switch (p->fn) {
	case P_POLL:
		return REAL(poll)(p->fds, p->n, p->ms);
	case P_PPOLL:
		return REAL(ppoll)(p->fds, p->n, p->tmo, p->mask);
	case P_SELECT:
		return REAL(select)(p->nfds, p->rd, p->wr, p->ex, p->tv);
	case P_PSELECT:
		return REAL(pselect)(p->nfds, p->rd, p->wr, p->ex, p->tmo, p->mask);
	case P_EPOLL:
		return REAL(epoll_wait)(p->epfd, p->ev, p->max, p->ms);
	case P_EPOLL_P:
		return REAL(epoll_pwait)(p->epfd, p->ev, p->max, p->ms, p->mask);
	case P_EPOLL_P2:
		return REAL(epoll_pwait2)(p->epfd, p->ev, p->max, p->tmo, p->mask);
	}
	return -1;
}

/* Whether the call may block: with no timeout (0) it only looks, and is passed on as is. */
static bool pcall_blocks(const struct pcall *p)
{
	if (p->fn == P_SELECT)
		return !p->tv || p->tv->tv_sec || p->tv->tv_usec;
	if (p->fn == P_PPOLL || p->fn == P_PSELECT || p->fn == P_EPOLL_P2)
		return !p->tmo || ts_ns(p->tmo);
	return p->ms != 0;
}

/* The object of the wait: the first descriptor polled, or the epoll descriptor; 0: none. */
static uint64_t pcall_object(const struct pcall *p)
{
	int fd = 0;

	if (p->fn == P_POLL || p->fn == P_PPOLL)
		fd = p->n ? p->fds[0].fd : 0;
	else if (p->fn == P_SELECT || p->fn == P_PSELECT)
		return first_fd(p->nfds, p->rd, p->wr, p->ex);
	else
		fd = p->epfd;
	return fd > 0 ? (uint64_t)fd : 0;
}

/*
 * Make the call, resumed after our signal for the time left (Linux leaves poll's and
 * select's sets alone on EINTR). Past the deadline, one last look, as the timeout's end
 * would give. Measured (c) as a poll wait on its first descriptor (read after the call:
 * glibc declares poll()'s array write-only, though the kernel reads it).
 */
static int pcall_run(struct pcall *p, const struct agent_wait_call *c, bool measured)
{
	uint64_t deadline = mono_ns();
	struct timespec left;
	int r, saved = errno;
	unsigned sigs;

	if (measured)
		agent_wait_open(c, RAW_WAIT_POLL, pcall_object(p));
	if (p->tmo)
		deadline += ts_ns(p->tmo);
	else if (p->ms > 0)
		deadline += (uint64_t)p->ms * 1000000u;
	for (;;) {
		sigs = agent_sig_count;
		r = pcall_real(p);
		if (!ours(r < 0, errno, sigs))
			break;
		errno = saved;
		if (p->tmo) {
			if (!left_until(deadline, &left))
				left.tv_sec = left.tv_nsec = 0;
			p->tmo = &left;
		} else if (p->ms > 0) {
			p->ms = ms_until(deadline);
		}
	}
	if (measured)
		agent_wait_leave(c, RAW_WAIT_POLL, pcall_object(p));
	return r;
}

/* The interposers: pass on a call that cannot block, else measure and run it. */
#define PCALL(...)                                                                                 \
	do {                                                                                       \
		struct pcall p = { __VA_ARGS__ };                                                  \
		struct agent_wait_call c;                                                          \
                                                                                                   \
		if (!agent.active || !pcall_blocks(&p))                                            \
			return pcall_real(&p);                                                     \
		return pcall_run(&p, &c, agent_wait_enter(&c, AGENT_WAIT_SITE, AGENT_WAIT_SP));    \
	} while (0)

AGENT_EXPORT int poll(struct pollfd *fds, nfds_t n, int timeout)
{
	PCALL(.fn = P_POLL, .fds = fds, .n = n, .ms = timeout);
}

AGENT_EXPORT int ppoll(struct pollfd *fds, nfds_t n, const struct timespec *tmo,
		       const sigset_t *mask)
{
	PCALL(.fn = P_PPOLL, .fds = fds, .n = n, .tmo = tmo, .mask = mask);
}

AGENT_EXPORT int select(int nfds, fd_set *rd, fd_set *wr, fd_set *ex, struct timeval *tv)
{
	PCALL(.fn = P_SELECT, .nfds = nfds, .rd = rd, .wr = wr, .ex = ex, .tv = tv);
}

AGENT_EXPORT int pselect(int nfds, fd_set *rd, fd_set *wr, fd_set *ex, const struct timespec *tmo,
			 const sigset_t *mask)
{
	PCALL(.fn = P_PSELECT, .nfds = nfds, .rd = rd, .wr = wr, .ex = ex, .tmo = tmo,
	      .mask = mask);
}

AGENT_EXPORT int epoll_wait(int epfd, struct epoll_event *ev, int max, int timeout)
{
	PCALL(.fn = P_EPOLL, .epfd = epfd, .ev = ev, .max = max, .ms = timeout);
}

AGENT_EXPORT int epoll_pwait(int epfd, struct epoll_event *ev, int max, int timeout,
			     const sigset_t *mask)
{
	PCALL(.fn = P_EPOLL_P, .epfd = epfd, .ev = ev, .max = max, .ms = timeout, .mask = mask);
}

AGENT_EXPORT int epoll_pwait2(int epfd, struct epoll_event *ev, int max, const struct timespec *tmo,
			      const sigset_t *mask)
{
	if (!REAL(epoll_pwait2)) {
		errno = ENOSYS;
		return -1;
	}
	PCALL(.fn = P_EPOLL_P2, .epfd = epfd, .ev = ev, .max = max, .tmo = tmo, .mask = mask);
}
