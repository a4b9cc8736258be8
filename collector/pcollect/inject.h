/* SPDX-License-Identifier: MIT */
/* Calling a function in a thread of another process with ptrace, as a debugger's "call" does. */
#ifndef PCOLLECT_COLLECTOR_INJECT_H
#define PCOLLECT_COLLECTOR_INJECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>

/*
 * One thread of a process borrowed for calls (x86-64). inject_stop() seizes a thread and stops
 * it at a point where it holds none of the C library's locks that a call into dlopen() may
 * take: in the program's own code, or blocked in a waiting system call. Its registers
 * (general and extended), its signal mask and whether it was in a system call are saved;
 * during a call every signal but the synchronous faults is blocked in it, so that a signal
 * meant for the program waits, undisturbed, for the thread's own code; inject_release() puts
 * everything back, and an interrupted system call restarts as after any debugger's stop.
 * The process's other threads run on all along, so a lock one of them holds is released.
 */
struct inject {
	pid_t pid;                    /* the process */
	pid_t tid;                    /* the thread borrowed, once stopped; 0 before */
	struct user_regs_struct regs; /* as found */
	uint8_t xstate[16384];        /* XSAVE area as found (NT_X86_XSTATE) */
	size_t xstate_len;            /* 0: none, fpregs instead */
	struct user_fpregs_struct fpregs;
	uint64_t mask;       /* signal mask as found */
	uint64_t scratch;    /* next free byte below the red zone, going down */
	uint64_t scratch_lo; /* the lowest address of its stack that is mapped */
	int attempts;        /* stops it took to find a safe point */
	char err[512];       /* after a failure: why, in words */
};

/*
 * Seize one thread of pid and stop it at a safe point (retrying for a few seconds). 0, or
 * -errno with in->err set: -EPERM (ptrace refused: the caller words the fix), -ESRCH (no
 * such process), -EAGAIN (no safe point found), -ENOEXEC (no C library to call).
 */
int inject_stop(struct inject *in, pid_t pid);
/* Copy len bytes below the thread's stack pointer; their address in the process, or 0. */
uint64_t inject_put(struct inject *in, const void *data, size_t len);
/* Call fn(a0, a1) in the thread; *ret is what it returned (rax). 0 or -errno with in->err. */
int inject_call(struct inject *in, uint64_t fn, uint64_t a0, uint64_t a1, uint64_t *ret,
		int timeout_ms);
/* Read a NUL-terminated string at addr of the process into buf. 0 or -errno. */
int inject_read_string(struct inject *in, uint64_t addr, char *buf, size_t size);
/* Give the thread back as it was found and let it go. 0 or -errno. */
int inject_release(struct inject *in);

/*
 * The address in pid of symbol, defined in the mapped ELF file whose name starts with
 * module (its last component: "libc.so") or that is module (a path starting with '/').
 * Returns the address, or 0 when no such module is mapped or it has no such symbol.
 */
uint64_t inject_symbol(pid_t pid, const char *module, const char *symbol);

#endif
