/* SPDX-License-Identifier: MIT */
/* The sampling signal: chosen free at the start, moved when the program claims it. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include "collector/agent/agent-private.h"
#include "common/proc-status.h"

/*
 * The agent samples with the highest real-time signal that is free: its disposition the
 * default, blocked by no thread, held by no signalfd (docs/pcollect.md, Sampling signal). A
 * program may still take it later: a handler of its own, a mask that blocks it among a few
 * others, a sigwait*() or signalfd() for it. Then, before that call goes on, every timer and
 * event of ours moves to another free signal (agent_signal_switch()), and the signal is the
 * program's for good; with none left, sampling stops and the CPU time after is counted lost
 * (RAW_LOST_NO_SIGNAL). The signals the program took are never taken again.
 */

static sigset_t claimed; /* signals the program took from us: never ours again */

/* Add to set the signals of the hexadecimal mask after key in the file at path. */
static void mask_read(sigset_t *set, const char *path, const char *key)
{
	char buf[2048], *p;
	unsigned long long bits;
	int sig;

	if (proc_read_small(path, buf, sizeof(buf)) <= 0)
		return;
	for (p = buf; p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (strncmp(p, key, strlen(key)))
			continue;
		bits = strtoull(p + strlen(key), NULL, 16);
		for (sig = 1; sig <= 64 && sig < NSIG; sig++)
			if (bits & (1ull << (sig - 1)))
				sigaddset(set, sig);
		return;
	}
}

static bool set_full(const sigset_t *set);

/*
 * The signals some thread blocks (SigBlk) or some signalfd holds (sigmask), added to set. A
 * thread that blocks every signal claims none in particular: our control thread, a thread
 * being created (glibc starts it so), libunwind in our handler.
 */
static void taken_read(sigset_t *set)
{
	sigset_t one;
	char path[300], link[64];
	struct dirent *e;
	DIR *d;
	ssize_t n;

	if ((d = opendir("/proc/self/task"))) {
		while ((e = readdir(d)))
			if (e->d_name[0] != '.') {
				snprintf(path, sizeof(path), "/proc/self/task/%s/status",
					 e->d_name);
				sigemptyset(&one);
				mask_read(&one, path, "SigBlk:");
				if (!set_full(&one))
					sigorset(set, set, &one);
			}
		closedir(d);
	}
	if ((d = opendir("/proc/self/fd"))) {
		while ((e = readdir(d))) {
			if (e->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "/proc/self/fd/%s", e->d_name);
			n = readlink(path, link, sizeof(link) - 1);
			if (n <= 0)
				continue;
			link[n] = '\0';
			if (strcmp(link, "anon_inode:[signalfd]"))
				continue;
			snprintf(path, sizeof(path), "/proc/self/fdinfo/%s", e->d_name);
			mask_read(set, path, "sigmask:");
		}
		closedir(d);
	}
}

int agent_signal_choose(const sigset_t *also)
{
	AGENT_BUSY;
	sigset_t taken;
	int sig;

	sigemptyset(&taken);
	taken_read(&taken);
	for (sig = SIGRTMAX; sig >= SIGRTMIN; sig--) {
		struct sigaction a;

		if (sig == agent.cfg.signo || sigismember(&claimed, sig) == 1 ||
		    sigismember(&taken, sig) == 1 || (also && sigismember(also, sig) == 1))
			continue;
		if (agent_real.sigaction(sig, NULL, &a) || (a.sa_flags & SA_SIGINFO) ||
		    a.sa_handler != SIG_DFL)
			continue;
		return sig;
	}
	return 0;
}

/*
 * A blanket block, as around a critical section or in a thread that leaves signals to
 * others, which claims no signal in particular: every real-time signal is in set, and most
 * of the standard ones a program can block (half of them or more: "all but SIGINT and
 * SIGTERM" is one; the faults, which cannot usefully be blocked, are not counted).
 */
static bool set_full(const sigset_t *set)
{
	int sig, standard = 0, in = 0;

	for (sig = SIGRTMIN; sig <= SIGRTMAX; sig++)
		if (sigismember(set, sig) != 1)
			return false;
	for (sig = 1; sig <= SIGSYS; sig++) {
		if (sig == SIGKILL || sig == SIGSTOP || sig == SIGSEGV || sig == SIGBUS ||
		    sig == SIGFPE || sig == SIGILL || sig == SIGTRAP || sig == SIGSYS)
			continue;
		standard++;
		in += sigismember(set, sig) == 1;
	}
	return 2 * in >= standard;
}

/* The program takes our signal: sampling moves to a free one not in also, or stops. */
static void signal_move(const sigset_t *also)
{
	AGENT_BUSY;
	int from, to;

	pthread_mutex_lock(&agent.control_lock);
	from = agent.cfg.signo;
	if (!agent.active || from <= 0) {
		pthread_mutex_unlock(&agent.control_lock);
		return;
	}
	sigaddset(&claimed, from);
	to = agent_signal_choose(also);
	if (to)
		agent_log("the program took signal %d for itself: sampling moved to signal %d",
			  from, to);
	else
		agent_log("the program took signal %d for itself and no other real-time signal is "
			  "free: sampling stopped",
			  from);
	agent_signal_switch(to);
	pthread_mutex_unlock(&agent.control_lock);
}

bool agent_signal_claim(const sigset_t *set)
{
	int sig = agent.cfg.signo;

	/* The agent's own calls (libunwind's masks in our handler hold ours) claim nothing. */
	if (agent_in_agent || !agent.active || sig <= 0 || !set || sigismember(set, sig) != 1 ||
	    set_full(set))
		return false;
	signal_move(set);
	return true;
}

bool agent_signal_claim_one(int sig)
{
	sigset_t set;

	if (agent_in_agent || !agent.active || sig <= 0 || sig != agent.cfg.signo)
		return false;
	sigemptyset(&set);
	sigaddset(&set, sig);
	signal_move(&set);
	return true;
}

/* ---- interposed signal waits: ours moved away first, our deliveries never returned ------ */

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * sigtimedwait() that never returns a delivery of ours: one queued before the move (or sent
 * to the signal the program waits for when it was ours) is taken and the wait goes on, for
 * what is left of the timeout.
 */
static int wait_filtered(const sigset_t *set, siginfo_t *info, const struct timespec *timeout)
{
	uint64_t end = 0, now;
	struct timespec left;
	siginfo_t si;
	int r;

	if (!agent_real.sigtimedwait)
		agent_resolve();
	agent_signal_claim(set);
	if (timeout) {
		left = *timeout;
		end = now_ns() + (uint64_t)timeout->tv_sec * 1000000000u +
		      (uint64_t)timeout->tv_nsec;
	}
	for (;;) {
		r = agent_real.sigtimedwait(set, &si, timeout ? &left : NULL);
		if (r <= 0 || !agent_signal_info_ours(&si))
			break;
		if (timeout) {
			now = now_ns();
			if (now >= end) {
				errno = EAGAIN;
				return -1;
			}
			left.tv_sec = (time_t)((end - now) / 1000000000u);
			left.tv_nsec = (long)((end - now) % 1000000000u);
		}
	}
	if (r > 0 && info)
		*info = si;
	return r;
}

AGENT_EXPORT int sigtimedwait(const sigset_t *set, siginfo_t *info, const struct timespec *timeout)
{
	return wait_filtered(set, info, timeout);
}

AGENT_EXPORT int sigwaitinfo(const sigset_t *set, siginfo_t *info)
{
	return wait_filtered(set, info, NULL);
}

AGENT_EXPORT int sigwait(const sigset_t *set, int *sig)
{
	int r;

	do
		r = wait_filtered(set, NULL, NULL);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return errno;
	*sig = r;
	return 0;
}

AGENT_EXPORT int signalfd(int fd, const sigset_t *mask, int flags)
{
	if (!agent_real.signalfd)
		agent_resolve();
	agent_signal_claim(mask);
	return agent_real.signalfd(fd, mask, flags);
}
