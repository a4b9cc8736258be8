/* SPDX-License-Identifier: MIT */
/* The preloaded agent's internal state, shared by its files (never exported). */
#ifndef PCOLLECT_COLLECTOR_AGENT_PRIVATE_H
#define PCOLLECT_COLLECTOR_AGENT_PRIVATE_H

#include <dlfcn.h>
#include <limits.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "common/agent-env.h"
#include "collector/agent/agent-memory.h"
#include "collector/agent/python/python.h"
#include "collector/agent/stack-table.h"
#include "common/raw-python.h"
#include "common/raw-stream.h"
#include "common/raw-window.h"

#define AGENT_EXPORT __attribute__((visibility("default")))
#define AGENT_TLS    __attribute__((tls_model("initial-exec")))
/*
 * For the little the program's start may run before a sanitizer runtime has set itself up
 * (AddressSanitizer's own start calls dl_iterate_phdr, which we interpose): left out of
 * AddressSanitizer's instrumentation, whose shadow memory does not exist yet.
 */
#define AGENT_EARLY __attribute__((no_sanitize("address")))

/*
 * Streams are written straight into MAP_SHARED windows of their files (common/raw-window.h):
 * no descriptor of ours stays open, and what was written survives abort(), a crash or
 * SIGKILL without any handler of ours.
 */
#define AGENT_WINDOW_SIZE (256u << 10) /* bytes of a thread stream's mapped window */
#define AGENT_PROC_WINDOW (64u << 10)  /* bytes of a process stream's window */
#define AGENT_CHUNK_MAX                                                                            \
	(32u << 10) /* a chunk is closed once its records pass this: damage                        \
		       costs at most this much */
_Static_assert(AGENT_DATA_LIMIT_MIN >= AGENT_CHUNK_MAX, "-data-limit under one chunk");
#define AGENT_RESERVE                                                                              \
	4096                            /* bytes each window keeps for a stream's closing records  \
					   (lost counts, Python notes, thread end) */
#define AGENT_STACK_SLOTS  8192         /* distinct stacks per thread before a table reset */
#define AGENT_STACK_FRAMES (256u << 10) /* frames of distinct stacks per thread */
/* The same under an address-space limit (RLIMIT_AS): 160 KiB a thread, not 2.2 MiB */
#define AGENT_STACK_SLOTS_LIMITED  1024
#define AGENT_STACK_FRAMES_LIMITED (16u << 10)
#define AGENT_MAX_THREADS          16384 /* thread slots per process, reused after exit */
/*
 * -ring-buffer: the records a chunk keeps room for once the agent ends it (a stack, its
 * record, the sums): the writer's own limit is this much higher, so that the agent, not the
 * writer, ends every chunk (agent_ring_turn()).
 */
#define AGENT_RING_ROOM (16u << 10)
#define AGENT_FLUSH_NS                                                                             \
	1000000000ll /* the handler closes (checksums) a chunk at least this                       \
			often */

struct agent_config {
	char result_dir[PATH_MAX];
	char agent_path[PATH_MAX];
	char preload[3 * PATH_MAX];   /* what LD_PRELOAD starts with: the agent, the MPI shims */
	char mpi_shims[2 * PATH_MAX]; /* -trace-mpi: the shims, ':'-separated; "" without */
	uint64_t mpi_threshold_ns;    /* an MPI call this long is written with its own stack */
	char host[64];
	uint64_t interval_ns;
	uint32_t stack_depth;
	uint64_t duration_ns;        /* 0: no limit */
	uint64_t start_monotonic_ns; /* the launcher's CLOCK_MONOTONIC at launch */
	uint64_t data_limit_bytes;   /* 0: unlimited */
	uint64_t ring_ns;            /* -ring-buffer: the launcher keeps this much; 0: all */
	bool follow_child;
	int rank;
	int signo;         /* the sampling signal now (agent-signal.c); 0: none free, no sampling */
	bool signo_forced; /* -knob sampling-signal=N (PCOLLECT_SIGNAL): not chosen at the start */
	bool task_clock;   /* -knob sampling-clock=task-clock */
	bool waits;        /* record waits (-collect threading) */
	uint64_t wait_threshold_ns; /* waits this long get their own stack */
	bool memory;                /* memory-consumption: allocations recorded, no CPU samples */
	uint64_t mem_sample_bytes;  /* -knob sampling=bytes:N; 0: every allocation */
	pid_t launcher_pid;
	mode_t file_mode; /* of the files we create: result_file_mode() */
};

enum agent_thread_state {
	AGENT_THREAD_FREE = 0, /* slot unused, may be taken by a new thread */
	AGENT_THREAD_LIVE,     /* recording */
	AGENT_THREAD_ENDED,    /* stream finished; the handler must not touch it */
};

/* A thread's Python walker and the buffers of its mixed stacks (agent-python.c). */
struct agent_py {
	struct pyagent_thread pt;
	int npy;  /* frames of the last capture in frames[] (0 or less: none) */
	bool cut; /* that capture stopped short */
	/* frames[] are those of the allocations whose Python key is frames_key (0: none), made
	   while the stream was at chunk frames_seq (agent_python_stack()) */
	uint64_t frames_key;
	uint32_t frames_seq;
	struct raw_py_frame frames[PYAGENT_MAX_FRAMES];
	uint64_t key[RAW_MAX_DEPTH + 64 + 1 + 2 * PYAGENT_MAX_FRAMES]; /* stack table key */
	uint8_t scratch[RAW_PY_STACK_SCRATCH(RAW_MAX_DEPTH + 64, PYAGENT_MAX_FRAMES)];
};

/*
 * Overflows a task-clock event may have before its handler has run: at the first it keeps
 * counting (its signal is being delivered), at the second it stops (agent-sample.c).
 */
#define AGENT_PERF_LIMIT 2

/*
 * Waits (-collect threading, agent-wait.c): the call sites of a thread's short waits, each
 * with the stack taken at its first wait and the waits counted since the last WAIT_SUM.
 */
#define AGENT_WAIT_SITES   512 /* call sites per thread before the table is written out */
#define AGENT_ORIGIN_CACHE 64  /* call sites of OpenMP regions whose stacks a thread keeps */
#define AGENT_WAIT_NAMED   32  /* descriptors a thread has named (OBJECT records) */
#define AGENT_WAIT_FLUSH_NS                                                                        \
	1000000000ll /* short waits are written out at least this often                            \
			while a thread waits */
/*
 * A read, write, accept or connect shorter than this cannot have blocked (a sleep and a
 * wake-up cost more): it is no wait, and longer ones below the threshold are short waits
 * only on descriptors that can block (pipes, sockets, terminals...).
 */
#define AGENT_WAIT_IO_FLOOR_NS 5000
/* A thread's short waits are written this often by its sampling handler (on the CPU). */
#define AGENT_WAIT_TICK_NS 100000000ull
/*
 * A wait in progress this long is put on record by the control thread (WAIT_OPEN), again
 * every second, or every tenth of its length so far when longer (a process killed in it ends
 * it there, docs/pfinalize.md).
 */
#define AGENT_WAIT_SEEN_NS     1000000000ull
#define AGENT_WAIT_OPEN_NS     200000000ull
#define AGENT_WAIT_OPEN_STACKS 64          /* call sites whose stack a wait's start finds known */
#define AGENT_WAIT_PY_EVERY_NS 10000000ull /* a Python thread's frames at a wait's start */

struct agent_wait_site {
	uint64_t key;      /* 0: free */
	uint64_t stack_id; /* the stack of the site's first wait */
	uint64_t object;
	uint32_t kind;  /* enum raw_wait_kind */
	uint32_t count; /* waits since the last WAIT_SUM */
	uint64_t total_ns;
};

struct agent_omp_region;

/* One blocking call being measured. */
struct agent_wait_call {
	uint64_t start_ns; /* CLOCK_MONOTONIC */
	uintptr_t site;    /* the return address into the caller */
	uintptr_t sp;      /* the interposer's frame: tells call paths apart */
	unsigned sigs;     /* agent_sig_count at the start */
};

#define AGENT_OMP_NEST 4 /* OMPT waits begun and not ended, per thread */

/* A thread's OpenMP state (agent-omp.c). */
struct agent_omp_thread {
	/* libgomp: the implicit barrier this thread reached last, written once the region's end
	   is known (when the thread runs our code next, or ends). */
	struct agent_omp_region *region; /* NULL: none */
	uint64_t arrived_ns;             /* CLOCK_MONOTONIC */
	uint64_t stack_id;
	uint64_t key; /* its call site, for a short wait */
	/* OMPT (libomp): the region the thread works in (a reference), and the waits it is in. */
	struct agent_omp_region *ompt_region;
	/* The stack of the thread's first implicit barrier: for one still open when the thread
	   ends (a worker's last barrier ends only when it is woken for another region). */
	uint64_t ompt_barrier_stack;
	uint32_t depth;
	struct {
		struct agent_wait_call call;
		bool measured;
		bool implicit; /* a region's implicit barrier: it ends with the region */
		uint32_t kind;
		uint64_t object;
	} waits[AGENT_OMP_NEST];
};

struct agent_wait_thread {
	_Atomic int lock; /* the table: its thread, or the thread that ends it at exit */
	uint32_t used;
	uint64_t last_flush_ns; /* CLOCK_MONOTONIC of the last WAIT_SUM batch */
	uint64_t lost;          /* waits not recorded (writer in use, stream full) */
	struct agent_wait_site sites[AGENT_WAIT_SITES];
	struct {
		int fd;
		uint64_t hash; /* of the name last written for it */
	} named[AGENT_WAIT_NAMED];
	uint32_t nnamed;
	struct agent_omp_thread omp;
	/*
	 * The wait in progress (agent_wait_open()): what a WAIT_OPEN record needs, set by the
	 * thread before it blocks, so the control thread can put it on record while it lasts
	 * (a program ended by a signal runs no code of ours to tell it). state is stored last.
	 */
	struct {
		_Atomic int state; /* 1 while the wait lasts */
		bool written;      /* its WAIT_OPEN is in the stream: its end must be a WAIT */
		uint64_t seen_ns;  /* CLOCK_MONOTONIC when its last WAIT_OPEN was written */
		const void *call;  /* the struct agent_wait_call that opened it */
		uintptr_t sp; /* its interposer's frame (a later wait's above it: it is gone) */
		uint64_t start_ns; /* CLOCK_MONOTONIC */
		uint64_t stack;
		uint64_t object;
		uint32_t kind;
	} open;
	uint64_t open_py_ns[2]; /* CLOCK_MONOTONIC when a wait's start last took Python frames:
				   [1] reads and writes, [0] the other waits */
	/* The stacks of the call sites (return address, frame, Python frames) waits began at. */
	struct {
		uint64_t key, stack;
	} open_stacks[AGENT_WAIT_OPEN_STACKS];
};

struct mem_thread;

/* Per-thread recording state. Slots are never freed, only reused, so the handler may read
 * any slot's tid and state without a lock. */
struct agent_thread {
	_Atomic int state; /* enum agent_thread_state */
	_Atomic int busy;  /* 1 while someone uses the writer: handler or thread code */
	pid_t tid;
	pthread_t pthread;
	bool external;  /* existed before the agent started: no code of ours runs in it */
	pid_t proc_tid; /* its name in /proc/self/task when not tid (/proc of another pid
			   namespace: agent_tasks_each()), else 0 */
	bool has_timer;
	timer_t timer;
	/* With -knob sampling-clock=task-clock: the thread's perf task-clock event, or -1 (the
	   timer then), its count at the last sample, and the part of an interval carried over. */
	int perf_fd;
	/* The number O_ASYNC was set through, which its signals name in si_fd (the kernel's
	   fasync entry keeps it): perf_fd's first, kept when the event moves (agent-fd.c). */
	int perf_fd_sig;
	/* Overflows of the event whose signal found busy held: the refresh they are owed, which
	   whoever lets go of busy makes (agent_thread_give()). */
	_Atomic int perf_owed;
	/* Of those, the ones since the count was last read for a sample: their time waits in
	   the count for the next sample, or is counted lost at the thread's end
	   (agent_thread_perf_tail()). */
	_Atomic unsigned perf_unanswered;
	/* Its event was given up when a dup2() left it no number (agent-fd.c), at this CPU
	   time (agent_thread_cpu_used()): the control thread arms it again
	   (agent_threads_rearm()). */
	_Atomic bool perf_dropped;
	uint64_t perf_dropped_ns;
	/* Intervals of a time no signal could sample (between the event given up and the
	   thread armed again): the next sample takes them. With busy held. */
	uint64_t gap_weight;
	uint64_t perf_last;
	int64_t perf_carry;
	clockid_t cpu_clock;        /* the thread's CPU-time clock */
	uint64_t cpu_start_ns;      /* its value when this stream's sampling began */
	bool cpu_unarmed;           /* the stream began, its timer not armed yet: cpu_start_ns
				       is taken again at the arming (agent_thread_arm()) */
	struct raw_window_file win; /* the stream's file and its mapped window */
	struct raw_file_header hdr;
	struct raw_writer w;
	bool write_stopped; /* no window could be had: sampling of this thread stopped */
	uint64_t *ips;      /* stack_depth + extra frames */
	size_t ips_len;     /* bytes mapped at ips */
	struct stack_table stacks;
	int64_t last_flush_ns;
	uint32_t ring_seq;  /* -ring-buffer: the chunk whose stacks the table holds */
	uint64_t accounted; /* w.bytes_written already added to the data counter */
	/* Samples not recorded, by enum raw_lost_reason; written as LOST records. */
	uint64_t lost_count[RAW_LOST_REASON_MAX + 1];
	uint64_t lost_weight[RAW_LOST_REASON_MAX + 1];
	/* Intervals sampled inside the loader, recorded at the program's call when it returns
	   (agent_dl_return()); the handler's and this thread's own, never another's. */
	uint64_t dl_weight;
	uint64_t samples;
	int64_t cpu_looked_ns; /* stream time of its last THREAD_CPU (agent-sample.c) */
	bool suspended;        /* streams finished for an exec that may still fail */
	/* No signal was free for sampling (agent-signal.c): the CPU time used since
	   unsampled_from_ns is counted lost (RAW_LOST_NO_SIGNAL) at the stream's end. */
	bool unsampled;
	uint64_t unsampled_from_ns;
	/* Paused (agent-control.c): timer disarmed, and the CPU time meanwhile is not the
	   stream's (THREAD_END counts the CPU time sampling covered). */
	bool paused;
	uint64_t paused_at_ns;         /* its CPU clock when paused */
	uint64_t cpu_paused_ns;        /* CPU time spent paused since the stream began */
	uint64_t cpu_seen_ns;          /* CPU time used, as last seen by the attached agent's scan:
					  the figure for an external thread found gone */
	struct agent_regions *regions; /* open regions (agent-region.c), or NULL */
	/* Python frames, once an interpreter is found; set outside the handler, freed by the
	   thread itself (or a fork child), read by its handler. */
	struct agent_py *_Atomic py;
	/* Its name in Python (agent-python.c): the handler notes its outermost Python frame;
	   the control thread and its end read the name, under agent-python.c's lock. */
	_Atomic uintptr_t py_bottom;
	struct pyagent_tname py_tname;
	/* The handler's look at a new outermost frame (pyagent_thread_self), valid while
	   py_hint_frame holds that frame: written hint_frame 0, hint, hint_frame. */
	struct pyagent_tname py_hint;
	_Atomic uintptr_t py_hint_frame;
	char py_name[256]; /* the name last recorded, "" none */
	/* The thread's MPI call sites (agent-mpi.c), made at its first MPI call; used with the
	   writer held (busy), freed with the slot's other buffers. */
	struct agent_mpi *mpi;
	/* Waits (-collect threading), or NULL; only the thread itself and its end use it. */
	struct agent_wait_thread *wait;
	/* The stacks where the thread began OpenMP regions, by call site (return address,
	   frame, Python frames): a region costs an unwind once per site
	   (agent_origin_stack_at()). Emptied with each new stream. */
	struct {
		uint64_t key, id;
	} origin_cache[AGENT_ORIGIN_CACHE];
	/* The origin of the work it does, as its last ORIGIN record of kind 1 said. */
	pid_t origin_tid;
	uint64_t origin_stack;
	/* memory-consumption: the thread's call-site cache (agent-memory.c), or NULL */
	struct mem_thread *mem;
};

/*
 * The process stream of this image: its process, metric, module and thread-name records,
 * written from thread context under agent.lock with our signal blocked, each record in the
 * file as soon as written.
 */
struct agent_proc {
	bool open;
	bool failed_logged;
	uint64_t accounted;
	uint64_t cpu_start_ns; /* the process's CPU time when the stream was opened */
	int64_t last_flush_ns; /* when agent_proc_written() last closed a chunk */
	struct raw_window_file win;
	struct raw_file_header hdr;
	struct raw_writer w;
};

/* The process-wide state. */
struct agent_state {
	struct agent_config cfg;
	bool active;         /* recording in this process */
	_Atomic int stopped; /* sampling stopped (duration, data limit, exit, trouble) */
	pid_t pid;           /* getpid() of the image, updated after fork */
	uint32_t generation; /* execs this pid went through before this image */
	uint32_t origin;     /* enum raw_process_origin */
	pid_t parent_pid;
	pthread_mutex_t lock; /* thread slots (allocation), the module list, the process stream */
	/* Pause, resume, stop and detach against thread starts and arming (recursive; taken
	   before lock, never in the handler). */
	pthread_mutex_t control_lock;
	_Atomic int paused;     /* applied in this process: timers disarmed */
	uint32_t local_control; /* the control word when no shared page could be mapped */
	bool attached;          /* loaded into a running process by pcollect -target-pid */
	bool control_thread;    /* the control thread runs (agent-control.c) */
	int member;             /* this process's entry in the shared page's member table */
	pthread_key_t key;      /* per-thread destructor: ends the thread's stream */
	struct agent_thread *threads[AGENT_MAX_THREADS];
	_Atomic size_t nthreads;         /* slots ever used */
	struct agent_data_counter *data; /* shared counter, or NULL */
	struct agent_proc proc;
	char exe[PATH_MAX];
};

extern struct agent_state agent;
extern __thread struct agent_thread *agent_self AGENT_TLS;
extern __thread int agent_in_dl AGENT_TLS;
/* Set while the agent runs libunwind: the unwinder gets no descriptor (agent-fd.c). */
extern __thread int agent_in_unwind AGENT_TLS;
/* Our sampling signals this thread took: a call they interrupted is resumed (agent-wait.c). */
extern __thread unsigned agent_sig_count AGENT_TLS;
/*
 * Set while the agent's own code runs in this thread (recording a wait, a sample, writing
 * the process stream or the log...): what it calls meanwhile is no wait of the program's.
 * Calls from the agent's code are told by their return address too, but not when a
 * sanitizer's interceptor stands between (a sanitizer build), so the agent's entry points
 * mark themselves with AGENT_BUSY.
 */
extern __thread int agent_in_agent AGENT_TLS;
static inline void agent_busy_end(int *unused)
{
	(void)unused;
	agent_in_agent--;
}
#define AGENT_BUSY                                                                                 \
	int agent_busy_ __attribute__((cleanup(agent_busy_end), unused)) = agent_in_agent++

/* The value our timers carry in si_value; the same in every image, so a signal of ours
 * still pending across exec is recognised as ours. */
#define AGENT_COOKIE ((void *)(uintptr_t)0x50434f4c4c4543ull)

/* The next definitions of what the agent interposes, resolved in the constructor. */
struct agent_real {
	int (*sigaction)(int, const struct sigaction *, struct sigaction *);
	sighandler_t (*signal)(int, sighandler_t);
	int (*sigprocmask)(int, const sigset_t *, sigset_t *);
	int (*pthread_sigmask)(int, const sigset_t *, sigset_t *);
	int (*pthread_create)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
	int (*pthread_setname_np)(pthread_t, const char *);
	void *(*dlopen)(const char *, int);
	void *(*dlmopen)(Lmid_t, const char *, int);
	int (*dlclose)(void *);
	int (*dl_iterate_phdr)(int (*)(struct dl_phdr_info *, size_t, void *), void *);
	int (*execve)(const char *, char *const[], char *const[]);
	int (*execvpe)(const char *, char *const[], char *const[]);
	int (*fexecve)(int, char *const[], char *const[]);
	int (*posix_spawn)(pid_t *, const char *, const posix_spawn_file_actions_t *,
			   const posix_spawnattr_t *, char *const[], char *const[]);
	int (*posix_spawnp)(pid_t *, const char *, const posix_spawn_file_actions_t *,
			    const posix_spawnattr_t *, char *const[], char *const[]);
	void (*exit_)(int); /* _exit */
	void *(*mmap)(void *, size_t, int, int, int, off_t);
	int (*mprotect)(void *, size_t, int);
	int (*close)(int);
	int (*close_range)(unsigned, unsigned, int);
	void (*closefrom)(int);
	int (*dup2)(int, int);
	int (*dup3)(int, int, int);
	int (*pipe2)(int[2], int);
	ssize_t (*read)(int, void *, size_t);
	int (*sigtimedwait)(const sigset_t *, siginfo_t *, const struct timespec *);
	int (*signalfd)(int, const sigset_t *, int);
	void (*pthread_exit)(void *);
	int (*prctl)(int, ...);
};
extern struct agent_real agent_real;

/* Resolve one interposed function with dlsym(RTLD_NEXT) (once). */
void agent_resolve(void);

/* agent.c */
/*
 * A message for DIR/log/agent.<pid>.log: the file is opened, appended to and closed for each
 * message (never a descriptor kept), and a message that would pass RLIMIT_FSIZE is dropped.
 * Not in the signal handler.
 */
void agent_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
uint64_t agent_now_mono(void);
void agent_account(struct agent_thread *t);
/* Add written - *accounted to the shared counter (any writer: the process stream too). */
void agent_account_bytes(uint64_t *accounted, uint64_t written);
/* -duration passed or -data-limit reached (the latter alone: agent_data_limit_hit()). */
bool agent_sampling_stopped(void);
bool agent_data_limit_hit(void);
/*
 * True while nothing may be recorded: the collection is paused or stopped. The interposers
 * of waits and allocations check it before they record anything.
 */
bool agent_paused(void);
/*
 * Let go of t->busy (taken by its handler or by any thread's code). An overflow of t's
 * task-clock event that found it held is answered here: its refresh, without which the
 * event, once its limit is spent, would stay off and t would never be sampled again.
 */
void agent_thread_give(struct agent_thread *t);

/* agent-thread.c: slots, streams, timers */
struct agent_thread *agent_thread_begin(pid_t tid, bool external);
/*
 * Finish t's stream (see agent-thread.c). own = false: returns true when t's writer is held
 * from now on, so its handler never uses t's buffers again (agent_thread_release() may).
 */
bool agent_thread_end(struct agent_thread *t, bool own);
void agent_threads_rearm(void);
/* With t->busy held: t's task-clock event is given up (agent-fd.c), its time kept. */
void agent_thread_perf_drop(struct agent_thread *t);
/* With t->busy held, at t's end: what its event counted (end) that no sample took. */
void agent_thread_perf_tail(struct agent_thread *t, uint64_t end);
/* Free t's buffers: unwinding, stack table, Python walker, regions. */
void agent_thread_release(struct agent_thread *t);
void agent_thread_arm(struct agent_thread *t);
void agent_thread_disarm(struct agent_thread *t);
/* agent-perf.c: t's task-clock event made (false: it cannot be had, the timer then, noted). */
bool agent_thread_perf_open(struct agent_thread *t);
/* Close t's task-clock event, if any (thread end, or a fork child dropping the parent's). */
void agent_thread_perf_close(struct agent_thread *t);
/* True when fd is or was the task-clock event of one of our threads (read in the handler). */
bool agent_perf_fd_ours(int fd);
int agent_thread_open_stream(struct agent_thread *t);
/* A fork child: let go of t's window, which maps its parent's file (nothing written). */
void agent_thread_drop_stream(struct agent_thread *t);
void agent_thread_write_lost(struct agent_thread *t);
/*
 * A record of t's stream could not be written because no window could be had: stop sampling
 * t, count the sample under the right lost reason (RAW_LOST_FILE_SIZE_LIMIT at RLIMIT_FSIZE)
 * and put a LOST record in the reserve at once. Async-signal-safe.
 */
void agent_thread_write_failed(struct agent_thread *t, uint64_t weight);
/* A file system with no room left: the launcher names it at the end (the data counter). */
static inline bool agent_disk_full(int err)
{
	return err == -ENOSPC || err == -EDQUOT;
}
/* A stream stopped by err: a full file system (ENOSPC, EDQUOT) is told to the launcher
 * (agent-control.c). */
void agent_note_disk_full(int err);
void agent_thread_key_destructor(void *p);
/* Around exec: finish the stream but keep the slot (and its writer held); resume on failure. */
void agent_thread_suspend(struct agent_thread *t);
void agent_thread_resume(struct agent_thread *t);
void agent_threads_adopt_existing(void);
/*
 * fn(tid, proc_tid, ctx) for every thread of this process: tid as this process knows it (its
 * own pid namespace's: timers, clocks and signals take it), proc_tid the name /proc/self/task
 * gives it, which differs where /proc was mounted for another pid namespace (a container
 * given the host's /proc, unshare --pid without --mount-proc). 0 or -errno.
 */
int agent_tasks_each(void (*fn)(pid_t tid, pid_t proc_tid, void *ctx), void *ctx);
struct agent_thread *agent_thread_find_tid(pid_t tid);
pid_t agent_gettid(void);
/* Zeroed memory of len bytes mapped for a thread's tables (no malloc arena), or NULL. */
void *agent_map_zeroed(size_t len);
void agent_unmap(void *p, size_t len);

/* agent-sample.c: the handler and the signal interposers */
/*
 * The id of the native stack ips[0..n) with flags in t's stream, writing its STACK record the
 * first time; 0 when it cannot be recorded. *hash (may be NULL) gets its stack table hash.
 * Takes nothing: the caller holds t's writer.
 */
uint64_t agent_stack_id_of(struct agent_thread *t, const uint64_t *ips, uint32_t n, uint32_t flags,
			   uint64_t *hash);
/*
 * -ring-buffer (the launcher drops a thread's oldest chunks whole): end t's chunk with the
 * sums of its short waits and MPI calls, whose sites name stacks of this chunk, and forget
 * its stacks, so that every chunk defines the stacks its records name. Writer held.
 */
void agent_ring_turn(struct agent_thread *t, int64_t now);
/* Before a stack is looked up: a chunk the writer ended by itself forgets the stacks too. */
void agent_ring_check(struct agent_thread *t);
int agent_signal_install(void);
/* Detach: the program's disposition of our signal back, none of ours left pending. */
void agent_signal_restore(void);
/* The id of the native stack t->ips[0..n) in t's stream, written when new; 0: not recorded.
   t's writer held. */
uint64_t agent_stack_id(struct agent_thread *t, uint32_t n, uint32_t flags);
void agent_block_sampling(sigset_t *old);
void agent_restore_mask(const sigset_t *old);
/*
 * Sample with signal to (0: none, sampling stops) instead of the current one: our handler on
 * to, every thread's timer and event moved to it, and the program's own disposition back on
 * the signal left, its pending instances (ours among them) discarded first. control_lock held.
 */
void agent_signal_switch(int to);
/* si is a delivery of one of our timers or events (of any signal we sampled with). */
bool agent_signal_info_ours(const siginfo_t *si);

/* agent-signal.c: which signal the agent samples with */
/* The highest real-time signal free for sampling, not in also (may be NULL); 0 when none. */
int agent_signal_choose(const sigset_t *also);
/*
 * The program claims the signals of set (it blocks them, waits for them, or reads them from a
 * signalfd): when ours is one of them and set is not a blanket "every signal", sampling moves
 * to another free signal (or stops) before this returns. False when ours stays ours.
 */
bool agent_signal_claim(const sigset_t *set);
/* The same for a handler the program installs on sig. */
bool agent_signal_claim_one(int sig);

/* agent-proc.c: the process stream */
/* Open this image's process stream and write its PROCESS and METRIC records. 0 or -errno. */
int agent_proc_open(void);
/* Take the process stream (agent.lock held by the caller) with our signal blocked. */
struct raw_writer *agent_proc_begin(sigset_t *old);
/* Close the chunk written since agent_proc_begin() (checksummed), unblock. */
void agent_proc_end(const sigset_t *old);
/*
 * The same for the module scan at each dlopen, which must cost little: our signal is not
 * blocked (the handler never writes this stream) and the chunk is closed at most once a
 * second (AGENT_FLUSH_NS) and at the stream's end, not after each record: an open chunk is
 * read whole up to where the writer stopped. agent.lock held by the caller.
 */
struct raw_writer *agent_proc_writer(void);
void agent_proc_written(void);
/* Before exec: close the chunk and cut the file; after a failed exec, take it again. */
void agent_proc_suspend(void);
void agent_proc_resume(void);
/* At exit: close the stream (cut to its length). */
void agent_proc_close(void);
/* The process's CPU time (every thread's, ended ones too), ns. */
uint64_t agent_proc_cpu_ns(void);
/*
 * At the image's end: the CPU time all its threads used since the stream opened, as a
 * RAW_NOTE_PROCESS_CPU (threads made after sampling stopped have no stream of their own).
 * Called only when sampling stopped before the end (-duration, -data-limit): otherwise every
 * thread has its stream, and what the process counts beyond them is the image's start and
 * end around its threads (a shell's exec chain and subshells: hundreds of ms), not threads
 * never sampled.
 */
void agent_proc_note_cpu(void);
/* A fork child: let go of the parent's window (nothing written into it). */
void agent_proc_drop(void);
/* The NOTE record of a thread (enum raw_note_kind), in the process stream. */
void agent_proc_note(pid_t tid, uint32_t kind, const char *detail);

/* agent-modules.c */
/* An address from a loaded object's dynamic section: the loader relocated most in place (glibc
   on x86-64), some not (the vdso's, other loaders'). */
static inline uintptr_t agent_dyn_addr(uint64_t base, ElfW(Addr) p)
{
	return p < base ? (uintptr_t)(base + p) : (uintptr_t)p;
}
/* The span [*lo, *hi) of a loaded object's executable segments; *lo >= *hi when it has none. */
void agent_module_text(const struct dl_phdr_info *info, uintptr_t *lo, uintptr_t *hi);
void agent_modules_reset(void);
/* Write what changed in the loaded modules to the process stream. agent.lock not held. */
void agent_modules_scan(void);

/* agent-python.c: all outside the handler but agent_python_sample() */
/* Look for an interpreter in a newly mapped module (until one is found). */
void agent_python_module(const char *path, uint64_t base, const struct pyagent_dynsyms *dyn);
/* After a module scan: give every live thread its Python state once an interpreter exists. */
void agent_python_modules_done(void);
/* A thread's stream opened: its Python state when an interpreter exists. */
void agent_python_thread_begin(struct agent_thread *t);
/* A new stream for the same thread (fork child): code ids start over. */
void agent_python_thread_restart(struct agent_thread *t);
/* Before THREAD_END: the notes of samples that could not get Python frames, and the
   thread's name in Python as it is at its end. */
void agent_python_thread_finish(struct agent_thread *t);
/* The control thread: every live thread's name in Python, recorded when new or changed. */
void agent_python_names(void);
/* In a fork child, first: the parent's control thread may have held the names' lock. */
void agent_python_fork_child(void);
void agent_python_thread_free(struct agent_thread *t);
/*
 * In the handler, after the native unwind into t->ips[0..n): the id of the mixed stack
 * (written when new), or 0 when the sample has no Python frames (write the native stack).
 */
uint64_t agent_python_sample(struct agent_thread *t, uint32_t n, uint32_t flags);
/*
 * The same in two steps, for waits (agent-wait.c): take the Python frames (writing the code
 * records they need) and return a hash of them, 0 when there are none; then the id of the
 * stack made of t->ips[0..n) and those frames (0: none).
 */
uint64_t agent_python_capture(struct agent_thread *t);
uint64_t agent_python_stack_id(struct agent_thread *t, uint32_t n, uint32_t flags);
/*
 * A mixed stack for any native stack ips[0..n) of t's thread, taken outside the handler (an
 * allocation): the Python frames are the calling thread's. *hash (may be NULL) gets the stack
 * table's hash of the whole mixed stack. key: the thread's Python frames as pyagent_key()
 * hashed them, all of them (0: not known); the frames of the last call with the same key are
 * taken again without a read.
 */
uint64_t agent_python_stack(struct agent_thread *t, const uint64_t *ips, uint32_t n, uint32_t flags,
			    uint64_t *hash, uint64_t key);

/* agent-mpi.c: MPI calls from the shims (collector/agent/mpi/, -trace-mpi) */
/* Before THREAD_END (writer held): the sums of t's short calls. */
void agent_mpi_thread_finish(struct agent_thread *t);
/* From the sampling handler (writer held): the sums written when MPI_SUM_TICK_NS passed. */
void agent_mpi_thread_tick(struct agent_thread *t, int64_t now);
/* The control thread: the sums of a thread that made no call for a second written. */
void agent_mpi_scan(void);
/* The sums of t's short calls written now, stamped at stream time now (writer held): before
   a region's record, so that the calls summed count in the region they were made in. */
void agent_mpi_thread_sums(struct agent_thread *t, int64_t now);
void agent_mpi_thread_free(struct agent_thread *t);
/* agent_ring_turn(): t's sums written at stream time now, its sites forgotten. Writer held. */
void agent_mpi_thread_turn(struct agent_thread *t, int64_t now);
/*
 * The native stack of the calling thread from its caller's frame whose return address is
 * ret outwards, with entry as its innermost frame (the exact pc: FIRST_IS_PC), into t->ips;
 * writer held, outside the signal handler. Returns the frames and sets *flags.
 */
uint32_t agent_stack_here(struct agent_thread *t, uintptr_t entry, uintptr_t ret, uint32_t *flags);
/* The id in t's stream of the stack in t->ips[0..n) (mixed with its Python frames when the
   thread runs Python), written the first time; 0 when it could not be. Writer held. */
uint64_t agent_stack_record(struct agent_thread *t, uint32_t n, uint32_t flags);

/* agent-thread.c: pause and resume one thread (agent.control_lock held) */
void agent_thread_pause(struct agent_thread *t);
void agent_thread_unpause(struct agent_thread *t);
/* Its CPU time since the stream began, paused time left out. */
uint64_t agent_thread_cpu_used(struct agent_thread *t);
/* Every live thread's timer and event onto agent.cfg.signo, or, when it is 0, stopped with
   the CPU time from now on counted lost (control_lock held). */
void agent_threads_move_signal(void);

/* The entry points the agent exports besides its interposers. */
/* pcollect -target-pid's call into the running program (agent.c): 0 or -errno. */
int pcollect_attach(const char *config);
/* The API's one call (common/agent-api.h): 0 done, -1 not profiled. */
int pcollect_agent_call(int op, const char *arg);

/* agent-control.c: the control word, the control thread, the API entry */
/* The control word every agent obeys (the shared page's, else this process's own). */
uint32_t agent_control_word(void);
/* Obey the control word now: pause, resume, stop or detach this process. */
void agent_control_apply(void);
/* Change the control word (enum agent_control_flags) and obey it here at once. */
void agent_control_command(uint32_t set, uint32_t clear);
/* Start the control thread (when the shared page is mapped). 0 or -errno. */
int agent_control_start(void);
/* At exit: the control thread must not start anything any more. */
void agent_control_quit(void);
/* True while the calling thread creates the control thread (pthread_create passes it on). */
bool agent_control_creating(void);

/* agent-exit.c: the ends only threads make (main's pthread_exit, seccomp's strict mode) */
#define AGENT_EXIT_POLL_NS  1000000000ll /* how often the control thread looks for the end */
#define AGENT_CPU_LOOK_NS   ((int64_t)RAW_THREAD_CPU_EVERY_NS) /* ... at threads' CPU time */
#define AGENT_EXIT_WATCH_NS 10000000ll /* ... once main or a strict thread may end it */
int64_t agent_exit_poll_ns(void);
/* From the control thread: main ended and it is the last thread (streams finished): it
   must return now, and the C library ends the process as natively. */
bool agent_exit_last_thread(void);
/* At exit (agent.c): stop every timer and finish every stream. */
void agent_shutdown(void);

/* agent-region.c: regions named by the program (RAW_REC_REGION_*) */
int agent_region_begin(const char *name);
int agent_region_end(void);
/* A fork child's new stream: the regions open in the forking thread begin again in it. */
void agent_region_restart(struct agent_thread *t);
void agent_region_free(struct agent_thread *t);

/* agent-attach.c: an agent loaded into a running process (pcollect -target-pid) */
/* Every so often, from the control thread: new threads and modules, threads gone. */
void agent_attach_poll(void);
/* Finish every stream, give the signal back and let the process go (control_lock held). */
void agent_detach(void);
/* agent-got.c: the attached agent's interposition through the modules' GOT entries */
/* Point the imports of every loaded module (but ours, libc, the loader) at our functions. */
void agent_got_patch(void);
/* Put back every entry we changed. */
void agent_got_restore(void);

/* agent-exec.c */
bool agent_in_vfork_child(void);

/* agent-wait.c: where the threads wait (-collect threading) */
/* Whether waits are recorded in this process: set once the agent is active. */
extern bool agent_waits_on;
/* The address range of the agent's code: calls from it are the agent's own. */
extern uintptr_t agent_text_lo, agent_text_hi;
/* ip is in the agent's code or a sanitizer runtime's (agent_wait_init() found them). */
bool agent_ip_is_ours(uintptr_t ip);
/* Start recording waits (after the agent is active), or stop for good (exit). */
void agent_wait_init(void);
void agent_wait_stop(void);
/* A thread's wait state for a new stream (allocated on first use), freed at its end. */
void agent_wait_thread_begin(struct agent_thread *t);
void agent_wait_thread_free(struct agent_thread *t);
/* Before the stream's last records: the short waits and a pending OpenMP barrier written.
   t's writer held. */
void agent_wait_thread_finish(struct agent_thread *t);

/*
 * Whether a wait is to be measured now (waits on, the thread recorded, not inside the agent
 * or a runtime wait already measured); then its start is taken. Cheap: TLS and globals, one
 * clock read when true. For waits a runtime reports (OMPT).
 */
static inline bool agent_wait_begin(struct agent_wait_call *c, uintptr_t site, uintptr_t sp)
{
	struct timespec ts;

	/* In an OpenMP runtime's wait (OMPT), the runtime's own blocking calls are part of it. */
	if (!agent_waits_on || !agent_self || !agent_self->wait || agent_in_agent ||
	    agent_in_unwind || agent_self->wait->omp.depth)
		return false;
	c->site = site;
	c->sp = sp;
	c->sigs = agent_sig_count;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	c->start_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	return true;
}

/* The same for a call the program made from site: not when the agent made it. */
static inline bool agent_wait_enter(struct agent_wait_call *c, uintptr_t site, uintptr_t sp)
{
	if (site >= agent_text_lo && site < agent_text_hi)
		return false;
	return agent_wait_begin(c, site, sp);
}

/*
 * After agent_wait_enter(): the wait of kind on object begins; its start and stack are kept
 * where the control thread finds them (agent_wait_scan()). Keeps errno. The leave that
 * follows ends it.
 */
void agent_wait_open(const struct agent_wait_call *c, uint32_t kind, uint64_t object);
/*
 * The control thread: every wait in progress for AGENT_WAIT_OPEN_NS put on record, with the
 * short waits before it, and the short waits of a thread that counted none for
 * AGENT_WAIT_FLUSH_NS written out.
 */
void agent_wait_scan(void);
/* The sampling handler (t's writer held): the short waits written every AGENT_WAIT_TICK_NS. */
void agent_wait_thread_tick(struct agent_thread *t);
/* agent_ring_turn(): t's short waits written and their sites forgotten. Writer held. */
void agent_wait_thread_turn(struct agent_thread *t);
/*
 * Take a flag (a thread's busy, its wait table's lock) that the control thread may hold for
 * a few microseconds: tried AGENT_TAKE_TRIES times, yielding between. False if never had.
 */
#define AGENT_TAKE_TRIES 1000
bool agent_take_soon(_Atomic int *flag);
/* The call returned: record it as a wait of kind on object. Keeps errno. */
void agent_wait_leave(const struct agent_wait_call *c, uint32_t kind, uint64_t object);
/* The same for a wait known to have ended at end_ns (CLOCK_MONOTONIC). */
void agent_wait_leave_at(const struct agent_wait_call *c, uint64_t end_ns, uint32_t kind,
			 uint64_t object);
/* The same for I/O on descriptor fd: no wait under AGENT_WAIT_IO_FLOOR_NS, and below the
   threshold only on a descriptor that can block. */
void agent_wait_leave_io(const struct agent_wait_call *c, uint32_t kind, int fd);
/*
 * A wait from start_ns to end_ns measured elsewhere, with its stack taken before (OpenMP's
 * implicit barriers, agent-omp.c): written as a WAIT, or counted under the call site key.
 * writer_held: t's writer is held by the caller (the stream's end).
 */
void agent_wait_record_at(struct agent_thread *t, uint64_t start_ns, uint64_t end_ns, uint64_t key,
			  uint64_t stack_id, uint32_t kind, uint64_t object, bool writer_held);
/*
 * The stack where the calling thread is, its leading agent frames dropped (keep_last: but for
 * the last one), with pc (exact, when not 0) in front: for a wait recorded later (OpenMP).
 * Returns its id, 0 when none; t's writer is taken and given back, our signal blocked
 * meanwhile.
 */
uint64_t agent_wait_stack_here(struct agent_thread *t, uintptr_t pc, bool keep_last);
/* The stack id of the calling thread's stack here, its writer held (python: with the Python
   frames agent_python_capture() left in t->py). 0 when it cannot be recorded. */
uint64_t agent_wait_stack_id(struct agent_thread *t, bool python);
/* PCOLLECT_OP_TASK_WAIT (agent-task.c): an asyncio task's suspension, arg as it says. */
int agent_task_wait(const char *arg);
/* PCOLLECT_OP_ORIGIN_TAKE and PCOLLECT_OP_ORIGIN_TASK (agent-task.c): a pool task's
   submitting stack, and its start and end in a worker. */
int agent_origin_take(void);
int agent_origin_task(const char *arg);
/*
 * The stack where the calling thread t starts work in another thread (pthread_create, an
 * OpenMP region), its Python frames too when it runs Python: its id in t's stream, 0 when
 * none (RAW_REC_ORIGIN).
 */
uint64_t agent_origin_stack_here(struct agent_thread *t);
/* The program's stack where it called the agent's outermost interposer (its Python frames
   too), with pc (the function the interposer stands for: the C library's dlopen) innermost
   in place of the interposer's frame: the program's call, never a function of ours. */
uint64_t agent_call_stack_here(struct agent_thread *t, uintptr_t pc);
/*
 * Back from the loader (dlopen, dlmopen, dlclose, dl_iterate_phdr) in the program's call:
 * the samples that came inside it, held back (the unwinder may not run there), are recorded
 * now at the program's call, with their weight: the loader's work, constructors included, is
 * the program's, never lost and never the agent's.
 */
void agent_dl_record(uintptr_t real);
/*
 * What every loader wrapper does as it returns, real the function it stands for (the
 * samples' innermost frame: dlopen, as the program called it and as perf shows the loader's
 * time, in the C library's module, not ours): cheap, and safe before a sanitizer runtime is
 * ready (AddressSanitizer's start calls dl_iterate_phdr before its shadow memory exists).
 */
#define agent_dl_return(real)                                                                      \
	do {                                                                                       \
		if (!agent_in_dl && agent_self && agent_self->dl_weight)                           \
			agent_dl_record((uintptr_t)(real));                                        \
	} while (0)
/* The same, kept per call site: site the return address into the caller (not 0), sp its
   frame there; pc, when not 0, an innermost frame to add (exact). */
uint64_t agent_origin_stack_at(struct agent_thread *t, uintptr_t pc, uintptr_t site, uintptr_t sp);
/* A RAW_REC_ORIGIN record in t's stream (t: the calling thread), now. */
void agent_origin_write(struct agent_thread *t, pid_t tid, uint64_t stack, uint32_t kind);
/* The stack id remembered for call site key in t's table, 0 when none. */
uint64_t agent_wait_site_stack(struct agent_thread *t, uint64_t key);
/* Take t's writer with our signal blocked (old: the mask to restore), and give it back. */
bool agent_wait_writer_take(struct agent_thread *t, sigset_t *old);
void agent_wait_writer_give(struct agent_thread *t, const sigset_t *old);
/* The thread that may record a wait now (waits on, its stream live, no vfork child), or
   NULL. */
struct agent_thread *agent_wait_thread(void);

/* The next definitions of the wait interposers (agent-wait-*.c), resolved with the rest. */
void agent_wait_pthread_resolve(void);
void agent_wait_sleep_resolve(void);
void agent_wait_io_resolve(void);

/* agent-omp.c: OpenMP (libgomp's entry points, libomp's OMPT) */
/* A thread's stream ends: its last implicit barrier written (t's writer held). */
void agent_omp_thread_finish(struct agent_thread *t);

/* The macros interposers measure with: the caller's return address and our frame. */
#define AGENT_WAIT_SITE ((uintptr_t)__builtin_return_address(0))
#define AGENT_WAIT_SP   ((uintptr_t)__builtin_frame_address(0))
/*
 * The end of an interposer that measures call (of result type type): open (agent_wait_open())
 * before it, made, and told as a wait by leave (agent_wait_leave(&c, ...) or
 * agent_wait_leave_io(&c, ...)) once it returned; made unmeasured when this thread records no wait
 * now.
 */
#define AGENT_WAIT_MEASURE(type, open, call, leave)                                                \
	do {                                                                                       \
		struct agent_wait_call c;                                                          \
		type r;                                                                            \
                                                                                                   \
		if (!agent_wait_enter(&c, AGENT_WAIT_SITE, AGENT_WAIT_SP))                         \
			return call;                                                               \
		open;                                                                              \
		r = call;                                                                          \
		leave;                                                                             \
		return r;                                                                          \
	} while (0)

/* agent-fd.c: the task-clock descriptors, kept high and guarded from the program's close() */
/* Move fd to a high number (downwards from the soft RLIMIT_NOFILE); returns it, or -errno. */
int agent_fd_take(int fd);
/* Close a descriptor of ours for real, and forget it. */
void agent_fd_release(int fd);

#endif
