/* SPDX-License-Identifier: MIT */
/* The sampling handler, and the signal functions interposed so programs keep theirs. */
#include <dlfcn.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "collector/agent/agent-private.h"
#include "collector/agent/agent-unwind.h"

/*
 * The agent samples with a real-time signal (the highest one free at the start unless
 * PCOLLECT_SIGNAL says which: agent-signal.c), not SIGPROF, so a program's own SIGPROF and
 * setitimer(ITIMER_PROF) are left entirely to it. Our timers carry AGENT_COOKIE in si_value
 * with si_code SI_TIMER, and our task-clock events (-knob sampling-clock=task-clock) come with
 * si_code POLL_IN or POLL_HUP and the event's descriptor in si_fd: any other delivery of the
 * signal is the program's, and goes to the disposition it asked for, which sigaction()/signal()
 * record here instead of installing (a handler of its own moves us to another signal).
 */

struct agent_real agent_real;

static struct sigaction app_action; /* the program's disposition of our signal */

/* True when fn is a function of the agent itself. */
AGENT_EARLY static bool ours_fn(void *fn)
{
	Dl_info a, b;

	return fn && dladdr(fn, &a) && dladdr((void *)agent_resolve, &b) &&
	       a.dli_fbase == b.dli_fbase;
}

/*
 * What the program would call without us. Preloaded, the next definition after ours
 * (RTLD_NEXT). Attached (loaded last, RTLD_GLOBAL), the program's own first definition
 * (RTLD_DEFAULT): a sanitizer runtime's interceptor where one is preloaded, else the C
 * library's; never ours, should this agent have been preloaded idle. Early (not
 * instrumented): a sanitizer runtime calls dl_iterate_phdr, ours, before it has set up.
 */
AGENT_EARLY static void *next_fn(const char *name)
{
	void *fn;

	if (agent.attached && (fn = dlsym(RTLD_DEFAULT, name)) && !ours_fn(fn))
		return fn;
	return dlsym(RTLD_NEXT, name);
}

AGENT_EARLY void agent_resolve(void)
{
#define RESOLVE(name) agent_real.name = next_fn(#name)
	RESOLVE(sigaction);
	RESOLVE(signal);
	RESOLVE(sigprocmask);
	RESOLVE(pthread_sigmask);
	RESOLVE(pthread_create);
	RESOLVE(pthread_setname_np);
	RESOLVE(dlopen);
	RESOLVE(dlmopen);
	RESOLVE(dlclose);
	RESOLVE(dl_iterate_phdr);
	RESOLVE(execve);
	RESOLVE(execvpe);
	RESOLVE(fexecve);
	RESOLVE(posix_spawn);
	RESOLVE(posix_spawnp);
	RESOLVE(mmap);
	RESOLVE(mprotect);
	RESOLVE(close);
	RESOLVE(close_range);
	RESOLVE(closefrom);
	RESOLVE(dup2);
	RESOLVE(dup3);
	RESOLVE(pipe2);
	RESOLVE(read);
	RESOLVE(sigtimedwait);
	RESOLVE(signalfd);
	RESOLVE(pthread_exit);
	RESOLVE(prctl);
#undef RESOLVE
	agent_real.exit_ = (void (*)(int))next_fn("_exit");
	/* Before any handler runs: syscall() is one of them, and the handler calls it. */
	agent_wait_pthread_resolve();
	agent_wait_sleep_resolve();
	agent_wait_io_resolve();
}

static void lost(struct agent_thread *t, unsigned reason, uint64_t weight)
{
	__atomic_add_fetch(&t->lost_count[reason], 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&t->lost_weight[reason], weight, __ATOMIC_RELAXED);
}

void agent_ring_turn(struct agent_thread *t, int64_t now)
{
	agent_wait_thread_turn(t);
	agent_mpi_thread_turn(t, now);
	raw_writer_turn(&t->w, AGENT_RING_ROOM);
	stack_table_reset(&t->stacks);
	t->ring_seq = t->w.seq;
}

void agent_ring_check(struct agent_thread *t)
{
	if (agent.cfg.ring_ns && t->ring_seq != t->w.seq) {
		stack_table_reset(&t->stacks);
		t->ring_seq = t->w.seq;
	}
}

uint64_t agent_stack_id_of(struct agent_thread *t, const uint64_t *ips, uint32_t n, uint32_t flags,
			   uint64_t *hashp)
{
	uint64_t hash, id;

	agent_ring_check(t);
	hash = stack_table_hash(ips, n, flags);
	id = stack_table_find(&t->stacks, hash, ips, n);

	if (hashp)
		*hashp = hash;
	if (id)
		return id;
	id = stack_table_add(&t->stacks, hash, ips, n);
	if (!id) {
		/* Full: start over; ids keep growing so old ones are never reused. */
		stack_table_reset(&t->stacks);
		id = stack_table_add(&t->stacks, hash, ips, n);
		if (!id)
			return 0;
	}
	if (raw_writer_stack(&t->w, id, flags, ips, n)) {
		/* The table must not name a stack the stream lacks. */
		stack_table_reset(&t->stacks);
		return 0;
	}
	return id;
}

uint64_t agent_stack_id(struct agent_thread *t, uint32_t n, uint32_t flags)
{
	return agent_stack_id_of(t, t->ips, n, flags, NULL);
}

uint64_t agent_stack_record(struct agent_thread *t, uint32_t n, uint32_t flags)
{
	/* A stack with Python frames is recorded as one mixed stack (agent-python.c). */
	uint64_t id = agent_python_sample(t, n, flags);

	return id ? id : agent_stack_id(t, n, flags);
}

/* A record could not be written: a full window stops the thread's sampling. */
static void write_failed(struct agent_thread *t, uint64_t weight)
{
	if (t->w.full)
		agent_thread_write_failed(t, weight);
	else
		lost(t, RAW_LOST_BUFFER, weight);
}

/*
 * own: the signal came while the agent's own code ran in this thread (its module scan at a
 * dlopen, or a record it held the signal back for, delivered when it unblocks): the sample
 * is the collector's overhead, recorded as such (RAW_STACK_AGENT, no frames), never in the
 * program's functions that called into us. Nothing is unwound for it: the handler takes no
 * lock the interrupted agent code may hold (the loader's, an arena's, the unwinder's).
 */
static void sample(struct agent_thread *t, uint64_t weight, void *uc, bool own)
{
	AGENT_BUSY;
	struct agent_unwind u = { .ips = t->ips, .max = agent.cfg.stack_depth };
	int expected = 0;
	uint64_t id;
	int64_t now;

	if (atomic_load_explicit(&t->state, memory_order_acquire) != AGENT_THREAD_LIVE)
		return;
	/* A signal still pending when the collection was paused is not a sample. */
	if (agent_paused()) {
		/* Past -data-limit the samples not taken are counted: no clock is blamed. */
		if (agent_data_limit_hit())
			lost(t, RAW_LOST_DATA_LIMIT, weight);
		return;
	}
	if (!atomic_compare_exchange_strong(&t->busy, &expected, 1)) {
		lost(t, RAW_LOST_BUSY, weight);
		return;
	}
	if (t->write_stopped) {
		agent_thread_write_failed(t, weight);
		goto out;
	}
	if (agent.cfg.duration_ns && agent.cfg.start_monotonic_ns &&
	    agent_now_mono() - agent.cfg.start_monotonic_ns >= agent.cfg.duration_ns) {
		atomic_store(&agent.stopped, 1);
		goto out;
	}
	/*
	 * Inside dlopen/dlclose/dl_iterate_phdr this thread may hold the loader's lock, and the
	 * unwinder would take it again (or walk a list being changed): skip the sample.
	 */
	if (agent_in_dl && !own) {
		t->dl_weight += weight;
		goto out;
	}
	/* Held back in a loader call the agent did not see return, or the time of a thread
	   without a signal for a while (agent_threads_rearm()): this sample takes it. */
	if ((t->dl_weight || t->gap_weight) && !own) {
		weight += t->dl_weight + t->gap_weight;
		t->dl_weight = 0;
		t->gap_weight = 0;
	}
	now = raw_header_now(&t->hdr);
	if (own) {
		id = agent_stack_id(t, 0, RAW_STACK_AGENT);
	} else if (!agent_unwind_signal(&u, uc)) {
		lost(t, RAW_LOST_UNWIND, weight);
		goto out;
	} else {
		id = agent_stack_record(t, u.n, u.flags);
	}
	if (!id || raw_writer_sample(&t->w, now, id, weight)) {
		write_failed(t, weight);
		goto out;
	}
	t->samples++;
	/*
	 * Its CPU time on record now and then (AGENT_CPU_LOOK_NS), written here with the writer
	 * already held: a process ended by a signal it does not handle (a pool's TERM) runs no
	 * code of ours, and its threads write no THREAD_END; their figure is then the last one,
	 * and pfinalize adds their samples after it. (The control thread wrote it once, holding
	 * every thread's writer: stopped by a busy machine meanwhile, it made their signals lost.)
	 */
	if (now - t->cpu_looked_ns >= AGENT_CPU_LOOK_NS &&
	    !raw_writer_thread_cpu(&t->w, (uint32_t)t->tid, now, agent_thread_cpu_used(t)))
		t->cpu_looked_ns = now;
	agent_mpi_thread_tick(t, now);
	agent_wait_thread_tick(t);
	/*
	 * Every record is in the file already (a killed program loses nothing); closing the
	 * chunk now and then puts a checksum on what was written, so damage costs little.
	 */
	if (now - t->last_flush_ns >= AGENT_FLUSH_NS ||
	    (agent.cfg.ring_ns && !raw_writer_room(&t->w, AGENT_RING_ROOM))) {
		agent_thread_write_lost(t);
		if (agent.cfg.ring_ns)
			agent_ring_turn(t, now);
		else
			raw_writer_flush(&t->w);
		t->last_flush_ns = now;
	}
	agent_account(t);
out:
	agent_thread_give(t);
}

void agent_dl_record(uintptr_t real)
{
	struct agent_thread *t = agent_self;
	uint64_t weight, id;
	sigset_t old;

	agent_in_agent++; /* the unwind and the record are ours: a sample meanwhile is our own */
	/* read after that: a sample of the program's between agent_dl_return()'s look and here
	   took the weight with it */
	weight = t->dl_weight;
	t->dl_weight = 0;
	if (!weight)
		goto out;
	id = agent_call_stack_here(t, real);
	if (agent_wait_writer_take(t, &old)) {
		if (!id || raw_writer_sample(&t->w, raw_header_now(&t->hdr), id, weight))
			write_failed(t, weight);
		else
			t->samples++;
		agent_wait_writer_give(t, &old);
	} else {
		lost(t, RAW_LOST_BUSY, weight);
	}
out:
	agent_in_agent--;
}

/* A delivery of our signal that is not one of our timers: do what the program asked. */
static void forward(int sig, siginfo_t *si, void *uc)
{
	struct sigaction a = app_action;
	sigset_t old, mask;

	if (!(a.sa_flags & SA_SIGINFO) && a.sa_handler == SIG_IGN)
		return;
	if (!(a.sa_flags & SA_SIGINFO) && a.sa_handler == SIG_DFL) {
		/* The default action of a real-time signal ends the process: let it. */
		struct sigaction d;

		memset(&d, 0, sizeof(d));
		d.sa_handler = SIG_DFL;
		agent_real.sigaction(sig, &d, NULL);
		sigemptyset(&mask);
		sigaddset(&mask, sig);
		agent_real.pthread_sigmask(SIG_UNBLOCK, &mask, NULL);
		syscall(SYS_tgkill, getpid(), syscall(SYS_gettid), sig);
		return;
	}
	mask = a.sa_mask;
	sigdelset(&mask, agent.cfg.signo);
	agent_real.pthread_sigmask(SIG_BLOCK, &mask, &old);
	if (a.sa_flags & SA_RESETHAND) {
		memset(&app_action, 0, sizeof(app_action));
		app_action.sa_handler = SIG_DFL;
	}
	if (a.sa_flags & SA_SIGINFO)
		a.sa_sigaction(sig, si, uc);
	else
		a.sa_handler(sig);
	agent_real.pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/*
 * The weight of a task-clock sample: the thread's time since the last one, read from the
 * event, in intervals (rounded, the rest carried to the next sample, so the sum stays
 * exact). 0: nothing to record (stale signal, or sampling stopped). With t->busy held.
 */
static uint64_t task_clock_weight(struct agent_thread *t, int fd)
{
	int64_t interval = (int64_t)agent.cfg.interval_ns, w;
	uint64_t count;

	/* Moved (agent-fd.c) or not, the event's signals name its first number. */
	if (t->perf_fd < 0 || fd != t->perf_fd_sig || agent_paused())
		return 0;
	if (read(t->perf_fd, &count, sizeof(count)) != (ssize_t)sizeof(count) ||
	    count < t->perf_last)
		return 1;
	t->perf_carry += (int64_t)(count - t->perf_last);
	t->perf_last = count;
	atomic_store_explicit(&t->perf_unanswered, 0, memory_order_relaxed);
	w = (t->perf_carry + interval / 2) / interval;
	t->perf_carry -= w * interval;
	return w > 0 ? (uint64_t)w : 0;
}

static void on_signal(int sig, siginfo_t *si, void *uc)
{
	struct agent_thread *t;
	int saved = errno;
	bool perf, own = agent_in_agent > 0;
	uint64_t weight;

	if (!agent_signal_info_ours(si)) {
		forward(sig, si, uc);
		errno = saved;
		return;
	}
	perf = si->si_code != SI_TIMER; /* a task-clock event's, else a timer's */
	/* A blocking call this interrupted is resumed by its interposer (agent-wait.c). */
	agent_sig_count++;
	t = agent_self;
	if (!t || atomic_load_explicit(&t->state, memory_order_relaxed) != AGENT_THREAD_LIVE) {
		/* A thread that existed before the agent: its slot was made with its tid (a
		   slot of an earlier attachment, ended, is never used again). */
		t = agent_thread_find_tid((pid_t)syscall(SYS_gettid));
		if (!t || !t->external)
			goto out;
		agent_self = t;
	}
	if (perf) {
		/* The event's descriptor may be moved by another thread's dup2() (agent-fd.c). */
		int expected = 0;

		atomic_fetch_add(&t->perf_owed, si->si_code == POLL_HUP ? AGENT_PERF_LIMIT : 1);
		if (!atomic_compare_exchange_strong(&t->busy, &expected, 1)) {
			/* Its holder answers the event; its time stays in the event's count, the
			   next sample's weight (or, at the thread's end, lost time:
			   agent_thread_perf_tail()). */
			atomic_fetch_add_explicit(&t->perf_unanswered, 1, memory_order_relaxed);
			lost(t, RAW_LOST_BUSY, 0);
			goto out;
		}
		weight = task_clock_weight(t, si->si_fd);
		agent_thread_give(t);
	} else
		weight = 1 + (uint64_t)(si->si_overrun > 0 ? si->si_overrun : 0);
	if (weight)
		sample(t, weight, uc, own);
out:
	errno = saved;
}

static int handler_install(int sig)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_signal;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	return agent_real.sigaction(sig, &sa, NULL);
}

int agent_signal_install(void)
{
	if (agent.cfg.signo <= 0)
		return 0; /* none free: nothing sampled (agent-signal.c) */
	if (agent_real.sigaction(agent.cfg.signo, NULL, &app_action))
		return -1;
	return handler_install(agent.cfg.signo);
}

/* The program's disposition of sig back, with every pending instance of ours discarded. */
static void handler_remove(int sig, const struct sigaction *app)
{
	struct sigaction ign;

	memset(&ign, 0, sizeof(ign));
	ign.sa_handler = SIG_IGN;
	sigemptyset(&ign.sa_mask);
	agent_real.sigaction(sig, &ign, NULL);
	agent_real.sigaction(sig, app, NULL);
}

/*
 * Detach: the program's own disposition of our signal back, and nothing of ours left pending.
 * Ignoring a signal discards every pending instance of it in every thread (POSIX), whether
 * blocked or not, and our timers and events are gone already: none can come after.
 */
void agent_signal_restore(void)
{
	if (agent.cfg.signo > 0)
		handler_remove(agent.cfg.signo, &app_action);
}

void agent_signal_switch(int to)
{
	int from = agent.cfg.signo;
	struct sigaction left = app_action, prev;

	memset(&prev, 0, sizeof(prev));
	prev.sa_handler = SIG_DFL;
	if (to > 0 && (agent_real.sigaction(to, NULL, &prev) || handler_install(to))) {
		agent_log("cannot install the signal handler on signal %d: %s", to,
			  strerror(errno));
		to = 0;
	}
	/* Deliveries of the signal left go on to the program's disposition until it is back. */
	__atomic_store_n(&agent.cfg.signo, to, __ATOMIC_SEQ_CST);
	agent_threads_move_signal();
	/* No timer of ours sends it any more: what is still pending of it is discarded. */
	if (from > 0)
		handler_remove(from, &left);
	app_action = prev;
}

bool agent_signal_info_ours(const siginfo_t *si)
{
	return (si->si_code == SI_TIMER && si->si_value.sival_ptr == AGENT_COOKIE) ||
	       ((si->si_code == POLL_IN || si->si_code == POLL_HUP) &&
		agent_perf_fd_ours(si->si_fd));
}

void agent_block_sampling(sigset_t *old)
{
	sigset_t mask;

	sigemptyset(&mask);
	sigaddset(&mask, agent.cfg.signo);
	agent_real.pthread_sigmask(SIG_BLOCK, &mask, old);
}

void agent_restore_mask(const sigset_t *old)
{
	agent_real.pthread_sigmask(SIG_SETMASK, old, NULL);
}

/* ---- interposed signal functions -------------------------------------------------------- */

static bool ours(int sig)
{
	return agent.active && sig > 0 && sig == agent.cfg.signo;
}

/* A handler of the program's own: the signal is the program's from now on. */
static bool installs_handler(const struct sigaction *act)
{
	return act && ((act->sa_flags & SA_SIGINFO) ||
		       (act->sa_handler != SIG_DFL && act->sa_handler != SIG_IGN));
}

AGENT_EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	if (!agent_real.sigaction)
		agent_resolve();
	if (!ours(sig) || (installs_handler(act) && agent_signal_claim_one(sig)))
		return agent_real.sigaction(sig, act, old);
	if (old)
		*old = app_action;
	if (act)
		app_action = *act;
	return 0;
}

AGENT_EXPORT sighandler_t signal(int sig, sighandler_t handler)
{
	sighandler_t prev;

	if (!agent_real.signal)
		agent_resolve();
	if (!ours(sig) || (handler != SIG_DFL && handler != SIG_IGN && handler != SIG_ERR &&
			   agent_signal_claim_one(sig)))
		return agent_real.signal(sig, handler);
	prev = (app_action.sa_flags & SA_SIGINFO) ? (sighandler_t)(void *)app_action.sa_sigaction
						  : app_action.sa_handler;
	memset(&app_action, 0, sizeof(app_action));
	app_action.sa_handler = handler;
	app_action.sa_flags = SA_RESTART;
	return prev;
}

/*
 * The program may block what it likes. Blocking our signal alone, or with others, claims it
 * (sampling moves to another signal first); blocking every signal, as around a critical
 * section, does not: ours is left out, since a blocked thread is not sampled.
 */
static const sigset_t *mask_without_ours(int how, const sigset_t *set, sigset_t *copy)
{
	if (!set || how == SIG_UNBLOCK || !agent.active || agent.cfg.signo <= 0 ||
	    sigismember(set, agent.cfg.signo) != 1 || agent_signal_claim(set))
		return set;
	*copy = *set;
	sigdelset(copy, agent.cfg.signo);
	return copy;
}

AGENT_EXPORT int sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
	sigset_t copy;

	if (!agent_real.sigprocmask)
		agent_resolve();
	return agent_real.sigprocmask(how, mask_without_ours(how, set, &copy), old);
}

AGENT_EXPORT int pthread_sigmask(int how, const sigset_t *set, sigset_t *old)
{
	sigset_t copy;

	if (!agent_real.pthread_sigmask)
		agent_resolve();
	return agent_real.pthread_sigmask(how, mask_without_ours(how, set, &copy), old);
}
