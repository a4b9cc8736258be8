/* SPDX-License-Identifier: MIT */
/* A thread's task-clock event (-knob sampling-clock=task-clock): made, answered, given up. */
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "collector/agent/agent-private.h"

/*
 * A task-clock event for t (-knob sampling-clock=task-clock): the kernel's own clock of the
 * time t runs, which fires by high-resolution timer at every interval of it, not at the
 * tick, and is not missed by a thread that runs between ticks. Its overflow sends our signal
 * to t (F_SETSIG, F_SETOWN_EX), and disables it once AGENT_PERF_LIMIT of them found no
 * handler to top the limit up (agent_thread_give(), PERF_EVENT_IOC_REFRESH). exclude_kernel is
 * what an unprivileged process may ask for
 * (perf_event_paranoid 2): an interval that ends in the kernel is counted, and sampled at
 * the next one that ends in user code. False when the event cannot be had: the timer then.
 */
bool agent_thread_perf_open(struct agent_thread *t)
{
	static _Atomic int warned;
	struct f_owner_ex owner = { F_OWNER_TID, t->tid };
	struct perf_event_attr a;
	char why[160];
	int fd, err;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_TASK_CLOCK;
	a.sample_period = agent.cfg.interval_ns;
	a.disabled = 1;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	fd = (int)syscall(SYS_perf_event_open, &a, t->tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0) {
		err = errno;
		goto fail;
	}
	/* Out of the program's way (agent-fd.c); the signal names the number it ends up at. */
	fd = agent_fd_take(fd);
	if (fd < 0) {
		err = -fd;
		goto fail;
	}
	if (fcntl(fd, F_SETSIG, agent.cfg.signo) || fcntl(fd, F_SETOWN_EX, &owner) ||
	    fcntl(fd, F_SETFL, O_ASYNC)) {
		err = errno;
		agent_fd_release(fd);
		goto fail;
	}
	t->perf_last = 0;
	t->perf_carry = 0;
	t->perf_fd = fd;
	t->perf_fd_sig = fd;
	atomic_store(&t->perf_owed, 0);
	atomic_store(&t->perf_unanswered, 0);
	return true;
fail:
	snprintf(why, sizeof(why), "no task-clock event (%s%s)", strerror(err),
		 err == EACCES || err == EPERM ? "; see /proc/sys/kernel/perf_event_paranoid" : "");
	if (!atomic_exchange(&warned, 1))
		agent_log("thread %d: %s: sampled with the CPU-time timer", (int)t->tid, why);
	agent_proc_note(t->tid, RAW_NOTE_TIMER_FALLBACK, why);
	return false;
}

/*
 * A signal that found busy held left its time in the event's count, for the next sample to
 * take; a thread that ends before one does (its holder kept busy through its last
 * overflows: another thread moving its event again and again, stopped by a busy machine)
 * leaves that time to no sample. It is counted lost, reason busy, with its weight: the
 * thread's samples and lost time still add up to its CPU time. Less than an interval is
 * every thread's last part, never counted.
 */
void agent_thread_perf_tail(struct agent_thread *t, uint64_t end)
{
	int64_t tail;

	if (!atomic_exchange(&t->perf_unanswered, 0) || end < t->perf_last)
		return;
	tail = t->perf_carry + (int64_t)(end - t->perf_last);
	if (tail >= (int64_t)agent.cfg.interval_ns)
		__atomic_add_fetch(&t->lost_weight[RAW_LOST_BUSY],
				   (uint64_t)tail / agent.cfg.interval_ns, __ATOMIC_RELAXED);
}

void agent_thread_perf_close(struct agent_thread *t)
{
	if (t->perf_fd < 0)
		return;
	agent_fd_release(t->perf_fd);
	t->perf_fd = -1;
	t->perf_fd_sig = -1;
}

/*
 * The event's overflows are counted down from a limit that every answered one tops up
 * (PERF_EVENT_IOC_REFRESH adds to it): it is armed with two, so an overflow leaves it
 * counting (POLL_IN) and none of the thread's time is lost while the signal is delivered
 * (about 10 us a sample on a VM, 1% at 1 ms); one that finds the limit spent turns the
 * event off (POLL_HUP: the handler came late), and its answer turns it on again, with two.
 * The answer is owed from the signal on and made by whoever holds busy as it lets go: the
 * handler itself, or the code that held busy when the signal came (a region's record, a
 * move of the event's descriptor, the control thread arming a thread again), which a busy
 * machine may stop for milliseconds, long enough for two overflows.
 */
void agent_thread_give(struct agent_thread *t)
{
	int owed, expected;

	/* Without task-clock events nothing is ever owed: no full barrier on the hot paths
	   (every sample, every recorded allocation). */
	if (!agent.cfg.task_clock) {
		atomic_store_explicit(&t->busy, 0, memory_order_release);
		return;
	}
	for (;;) {
		owed = atomic_load_explicit(&t->perf_owed, memory_order_relaxed)
			       ? atomic_exchange(&t->perf_owed, 0)
			       : 0;
		/* Paused, the event stays off: its arming refreshes it (agent-thread.c). */
		if (owed && t->perf_fd >= 0 && !agent_paused())
			ioctl(t->perf_fd, PERF_EVENT_IOC_REFRESH,
			      owed < AGENT_PERF_LIMIT ? owed : AGENT_PERF_LIMIT);
		atomic_store(&t->busy, 0);
		/* A signal that found busy held after the exchange: its answer is still ours,
		   unless its handler (or another holder) has busy now and makes it. */
		expected = 0;
		if (!atomic_load(&t->perf_owed) ||
		    !atomic_compare_exchange_strong(&t->busy, &expected, 1))
			return;
	}
}

void agent_thread_perf_drop(struct agent_thread *t)
{
	uint64_t count;

	/* Its time since the last sample, from the event while it is still ours. */
	if (read(t->perf_fd, &count, sizeof(count)) == (ssize_t)sizeof(count) &&
	    count >= t->perf_last)
		t->perf_carry += (int64_t)(count - t->perf_last);
	t->perf_dropped_ns = agent_thread_cpu_used(t);
	t->perf_fd = -1;
	t->perf_fd_sig = -1;
	atomic_store(&t->perf_dropped, true);
}
