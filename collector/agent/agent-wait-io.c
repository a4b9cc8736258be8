/* SPDX-License-Identifier: MIT */
/* Waits in I/O (read, write, recv, send, accept, connect), for children, and on futexes. */
#include <dlfcn.h>
#include <errno.h>
#include <linux/futex.h>
#include <stdarg.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "collector/agent/agent-private.h"

/*
 * An I/O call is a wait only when it blocked: agent_wait_leave_io() drops calls too short to
 * have slept and, under the threshold, calls on files (the page cache's copies). Calls that
 * cannot block (MSG_DONTWAIT, WNOHANG) are passed on unmeasured. read() itself is interposed
 * in agent-fd.c (it also keeps libunwind off the program's descriptors) and measured there.
 * glibc's own reads and writes (stdio's, through its internal aliases) do not come here:
 * docs/pcollect.md says so. The fortified variants (_FORTIFY_SOURCE: __read_chk, ...) check
 * the buffer and do the same read, so they are measured too.
 */

static struct {
	ssize_t (*write)(int, const void *, size_t);
	ssize_t (*readv)(int, const struct iovec *, int);
	ssize_t (*writev)(int, const struct iovec *, int);
	ssize_t (*pread)(int, void *, size_t, off_t);
	ssize_t (*pwrite)(int, const void *, size_t, off_t);
	ssize_t (*preadv)(int, const struct iovec *, int, off_t);
	ssize_t (*pwritev)(int, const struct iovec *, int, off_t);
	ssize_t (*recv)(int, void *, size_t, int);
	ssize_t (*recvfrom)(int, void *, size_t, int, struct sockaddr *, socklen_t *);
	ssize_t (*recvmsg)(int, struct msghdr *, int);
	ssize_t (*send)(int, const void *, size_t, int);
	ssize_t (*sendto)(int, const void *, size_t, int, const struct sockaddr *, socklen_t);
	ssize_t (*sendmsg)(int, const struct msghdr *, int);
	int (*accept)(int, struct sockaddr *, socklen_t *);
	int (*accept4)(int, struct sockaddr *, socklen_t *, int);
	int (*connect)(int, const struct sockaddr *, socklen_t);
	ssize_t (*read_chk)(int, void *, size_t, size_t);
	ssize_t (*pread_chk)(int, void *, size_t, off_t, size_t);
	ssize_t (*recv_chk)(int, void *, size_t, size_t, int);
	ssize_t (*recvfrom_chk)(int, void *, size_t, size_t, int, struct sockaddr *, socklen_t *);
	pid_t (*wait)(int *);
	pid_t (*waitpid)(pid_t, int *, int);
	int (*waitid)(idtype_t, id_t, siginfo_t *, int);
	pid_t (*wait3)(int *, int, struct rusage *);
	pid_t (*wait4)(pid_t, int *, int, struct rusage *);
	long (*syscall)(long, ...);
} real;

void agent_wait_io_resolve(void)
{
#define R(field, name) *(void **)&real.field = dlsym(RTLD_NEXT, name)
	R(write, "write");
	R(readv, "readv");
	R(writev, "writev");
	R(pread, "pread64");
	R(pwrite, "pwrite64");
	R(preadv, "preadv64");
	R(pwritev, "pwritev64");
	R(recv, "recv");
	R(recvfrom, "recvfrom");
	R(recvmsg, "recvmsg");
	R(send, "send");
	R(sendto, "sendto");
	R(sendmsg, "sendmsg");
	R(accept, "accept");
	R(accept4, "accept4");
	R(connect, "connect");
	R(read_chk, "__read_chk");
	R(pread_chk, "__pread_chk");
	R(recv_chk, "__recv_chk");
	R(recvfrom_chk, "__recvfrom_chk");
	R(wait, "wait");
	R(waitpid, "waitpid");
	R(waitid, "waitid");
	R(wait3, "wait3");
	R(wait4, "wait4");
	R(syscall, "syscall");
#undef R
}

#define REAL(field) (real.field ? real.field : (agent_wait_io_resolve(), real.field))

/* glibc's fortified variants (<bits/unistd.h>, <bits/socket2.h>), declared there only when
   _FORTIFY_SOURCE asks for them. */
ssize_t __read_chk(int fd, void *buf, size_t len, size_t buflen);
ssize_t __pread_chk(int fd, void *buf, size_t len, off_t off, size_t buflen);
ssize_t __recv_chk(int fd, void *buf, size_t len, size_t buflen, int flags);
ssize_t __recvfrom_chk(int fd, void *buf, size_t len, size_t buflen, int flags, struct sockaddr *a,
		       socklen_t *alen);

/* An I/O call on fd: measured, a wait of kind if it blocked. */
#define IO_CALL(kind, fd, call)                                                                    \
	AGENT_WAIT_MEASURE(ssize_t, agent_wait_open(&c, kind, (fd) < 0 ? 0 : (uint64_t)(fd)),      \
			   call, agent_wait_leave_io(&c, kind, fd))

AGENT_EXPORT ssize_t write(int fd, const void *buf, size_t len)
{
	IO_CALL(RAW_WAIT_WRITE, fd, REAL(write)(fd, buf, len));
}

AGENT_EXPORT ssize_t readv(int fd, const struct iovec *iov, int n)
{
	IO_CALL(RAW_WAIT_READ, fd, REAL(readv)(fd, iov, n));
}

AGENT_EXPORT ssize_t writev(int fd, const struct iovec *iov, int n)
{
	IO_CALL(RAW_WAIT_WRITE, fd, REAL(writev)(fd, iov, n));
}

/*
 * The positioned calls under both of their names: meson builds with _FILE_OFFSET_BITS=64,
 * whose headers rename pread to pread64 (the same function on 64-bit Linux), and programs
 * call either.
 */
#define POSITIONED(fn, asmname, kind, buftype, real_fn)                                            \
	AGENT_EXPORT ssize_t fn(int fd, buftype buf, size_t len, off_t off) __asm__(asmname);      \
	AGENT_EXPORT ssize_t fn(int fd, buftype buf, size_t len, off_t off)                        \
	{                                                                                          \
		IO_CALL(kind, fd, REAL(real_fn)(fd, buf, len, off));                               \
	}
#define POSITIONED_V(fn, asmname, kind, real_fn)                                                   \
	AGENT_EXPORT ssize_t fn(int fd, const struct iovec *iov, int n,                            \
				off_t off) __asm__(asmname);                                       \
	AGENT_EXPORT ssize_t fn(int fd, const struct iovec *iov, int n, off_t off)                 \
	{                                                                                          \
		IO_CALL(kind, fd, REAL(real_fn)(fd, iov, n, off));                                 \
	}

POSITIONED(pcollect_pread, "pread", RAW_WAIT_READ, void *, pread)
POSITIONED(pcollect_pread64, "pread64", RAW_WAIT_READ, void *, pread)
POSITIONED(pcollect_pwrite, "pwrite", RAW_WAIT_WRITE, const void *, pwrite)
POSITIONED(pcollect_pwrite64, "pwrite64", RAW_WAIT_WRITE, const void *, pwrite)
POSITIONED_V(pcollect_preadv, "preadv", RAW_WAIT_READ, preadv)
POSITIONED_V(pcollect_preadv64, "preadv64", RAW_WAIT_READ, preadv)
POSITIONED_V(pcollect_pwritev, "pwritev", RAW_WAIT_WRITE, pwritev)
POSITIONED_V(pcollect_pwritev64, "pwritev64", RAW_WAIT_WRITE, pwritev)

AGENT_EXPORT ssize_t __read_chk(int fd, void *buf, size_t len, size_t buflen)
{
	IO_CALL(RAW_WAIT_READ, fd, REAL(read_chk)(fd, buf, len, buflen));
}

AGENT_EXPORT ssize_t __pread_chk(int fd, void *buf, size_t len, off_t off, size_t buflen)
{
	IO_CALL(RAW_WAIT_READ, fd, REAL(pread_chk)(fd, buf, len, off, buflen));
}

/* ---- sockets ----------------------------------------------------------------------------- */

/* A socket call that cannot block is passed on unmeasured. */
#define SOCK_CALL(kind, fd, flags, call)                                                           \
	do {                                                                                       \
		if ((flags)&MSG_DONTWAIT)                                                          \
			return call;                                                               \
		IO_CALL(kind, fd, call);                                                           \
	} while (0)

AGENT_EXPORT ssize_t recv(int fd, void *buf, size_t len, int flags)
{
	SOCK_CALL(RAW_WAIT_READ, fd, flags, REAL(recv)(fd, buf, len, flags));
}

AGENT_EXPORT ssize_t __recv_chk(int fd, void *buf, size_t len, size_t buflen, int flags)
{
	SOCK_CALL(RAW_WAIT_READ, fd, flags, REAL(recv_chk)(fd, buf, len, buflen, flags));
}

AGENT_EXPORT ssize_t recvfrom(int fd, void *buf, size_t len, int flags, struct sockaddr *a,
			      socklen_t *alen)
{
	SOCK_CALL(RAW_WAIT_READ, fd, flags, REAL(recvfrom)(fd, buf, len, flags, a, alen));
}

AGENT_EXPORT ssize_t __recvfrom_chk(int fd, void *buf, size_t len, size_t buflen, int flags,
				    struct sockaddr *a, socklen_t *alen)
{
	SOCK_CALL(RAW_WAIT_READ, fd, flags,
		  REAL(recvfrom_chk)(fd, buf, len, buflen, flags, a, alen));
}

AGENT_EXPORT ssize_t recvmsg(int fd, struct msghdr *msg, int flags)
{
	SOCK_CALL(RAW_WAIT_READ, fd, flags, REAL(recvmsg)(fd, msg, flags));
}

AGENT_EXPORT ssize_t send(int fd, const void *buf, size_t len, int flags)
{
	SOCK_CALL(RAW_WAIT_WRITE, fd, flags, REAL(send)(fd, buf, len, flags));
}

AGENT_EXPORT ssize_t sendto(int fd, const void *buf, size_t len, int flags,
			    const struct sockaddr *a, socklen_t alen)
{
	SOCK_CALL(RAW_WAIT_WRITE, fd, flags, REAL(sendto)(fd, buf, len, flags, a, alen));
}

AGENT_EXPORT ssize_t sendmsg(int fd, const struct msghdr *msg, int flags)
{
	SOCK_CALL(RAW_WAIT_WRITE, fd, flags, REAL(sendmsg)(fd, msg, flags));
}

AGENT_EXPORT int accept(int fd, struct sockaddr *a, socklen_t *alen)
{
	IO_CALL(RAW_WAIT_ACCEPT, fd, REAL(accept)(fd, a, alen));
}

AGENT_EXPORT int accept4(int fd, struct sockaddr *a, socklen_t *alen, int flags)
{
	IO_CALL(RAW_WAIT_ACCEPT, fd, REAL(accept4)(fd, a, alen, flags));
}

AGENT_EXPORT int connect(int fd, const struct sockaddr *a, socklen_t alen)
{
	IO_CALL(RAW_WAIT_CONNECT, fd, REAL(connect)(fd, a, alen));
}

/* ---- children ---------------------------------------------------------------------------- */

/* A wait for a child (object: the pid waited for, 0 for any); WNOHANG does not wait. */
#define CHILD_CALL(options, pid, call)                                                             \
	do {                                                                                       \
		struct agent_wait_call c;                                                          \
		__typeof__(call) r;                                                                \
                                                                                                   \
		if (((options)&WNOHANG) || !agent_wait_enter(&c, AGENT_WAIT_SITE, AGENT_WAIT_SP))  \
			return call;                                                               \
		agent_wait_open(&c, RAW_WAIT_CHILD, (pid) > 0 ? (uint64_t)(pid) : 0);              \
		r = call;                                                                          \
		agent_wait_leave(&c, RAW_WAIT_CHILD, (pid) > 0 ? (uint64_t)(pid) : 0);             \
		return r;                                                                          \
	} while (0)

AGENT_EXPORT pid_t wait(int *status)
{
	CHILD_CALL(0, 0, REAL(wait)(status));
}

AGENT_EXPORT pid_t waitpid(pid_t pid, int *status, int options)
{
	CHILD_CALL(options, pid, REAL(waitpid)(pid, status, options));
}

AGENT_EXPORT int waitid(idtype_t type, id_t id, siginfo_t *info, int options)
{
	CHILD_CALL(options, type == P_PID ? (pid_t)id : 0, REAL(waitid)(type, id, info, options));
}

AGENT_EXPORT pid_t wait3(int *status, int options, struct rusage *ru)
{
	CHILD_CALL(options, 0, REAL(wait3)(status, options, ru));
}

AGENT_EXPORT pid_t wait4(pid_t pid, int *status, int options, struct rusage *ru)
{
	CHILD_CALL(options, pid, REAL(wait4)(pid, status, options, ru));
}

/* ---- futexes ----------------------------------------------------------------------------- */

static bool futex_waits(long op)
{
	switch (op & FUTEX_CMD_MASK) {
	case FUTEX_WAIT:
	case FUTEX_WAIT_BITSET:
	case FUTEX_LOCK_PI:
	case FUTEX_LOCK_PI2:
	case FUTEX_WAIT_REQUEUE_PI:
		return true;
	default:
		return false;
	}
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * syscall(SYS_futex, ...), which runtimes that manage their own locks use (Rust's std, some
 * allocators): a waiting operation is a wait of kind futex on its word. One interrupted by
 * our signal alone is resumed, as the sleeps are (agent-wait-sleep.c): FUTEX_WAIT's timeout is
 * relative, so it goes on with what is left. Every other system call is passed on as it
 * came. The six arguments are read as glibc's syscall() reads them; left out of
 * AddressSanitizer, to which reading a caller's unused argument slot looks like an overflow.
 */
AGENT_EXPORT AGENT_EARLY long syscall(long n, ...)
{
	struct agent_wait_call c;
	struct timespec left, *tmo;
	uint64_t deadline = 0;
	long a[6], r;
	int saved;
	unsigned sigs;
	bool measured;
	va_list ap;
	size_t i;

	va_start(ap, n);
	for (i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (n != SYS_futex || !futex_waits(a[1]) || !agent.active)
		return REAL(syscall)(n, a[0], a[1], a[2], a[3], a[4], a[5]);
	measured = agent_wait_enter(&c, AGENT_WAIT_SITE, AGENT_WAIT_SP);
	saved = errno;
	tmo = (struct timespec *)a[3];
	if ((a[1] & FUTEX_CMD_MASK) == FUTEX_WAIT && tmo && tmo->tv_sec >= 0)
		deadline = mono_ns() + (uint64_t)tmo->tv_sec * 1000000000u + (uint64_t)tmo->tv_nsec;
	for (;;) {
		sigs = agent_sig_count;
		r = REAL(syscall)(n, a[0], a[1], a[2], a[3], a[4], a[5]);
		if (!(r < 0 && errno == EINTR && sigs != agent_sig_count))
			break;
		errno = saved;
		if (deadline) {
			uint64_t now = mono_ns();

			if (now >= deadline) {
				errno = ETIMEDOUT;
				r = -1;
				break;
			}
			left.tv_sec = (time_t)((deadline - now) / 1000000000u);
			left.tv_nsec = (long)((deadline - now) % 1000000000u);
			a[3] = (long)&left;
		}
	}
	if (measured)
		agent_wait_leave(&c, RAW_WAIT_FUTEX, (uint64_t)a[0]);
	return r;
}
