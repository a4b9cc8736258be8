/* SPDX-License-Identifier: MIT */
/* Calling a function in a thread of another process with ptrace, as a debugger's "call" does. */
#include "collector/pcollect/inject.h"

#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"
#include "common/proc-maps.h"

#define RED_ZONE      128         /* bytes below the stack pointer the thread's code may use */
#define SCRATCH_NEED  (24u << 10) /* bytes of mapped stack below the red zone we want */
#define FRAME_ROOM    512         /* bytes kept between our data and the called frame */
#define TRIES         3000        /* stops tried before giving up, about a ms apart */
#define TRIES_PER_TID 25          /* then the next thread is tried */
#define MAX_TASKS     4096

/* A step failed: why into in->err, -code returned (code is no errno: read after err_set()). */
#define FAIL(in, code, ...) (err_set((in)->err, sizeof((in)->err), __VA_ARGS__), -(code))

/* A system call failed: "<what>: <its error>" into in->err, -errno returned. */
static int fail_errno(struct inject *in, const char *what)
{
	int err = errno;

	err_set(in->err, sizeof(in->err), "%s: %s", what, strerror(err));
	return -err;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

/* The threads of pid, the main thread (tid = pid) first. */
static size_t list_tasks(pid_t pid, pid_t *out, size_t max)
{
	char path[64];
	struct dirent *e;
	size_t n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return 0;
	out[n++] = pid;
	while ((e = readdir(d)) && n < max) {
		pid_t tid = (pid_t)atoi(e->d_name);

		if (tid > 0 && tid != pid)
			out[n++] = tid;
	}
	closedir(d);
	return n;
}

/* The mapping of pid that holds addr, its path copied to path. 0 or -1. */
static int map_at(pid_t pid, uint64_t addr, struct proc_map *out, char *path, size_t size)
{
	char file[64], line[PATH_MAX + 128];
	int ret = -1;
	FILE *f;

	snprintf(file, sizeof(file), "/proc/%d/maps", (int)pid);
	f = fopen(file, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		struct proc_map m;

		if (proc_map_parse(line, &m) || addr < m.start || addr >= m.end)
			continue;
		*out = m;
		snprintf(path, size, "%s", m.path);
		out->path = path;
		ret = 0;
		break;
	}
	fclose(f);
	return ret;
}

static bool name_is(const char *path, const char *prefix)
{
	const char *base = strrchr(path, '/');

	return !strncmp(base ? base + 1 : path, prefix, strlen(prefix));
}

/* System calls a thread waits in, holding none of the C library's locks dlopen() takes. */
static bool waiting_syscall(long nr)
{
	static const long waits[] = {
		0,
		/* read */ 7,
		/* poll */ 23, /* select */
		24,
		/* sched_yield */ 34,
		/* pause */ 35, /* nanosleep */
		43,
		/* accept */ 45,
		/* recvfrom */ 47, /* recvmsg */
		61,
		/* wait4 */ 70,
		/* msgrcv */ 128, /* rt_sigtimedwait */
		130,
		/* rt_sigsuspend */ 202,
		/* futex */ 230, /* clock_nanosleep */
		232,
		/* epoll_wait */ 247,
		/* waitid */ 270, /* pselect6 */
		271,
		/* ppoll */ 281,
		/* epoll_pwait */ 288, /* accept4 */
		299,
		/* recvmmsg */ 441,
		/* epoll_pwait2 */ 449, /* futex_waitv */
	};
	size_t i;

	for (i = 0; i < sizeof(waits) / sizeof(waits[0]); i++)
		if (waits[i] == nr)
			return true;
	return false;
}

/*
 * Where a call may be made: not in the loader (its lists may be half changed), not in the C
 * library's own code unless blocked in a waiting system call (it may hold malloc's lock, which
 * dlopen() takes), and with room on the stack: writing below a stack that has not grown there
 * yet would not grow it (the kernel grows a stack only for the thread's own accesses).
 */
static bool safe_point(struct inject *in, const struct user_regs_struct *r)
{
	char path[PATH_MAX];
	struct proc_map m;
	bool in_syscall = (long long)r->orig_rax >= 0;

	if (!map_at(in->pid, r->rip, &m, path, sizeof(path))) {
		if (name_is(path, "ld-linux") || name_is(path, "ld-2.") || name_is(path, "ld64"))
			return false;
		if ((name_is(path, "libc.so") || name_is(path, "libc-")) &&
		    !(in_syscall && waiting_syscall((long)r->orig_rax)))
			return false;
	}
	if (map_at(in->pid, r->rsp, &m, path, sizeof(path)) ||
	    r->rsp - RED_ZONE - SCRATCH_NEED < m.start || !(m.prot & PF_W))
		return false;
	in->scratch_lo = m.start;
	return true;
}

/*
 * Seize tid and wait for it to stop. 0 (stopped), -EPERM, -ESRCH (gone), -EBUSY (the
 * process is stopped by job control).
 */
static int stop_thread(pid_t tid)
{
	int st;

	if (ptrace(PTRACE_SEIZE, tid, 0, 0))
		return -errno;
	if (ptrace(PTRACE_INTERRUPT, tid, 0, 0)) {
		int err = errno;

		return -err;
	}
	for (;;) {
		if (waitpid(tid, &st, __WALL) < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (WIFEXITED(st) || WIFSIGNALED(st))
			return -ESRCH;
		if (!WIFSTOPPED(st))
			continue;
		if ((st >> 16) == PTRACE_EVENT_STOP) {
			int sig = WSTOPSIG(st);

			if (sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU) {
				ptrace(PTRACE_DETACH, tid, 0, 0);
				return -EBUSY;
			}
			return 0;
		}
		/* A signal on its way to the thread: let it have it; our stop comes next. */
		ptrace(PTRACE_CONT, tid, 0, (void *)(long)WSTOPSIG(st));
	}
}

int inject_stop(struct inject *in, pid_t pid)
{
	pid_t tids[MAX_TASKS];
	int i, ret;

	memset(in, 0, sizeof(*in));
	in->pid = pid;
	for (i = 0; i < TRIES; i++) {
		size_t n = list_tasks(pid, tids, MAX_TASKS);
		pid_t tid;

		if (!n)
			return FAIL(in, ESRCH, "no such process");
		tid = tids[(size_t)(i / TRIES_PER_TID) % n];
		ret = stop_thread(tid);
		if (ret == -EPERM || ret == -EACCES)
			return FAIL(in, EPERM, "%s", strerror(-ret));
		if (ret == -EBUSY)
			return FAIL(in, EBUSY,
				    "it is stopped (job control): continue it first "
				    "with 'kill -CONT %d'",
				    (int)pid);
		if (ret == -ESRCH)
			continue; /* that thread ended */
		if (ret)
			return FAIL(in, -ret, "%s", strerror(-ret));
		in->attempts = i + 1;
		if (!ptrace(PTRACE_GETREGS, tid, 0, &in->regs) && safe_point(in, &in->regs)) {
			struct iovec iov = { in->xstate, sizeof(in->xstate) };

			in->tid = tid;
			if (!ptrace(PTRACE_GETREGSET, tid, (void *)NT_X86_XSTATE, &iov))
				in->xstate_len = iov.iov_len;
			else if (ptrace(PTRACE_GETFPREGS, tid, 0, &in->fpregs))
				goto next;
			if (ptrace(PTRACE_GETSIGMASK, tid, (void *)sizeof(in->mask), &in->mask))
				goto next;
			in->scratch = in->regs.rsp - RED_ZONE;
			return 0;
		}
next:
		in->tid = 0;
		ptrace(PTRACE_DETACH, tid, 0, 0);
		sleep_ms(1);
	}
	return FAIL(in, EAGAIN,
		    "no thread of it stopped where a call is safe in %d tries "
		    "(all in the C library or the loader, or at the end of their stack)",
		    TRIES);
}

static int write_mem(struct inject *in, uint64_t addr, const void *data, size_t len)
{
	struct iovec local = { (void *)data, len }, remote = { (void *)addr, len };
	size_t off;

	if (process_vm_writev(in->pid, &local, 1, &remote, 1, 0) == (ssize_t)len)
		return 0;
	/* Word by word through ptrace, which needs no more than the attachment. */
	for (off = 0; off < len; off += sizeof(long)) {
		long word = 0;
		size_t k = len - off < sizeof(long) ? len - off : sizeof(long);

		if (k < sizeof(long)) {
			errno = 0;
			word = ptrace(PTRACE_PEEKDATA, in->tid, (void *)(addr + off), 0);
			if (errno)
				return -errno;
		}
		memcpy(&word, (const char *)data + off, k);
		if (ptrace(PTRACE_POKEDATA, in->tid, (void *)(addr + off), (void *)word))
			return -errno;
	}
	return 0;
}

uint64_t inject_put(struct inject *in, const void *data, size_t len)
{
	uint64_t addr = (in->scratch - len) & ~(uint64_t)15;

	if (!in->tid || addr < in->scratch_lo + FRAME_ROOM + RED_ZONE ||
	    write_mem(in, addr, data, len))
		return 0;
	in->scratch = addr;
	return addr;
}

/* Every signal blocked during a call, but the faults that cannot wait. */
static uint64_t call_mask(void)
{
	static const int sync[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP, SIGSYS };
	uint64_t m = ~0ull;
	size_t i;

	for (i = 0; i < sizeof(sync) / sizeof(sync[0]); i++)
		m &= ~(1ull << (sync[i] - 1));
	return m;
}

int inject_call(struct inject *in, uint64_t fn, uint64_t a0, uint64_t a1, uint64_t *ret,
		int timeout_ms)
{
	struct user_regs_struct r = in->regs;
	uint64_t sp = (in->scratch - FRAME_ROOM) & ~(uint64_t)15, zero = 0, mask = call_mask();
	int st, waited = 0;

	/* The return address 0: the call ends in a fault at address 0, which we catch. */
	sp -= 8;
	if (sp < in->scratch_lo || write_mem(in, sp, &zero, sizeof(zero)))
		return FAIL(in, EFAULT, "cannot write to its stack");
	r.rsp = sp;
	r.rip = fn;
	r.rdi = a0;
	r.rsi = a1;
	r.rax = 0;
	/* Not in a system call as far as the kernel is concerned: nothing to restart now. */
	r.orig_rax = (unsigned long long)-1;
	if (ptrace(PTRACE_SETREGS, in->tid, 0, &r) ||
	    ptrace(PTRACE_SETSIGMASK, in->tid, (void *)sizeof(mask), &mask) ||
	    ptrace(PTRACE_CONT, in->tid, 0, 0))
		return fail_errno(in, "cannot start the call");
	for (;;) {
		pid_t w = waitpid(in->tid, &st, __WALL | WNOHANG);

		if (w < 0 && errno != EINTR)
			return fail_errno(in, "lost the thread");
		if (w <= 0) {
			if (waited++ >= timeout_ms) {
				ptrace(PTRACE_INTERRUPT, in->tid, 0, 0);
				waitpid(in->tid, &st, __WALL);
				return FAIL(in, ETIMEDOUT, "the call did not return in %d s",
					    timeout_ms / 1000);
			}
			sleep_ms(1);
			continue;
		}
		if (WIFEXITED(st) || WIFSIGNALED(st))
			return FAIL(in, ESRCH, "the process ended during the call");
		if (!WIFSTOPPED(st))
			continue;
		if ((st >> 16) == PTRACE_EVENT_STOP) {
			/* Job control stopped the process meanwhile: finish the call first. */
			ptrace(PTRACE_CONT, in->tid, 0, 0);
			continue;
		}
		if (ptrace(PTRACE_GETREGS, in->tid, 0, &r))
			return fail_errno(in, "cannot read its registers");
		if (WSTOPSIG(st) == SIGSEGV && r.rip == 0) {
			*ret = r.rax;
			return 0;
		}
		/*
		 * A signal the call unblocked itself (the agent's sampling signal, once its timer
		 * is armed): delivered to the handler the call installed, and the call goes on.
		 */
		if (WSTOPSIG(st) >= SIGRTMIN && (call_mask() & (1ull << (WSTOPSIG(st) - 1)))) {
			if (ptrace(PTRACE_CONT, in->tid, 0, (void *)(uintptr_t)WSTOPSIG(st)))
				return fail_errno(in, "cannot go on with the call");
			continue;
		}
		return FAIL(in, EFAULT, "the call met signal %d at %#llx", WSTOPSIG(st),
			    (unsigned long long)r.rip);
	}
}

int inject_read_string(struct inject *in, uint64_t addr, char *buf, size_t size)
{
	struct iovec local = { buf, size - 1 }, remote = { (void *)addr, size - 1 };
	ssize_t n = process_vm_readv(in->pid, &local, 1, &remote, 1, 0);

	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return 0;
}

int inject_release(struct inject *in)
{
	struct iovec iov = { in->xstate, in->xstate_len };
	int ret = 0;

	if (!in->tid)
		return 0;
	if (ptrace(PTRACE_SETREGS, in->tid, 0, &in->regs))
		ret = -errno;
	if (in->xstate_len ? ptrace(PTRACE_SETREGSET, in->tid, (void *)NT_X86_XSTATE, &iov)
			   : ptrace(PTRACE_SETFPREGS, in->tid, 0, &in->fpregs))
		ret = ret ? ret : -errno;
	if (ptrace(PTRACE_SETSIGMASK, in->tid, (void *)sizeof(in->mask), &in->mask))
		ret = ret ? ret : -errno;
	/* Detached with no signal: the fault that ended the last call is dropped. */
	if (ptrace(PTRACE_DETACH, in->tid, 0, 0))
		ret = ret ? ret : -errno;
	in->tid = 0;
	return ret;
}

/* The load address of a module file's first segment, and its symbol's value. */
static int elf_symbol(const char *path, const char *symbol, uint64_t *first_vaddr, uint64_t *value)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret = -ENOENT;
	Elf_Scn *scn = NULL;
	size_t i, nph;
	Elf *e;

	if (fd < 0)
		return -errno;
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF || elf_getphdrnum(e, &nph)) {
		ret = -ENOEXEC;
		goto out;
	}
	*first_vaddr = 0;
	for (i = 0; i < nph; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD) {
			*first_vaddr = ph.p_vaddr - ph.p_offset;
			break;
		}
	}
	while ((scn = elf_nextscn(e, scn)) && ret) {
		GElf_Shdr sh;
		Elf_Data *d;
		size_t k, n;

		if (!gelf_getshdr(scn, &sh) ||
		    (sh.sh_type != SHT_DYNSYM && sh.sh_type != SHT_SYMTAB) || !sh.sh_entsize ||
		    !(d = elf_getdata(scn, NULL)))
			continue;
		n = sh.sh_size / sh.sh_entsize;
		for (k = 1; k < n; k++) {
			GElf_Sym s;
			const char *name;

			if (!gelf_getsym(d, (int)k, &s) || s.st_shndx == SHN_UNDEF ||
			    !(name = elf_strptr(e, sh.sh_link, s.st_name)) || strcmp(name, symbol))
				continue;
			*value = s.st_value;
			ret = 0;
			break;
		}
	}
out:
	if (e)
		elf_end(e);
	close(fd);
	return ret;
}

uint64_t inject_symbol(pid_t pid, const char *module, const char *symbol)
{
	char file[64], line[PATH_MAX + 128], path[PATH_MAX + 64];
	uint64_t start = 0, first_vaddr = 0, value = 0;
	FILE *f;

	snprintf(file, sizeof(file), "/proc/%d/maps", (int)pid);
	f = fopen(file, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		struct proc_map m;

		if (proc_map_parse(line, &m) || m.offset != 0 || m.path[0] != '/')
			continue;
		if (module[0] == '/' ? strcmp(m.path, module) : !name_is(m.path, module))
			continue;
		start = m.start;
		/* As the process sees it: its root may not be ours (a container). */
		snprintf(path, sizeof(path), "/proc/%d/root%s", (int)pid, m.path);
		break;
	}
	fclose(f);
	if (!start || elf_symbol(path, symbol, &first_vaddr, &value))
		return 0;
	/* The mapping at file offset 0 is the first segment's, page-aligned. */
	return start - (first_vaddr & ~(uint64_t)4095) + value;
}
