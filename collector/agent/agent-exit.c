/* SPDX-License-Identifier: MIT */
/* The ends only threads make: main's pthread_exit, a thread's seccomp strict mode, the last thread.
 */
#include <fcntl.h>
#include <linux/seccomp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "collector/agent/agent-private.h"

/*
 * A process ends when its last thread does, and the C library calls exit(0) when that thread
 * is one it counts (main's pthread_exit, then the last thread's return or pthread_exit).
 * Our control thread is a thread too: once main has ended (a zombie) and the control thread
 * is the only one left, it finishes what it must and returns, so that the C library ends the
 * process from it as it would have from the program's last thread: exit(0), stdout flushed,
 * when main left by pthread_exit; the bare end of the last thread (status 0, nothing flushed)
 * when main left by the exit system call itself (seccomp's strict mode allows no other).
 */

/* Set when main or a thread in strict mode may end the process by ending: look often. */
static _Atomic int watch, main_pthread_exit;

int64_t agent_exit_poll_ns(void)
{
	return atomic_load(&watch) ? AGENT_EXIT_WATCH_NS : AGENT_EXIT_POLL_NS;
}

/* True when the main thread has ended and the calling thread is the only one left. */
static bool last_thread(void)
{
	char buf[1024], *p;
	int fd, field;
	ssize_t n;

	fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = agent_real.read ? agent_real.read(fd, buf, sizeof(buf) - 1)
			    : read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	/* The name in parentheses may hold anything: the fields begin after the last ')'. */
	p = strrchr(buf, ')');
	if (!p || p[1] != ' ' || (p[2] != 'Z' && p[2] != 'X'))
		return false;
	/* Field 20, num_threads, counts the zombie main until the process ends: main and us. */
	for (field = 2; field < 20 && p; field++)
		p = strchr(p + 1, ' ');
	return p && strtol(p + 1, NULL, 10) == 2;
}

bool agent_exit_last_thread(void)
{
	if (!last_thread())
		return false;
	agent_log("the program's last thread ended after its main thread: the process ends");
	/*
	 * After main's pthread_exit the C library calls exit(0) once we return: our destructor
	 * finishes the streams after the program's own exit handlers, as at any exit. After the
	 * exit system call nothing more runs: finish them here.
	 */
	if (!atomic_load(&main_pthread_exit))
		agent_shutdown();
	return true;
}

AGENT_EXPORT void pthread_exit(void *retval)
{
	if (!agent_real.pthread_exit)
		agent_resolve();
	if (agent.active && getpid() == agent_gettid()) {
		atomic_store(&main_pthread_exit, 1);
		atomic_store(&watch, 1);
	}
	agent_real.pthread_exit(retval);
	abort(); /* not reached */
}

/*
 * Seccomp's strict mode allows the calling thread read, write, exit and sigreturn only:
 * our signal handler, our wait records and our memory records would get it killed. Before
 * the mode takes effect the thread's stream is finished (noted as stopped: why), its timer
 * deleted, and nothing of ours runs in it any more; the other threads are sampled on.
 */
static void strict_mode_enter(void)
{
	AGENT_BUSY;
	struct agent_thread *t = agent_self;
	pid_t tid = agent_gettid();

	atomic_store(&watch, 1);
	if (!agent.active)
		return;
	mem_agent_enter(); /* for good: its allocations are not recorded any more */
	agent_in_agent++;  /* and no wrapper of ours records anything in it */
	if (t && agent_thread_end(t, true))
		agent_proc_note(tid, RAW_NOTE_STREAM_STOPPED,
				"it entered seccomp's strict mode: not sampled after it");
	agent_log("thread %d entered seccomp's strict mode: not sampled after it", (int)tid);
}

AGENT_EXPORT int prctl(int option, ...)
{
	unsigned long a[4];
	va_list ap;
	int i;

	va_start(ap, option);
	for (i = 0; i < 4; i++)
		a[i] = va_arg(ap, unsigned long);
	va_end(ap);
	if (!agent_real.prctl)
		agent_resolve();
	if (option == PR_SET_SECCOMP && a[0] == SECCOMP_MODE_STRICT)
		strict_mode_enter();
	return agent_real.prctl(option, a[0], a[1], a[2], a[3]);
}
