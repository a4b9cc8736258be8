/* SPDX-License-Identifier: MIT */
/* OpenMP waits: GCC's libgomp through its entry points, LLVM's libomp through OMPT. */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "collector/agent/agent-private.h"
#include "collector/agent/ompt-abi.h"
#include "common/hash.h"

/*
 * libgomp has no tool interface. The compiler turns an OpenMP construct into calls of its
 * GOMP_* entry points, which are interposed here:
 *  - a parallel region (GOMP_parallel and the combined parallel loops and sections) runs the
 *    outlined function in every thread of the team, then an implicit barrier inside libgomp
 *    that nothing can interpose. The function is wrapped instead (omp_trampoline): each
 *    thread's arrival is when its part returned, the region's end when GOMP_parallel returns
 *    in the thread that began it. A thread's wait at the barrier (kind openmp-barrier) is
 *    from its arrival to the end: the beginning thread writes its own at once, the others
 *    when they next run our code (their next region) or end. The stack is the one where the
 *    thread arrived, with the outlined function on top. The beginning thread writes the
 *    region (OMP_REGION) too, so its per-thread imbalance follows.
 *  - explicit barriers and the ends of worksharing constructs (GOMP_barrier, GOMP_loop_end,
 *    GOMP_sections_end ...), critical sections, ordered, omp_set_lock and taskwait are
 *    measured around the call.
 * A barrier's or lock's object is the code address of the construct: the return address of
 * the runtime call into the program (PIPELINE names it by its function and line); a lock's is
 * the lock, a named critical section's its name variable, 0 the unnamed one.
 *
 * libomp (clang) has OMPT: the agent is a tool (ompt_start_tool), told by the runtime when a
 * thread begins and ends waiting at a barrier (sync_region_wait, so its implicit barriers are
 * measured in each thread) or for a lock (mutex_acquire, mutex_acquired). libomp also exports
 * GOMP_* for programs built with gcc: with OMPT running those are left to it.
 *
 * Whatever the analysis, every region tells where it began (RAW_REC_ORIGIN, for preport
 * -stitch): the beginning thread's stack is taken at the region's start (GOMP_parallel and
 * its kin, which then wrap the outlined function even without waits; OMPT's parallel_begin),
 * and every other thread of the team writes an ORIGIN record naming it as its part begins
 * (the trampoline; OMPT's implicit_task) when its last part's origin was another. So with libomp
 * the agent is an OMPT tool for every analysis; its wait callbacks are set with waits only.
 *
 * An OpenMP lock or critical section has no try variant: it is measured on every call, and an
 * acquisition shorter than AGENT_OMP_LOCK_FLOOR_NS met no other thread and is no wait.
 */
#define AGENT_OMP_LOCK_FLOOR_NS 1000

/* One instance of a parallel region. */
struct agent_omp_region {
	_Atomic uint64_t end_ns; /* CLOCK_MONOTONIC, 0 until it ended */
	_Atomic int refs;        /* the beginning thread's, and one per thread still to write */
	_Atomic uint32_t threads;
	uint64_t begin_ns;
	uint64_t object; /* the construct's code address */
	void (*fn)(void *);
	void *data;
	bool measured;         /* waits measured in it (else it only tells its origin) */
	pid_t origin_tid;      /* the thread that began it, 0 when it is not sampled */
	uint64_t origin_stack; /* its stack there, an id of its stream (RAW_REC_ORIGIN) */
};

static bool ompt_running; /* libomp's OMPT called us: its waits come from there */

/* libgomp's entry points the agent interposes (libgomp.so.1's ABI; it has no header). */
void GOMP_parallel(void (*fn)(void *), void *data, unsigned n, unsigned flags);
unsigned GOMP_parallel_reductions(void (*fn)(void *), void *data, unsigned n, unsigned flags);
void GOMP_parallel_sections(void (*fn)(void *), void *data, unsigned n, unsigned count,
			    unsigned flags);
#define LOOP_ARGS         void (*)(void *), void *, unsigned, long, long, long, long, unsigned
#define LOOP_RUNTIME_ARGS void (*)(void *), void *, unsigned, long, long, long, unsigned
void GOMP_parallel_loop_static(LOOP_ARGS);
void GOMP_parallel_loop_dynamic(LOOP_ARGS);
void GOMP_parallel_loop_guided(LOOP_ARGS);
void GOMP_parallel_loop_nonmonotonic_dynamic(LOOP_ARGS);
void GOMP_parallel_loop_nonmonotonic_guided(LOOP_ARGS);
void GOMP_parallel_loop_runtime(LOOP_RUNTIME_ARGS);
void GOMP_parallel_loop_nonmonotonic_runtime(LOOP_RUNTIME_ARGS);
void GOMP_parallel_loop_maybe_nonmonotonic_runtime(LOOP_RUNTIME_ARGS);
void GOMP_barrier(void);
bool GOMP_barrier_cancel(void);
void GOMP_loop_end(void);
bool GOMP_loop_end_cancel(void);
void GOMP_sections_end(void);
bool GOMP_sections_end_cancel(void);
void GOMP_critical_start(void);
void GOMP_critical_name_start(void **name);
void GOMP_ordered_start(void);
void GOMP_taskwait(void);
void GOMP_taskgroup_end(void);
void omp_set_lock(void *lock);
void omp_set_nest_lock(void *lock);
ompt_start_tool_result_t *ompt_start_tool(unsigned version, const char *runtime);

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The next definition of an OpenMP entry point: with RTLD_NEXT, or in a runtime that a
   library loaded with RTLD_LOCAL brought along (its callers bound to us all the same). */
static void *omp_next(const char *name)
{
	static const char *const runtimes[] = { "libgomp.so.1", "libomp.so.5", "libomp.so",
						"libiomp5.so" };
	void *p = dlsym(RTLD_NEXT, name);
	size_t i;

	for (i = 0; !p && i < sizeof(runtimes) / sizeof(runtimes[0]); i++) {
		void *h = dlopen(runtimes[i], RTLD_NOLOAD | RTLD_LAZY);

		if (h) {
			p = dlsym(h, name);
			dlclose(h);
		}
	}
	if (!p) {
		agent_log("no OpenMP runtime defines '%s', which the program called", name);
		abort();
	}
	return p;
}

/* The next definition of name, found on first use and kept in *slot. */
static void *omp_real(void **slot, const char *name)
{
	void *p = __atomic_load_n(slot, __ATOMIC_ACQUIRE);

	if (!p) {
		p = omp_next(name);
		__atomic_store_n(slot, p, __ATOMIC_RELEASE);
	}
	return p;
}

#define REAL(type, name) ((type)omp_real(&real_##name, #name))

/* Whether libgomp's entry points are measured: waits on, and no OMPT doing it. */
static bool gomp_measured(void)
{
	return agent_waits_on && !ompt_running;
}

/* ---- libgomp: parallel regions ------------------------------------------------------------ */

static void region_put(struct agent_omp_region *r)
{
	if (atomic_fetch_sub(&r->refs, 1) == 1)
		free(r);
}

/* Write t's implicit barrier once its region's end is known (end: now, at the thread's end).
   writer_held: t's stream is ending. */
static void pending_write(struct agent_thread *t, bool force, bool writer_held)
{
	struct agent_omp_thread *o = &t->wait->omp;
	struct agent_omp_region *r = o->region;
	uint64_t end;

	if (!r)
		return;
	end = atomic_load(&r->end_ns);
	if (!end && !force)
		return;
	if (!end)
		end = now_ns();
	agent_wait_record_at(t, o->arrived_ns, end, o->key, o->stack_id, RAW_WAIT_OMP_BARRIER,
			     r->object, writer_held);
	o->region = NULL;
	region_put(r);
}

/*
 * OMPT: the implicit barrier t still waits in as it ends, written when its region has ended.
 * libomp ends a worker's barrier wait only when it wakes the worker for its next region, and
 * after the program's last region it wakes it to exit without telling: that last wait (from
 * its arrival to the region's end) would be lost. The stack is the one t had at its first
 * implicit barrier: a worker's barriers are all in the same runtime frames.
 */
static void ompt_pending_write(struct agent_thread *t)
{
	struct agent_omp_thread *o = &t->wait->omp;
	uint64_t end;
	uint32_t i;

	if (!o->ompt_region || !o->ompt_barrier_stack)
		return;
	end = atomic_load(&o->ompt_region->end_ns);
	for (i = 0; i < o->depth && i < AGENT_OMP_NEST; i++)
		if (o->waits[i].measured && o->waits[i].implicit && end &&
		    end > o->waits[i].call.start_ns)
			agent_wait_record_at(t, o->waits[i].call.start_ns, end,
					     hash_combine(o->ompt_barrier_stack,
							  RAW_WAIT_OMP_BARRIER),
					     o->ompt_barrier_stack, o->waits[i].kind,
					     o->waits[i].object, true);
	o->depth = 0;
}

void agent_omp_thread_finish(struct agent_thread *t)
{
	struct agent_omp_region *r;

	if (!t->wait)
		return;
	pending_write(t, true, true);
	ompt_pending_write(t);
	r = t->wait->omp.ompt_region;
	t->wait->omp.ompt_region = NULL;
	if (r)
		region_put(r);
}

/*
 * Where the calling thread begins a parallel region at call site (site, sp), entry (when not
 * 0) the runtime's function it calls, for the team's ORIGIN records: its id, with *tid, or 0
 * when the thread is not sampled.
 */
static uint64_t origin_here(pid_t *tid, uintptr_t site, uintptr_t sp, uintptr_t entry)
{
	struct agent_thread *self = agent_self;
	uint64_t id;

	*tid = 0;
	if (!agent.active || !self || atomic_load(&self->state) != AGENT_THREAD_LIVE ||
	    agent_in_vfork_child())
		return 0;
	id = agent_origin_stack_at(self, entry, site, sp);
	if (id)
		*tid = self->tid;
	return id;
}

/*
 * A team's thread other than tid, the one that began the region at stack: its part of the
 * work begins. Written when it differs from the thread's last part's: the time until the
 * next record, its part and the wait for the next region, is that region's (a loop of one
 * region costs no record).
 */
static void origin_mark(pid_t tid, uint64_t stack)
{
	struct agent_thread *self = agent_self;

	if (!tid || !self || self->tid == tid || atomic_load(&self->state) != AGENT_THREAD_LIVE ||
	    agent_in_vfork_child() || (self->origin_tid == tid && self->origin_stack == stack))
		return;
	self->origin_tid = tid;
	self->origin_stack = stack;
	agent_origin_write(self, tid, stack, RAW_ORIGIN_WORK);
}

static void omp_run(struct agent_omp_region *r);

/* Run by every thread of the team in place of the outlined function. */
static void omp_trampoline(void *p)
{
	struct agent_omp_region *r = p;

	origin_mark(r->origin_tid, r->origin_stack);
	omp_run(r);
}

static void omp_run(struct agent_omp_region *r)
{
	struct agent_thread *t = r->measured ? agent_wait_thread() : NULL;
	struct agent_omp_thread *o;
	uint64_t key;

	atomic_fetch_add(&r->threads, 1);
	if (!t) {
		r->fn(r->data);
		return;
	}
	o = &t->wait->omp;
	/* The last region's barrier: that region has ended, since this one began. */
	pending_write(t, false, false);
	atomic_fetch_add(&r->refs, 1);
	r->fn(r->data);
	/* Arrived at the implicit barrier: the stack where it is, the outlined function on top
	   (taken once per call site; the region's end is not known yet). */
	o->arrived_ns = now_ns();
	key = hash_combine(hash_combine(hash_mix((uintptr_t)r->fn), AGENT_WAIT_SP),
			   RAW_WAIT_OMP_BARRIER);
	o->key = key;
	o->stack_id = agent_wait_site_stack(t, key);
	if (!o->stack_id)
		o->stack_id = agent_wait_stack_here(t, (uintptr_t)r->fn, true);
	o->region = r;
}

static struct agent_omp_region *region_begin(void (*fn)(void *), void *data, uintptr_t site,
					     uintptr_t sp, uintptr_t entry)
{
	bool measured = gomp_measured() && agent_wait_thread();
	struct agent_omp_region *r;
	uint64_t origin = 0;
	pid_t tid = 0;

	/* With OMPT, libomp tells the region's beginning itself. */
	if (!ompt_running)
		origin = origin_here(&tid, site, sp, entry);
	if (!measured && !origin)
		return NULL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->measured = measured;
	r->origin_tid = tid;
	r->origin_stack = origin;
	atomic_store(&r->refs, 1);
	r->begin_ns = now_ns();
	r->object = site;
	r->fn = fn;
	r->data = data;
	return r;
}

/* The region ended in the thread that began it: its own wait and the region's record. */
static void region_end(struct agent_omp_region *r)
{
	uint64_t end = now_ns();
	struct agent_thread *t;
	sigset_t old;

	atomic_store(&r->end_ns, end);
	t = r->measured ? agent_wait_thread() : NULL;
	if (t) {
		pending_write(t, false, false);
		AGENT_BUSY;
		if (agent_wait_writer_take(t, &old)) {
			raw_writer_omp_region(&t->w, (int64_t)(r->begin_ns - t->hdr.origin_ns),
					      end - r->begin_ns, r->object,
					      atomic_load(&r->threads));
			agent_wait_writer_give(t, &old);
		}
	}
	region_put(r);
}

/* A region of entry point name (its definition in the runtime is the innermost frame of the
   stack where the region began: the team's parts meet the beginning thread's under it). */
#define REGION_BEGIN(name)                                                                         \
	region_begin(fn, data, AGENT_WAIT_SITE, AGENT_WAIT_SP,                                     \
		     (uintptr_t)omp_real(&real_##name, #name))

static void *real_GOMP_parallel;
static void *real_GOMP_parallel_reductions;
static void *real_GOMP_parallel_sections;

AGENT_EXPORT void GOMP_parallel(void (*fn)(void *), void *data, unsigned n, unsigned flags)
{
	typedef void (*fn_t)(void (*)(void *), void *, unsigned, unsigned);
	struct agent_omp_region *r = REGION_BEGIN(GOMP_parallel);

	if (!r) {
		REAL(fn_t, GOMP_parallel)(fn, data, n, flags);
		return;
	}
	REAL(fn_t, GOMP_parallel)(omp_trampoline, r, n, flags);
	region_end(r);
}

AGENT_EXPORT unsigned GOMP_parallel_reductions(void (*fn)(void *), void *data, unsigned n,
					       unsigned flags)
{
	typedef unsigned (*fn_t)(void (*)(void *), void *, unsigned, unsigned);
	struct agent_omp_region *r = REGION_BEGIN(GOMP_parallel_reductions);
	unsigned ret;

	if (!r)
		return REAL(fn_t, GOMP_parallel_reductions)(fn, data, n, flags);
	ret = REAL(fn_t, GOMP_parallel_reductions)(omp_trampoline, r, n, flags);
	region_end(r);
	return ret;
}

AGENT_EXPORT void GOMP_parallel_sections(void (*fn)(void *), void *data, unsigned n, unsigned count,
					 unsigned flags)
{
	typedef void (*fn_t)(void (*)(void *), void *, unsigned, unsigned, unsigned);
	struct agent_omp_region *r = REGION_BEGIN(GOMP_parallel_sections);

	if (!r) {
		REAL(fn_t, GOMP_parallel_sections)(fn, data, n, count, flags);
		return;
	}
	REAL(fn_t, GOMP_parallel_sections)(omp_trampoline, r, n, count, flags);
	region_end(r);
}

/* The combined parallel loops: one with a chunk size, one without (schedule(runtime)). */
#define PARALLEL_LOOP(name)                                                                        \
	static void *real_##name;                                                                  \
	AGENT_EXPORT void name(void (*fn)(void *), void *data, unsigned n, long start, long end,   \
			       long incr, long chunk, unsigned flags)                              \
	{                                                                                          \
		typedef void (*fn_t)(void (*)(void *), void *, unsigned, long, long, long, long,   \
				     unsigned);                                                    \
		struct agent_omp_region *r = REGION_BEGIN(name);                                   \
                                                                                                   \
		if (!r) {                                                                          \
			REAL(fn_t, name)(fn, data, n, start, end, incr, chunk, flags);             \
			return;                                                                    \
		}                                                                                  \
		REAL(fn_t, name)(omp_trampoline, r, n, start, end, incr, chunk, flags);            \
		region_end(r);                                                                     \
	}
#define PARALLEL_LOOP_RUNTIME(name)                                                                \
	static void *real_##name;                                                                  \
	AGENT_EXPORT void name(void (*fn)(void *), void *data, unsigned n, long start, long end,   \
			       long incr, unsigned flags)                                          \
	{                                                                                          \
		typedef void (*fn_t)(void (*)(void *), void *, unsigned, long, long, long,         \
				     unsigned);                                                    \
		struct agent_omp_region *r = REGION_BEGIN(name);                                   \
                                                                                                   \
		if (!r) {                                                                          \
			REAL(fn_t, name)(fn, data, n, start, end, incr, flags);                    \
			return;                                                                    \
		}                                                                                  \
		REAL(fn_t, name)(omp_trampoline, r, n, start, end, incr, flags);                   \
		region_end(r);                                                                     \
	}

PARALLEL_LOOP(GOMP_parallel_loop_static)
PARALLEL_LOOP(GOMP_parallel_loop_dynamic)
PARALLEL_LOOP(GOMP_parallel_loop_guided)
PARALLEL_LOOP(GOMP_parallel_loop_nonmonotonic_dynamic)
PARALLEL_LOOP(GOMP_parallel_loop_nonmonotonic_guided)
PARALLEL_LOOP_RUNTIME(GOMP_parallel_loop_runtime)
PARALLEL_LOOP_RUNTIME(GOMP_parallel_loop_nonmonotonic_runtime)
PARALLEL_LOOP_RUNTIME(GOMP_parallel_loop_maybe_nonmonotonic_runtime)

/* ---- libgomp: barriers, critical sections, locks -------------------------------------------- */

/*
 * A runtime call measured as a wait of kind on object; floor: shorter is no wait (a lock
 * that met no one).
 */
#define GOMP_CALL(kind, object, floor, call)                                                       \
	do {                                                                                       \
		struct agent_wait_call c;                                                          \
                                                                                                   \
		if (!gomp_measured() || !agent_wait_enter(&c, AGENT_WAIT_SITE, AGENT_WAIT_SP)) {   \
			call;                                                                      \
			break;                                                                     \
		}                                                                                  \
		call;                                                                              \
		omp_leave(&c, kind, object, floor);                                                \
	} while (0)

static void omp_leave(const struct agent_wait_call *c, uint32_t kind, uint64_t object,
		      uint64_t floor)
{
	if (floor && now_ns() - c->start_ns < floor)
		return;
	agent_wait_leave(c, kind, object);
}

static void *real_GOMP_barrier;
static void *real_GOMP_barrier_cancel;
static void *real_GOMP_loop_end;
static void *real_GOMP_loop_end_cancel;
static void *real_GOMP_sections_end;
static void *real_GOMP_sections_end_cancel;
static void *real_GOMP_critical_start;
static void *real_GOMP_critical_name_start;
static void *real_GOMP_ordered_start;
static void *real_GOMP_taskwait;
static void *real_GOMP_taskgroup_end;
static void *real_omp_set_lock;
static void *real_omp_test_lock;
static void *real_omp_set_nest_lock;
static void *real_omp_test_nest_lock;

typedef void (*void_fn)(void);
typedef bool (*bool_fn)(void);

AGENT_EXPORT void GOMP_barrier(void)
{
	GOMP_CALL(RAW_WAIT_OMP_BARRIER, AGENT_WAIT_SITE, 0, REAL(void_fn, GOMP_barrier)());
}

AGENT_EXPORT bool GOMP_barrier_cancel(void)
{
	bool r = false;

	GOMP_CALL(RAW_WAIT_OMP_BARRIER, AGENT_WAIT_SITE, 0,
		  r = REAL(bool_fn, GOMP_barrier_cancel)());
	return r;
}

AGENT_EXPORT void GOMP_loop_end(void)
{
	GOMP_CALL(RAW_WAIT_OMP_BARRIER, AGENT_WAIT_SITE, 0, REAL(void_fn, GOMP_loop_end)());
}

AGENT_EXPORT bool GOMP_loop_end_cancel(void)
{
	bool r = false;

	GOMP_CALL(RAW_WAIT_OMP_BARRIER, AGENT_WAIT_SITE, 0,
		  r = REAL(bool_fn, GOMP_loop_end_cancel)());
	return r;
}

AGENT_EXPORT void GOMP_sections_end(void)
{
	GOMP_CALL(RAW_WAIT_OMP_BARRIER, AGENT_WAIT_SITE, 0, REAL(void_fn, GOMP_sections_end)());
}

AGENT_EXPORT bool GOMP_sections_end_cancel(void)
{
	bool r = false;

	GOMP_CALL(RAW_WAIT_OMP_BARRIER, AGENT_WAIT_SITE, 0,
		  r = REAL(bool_fn, GOMP_sections_end_cancel)());
	return r;
}

AGENT_EXPORT void GOMP_critical_start(void)
{
	GOMP_CALL(RAW_WAIT_OMP_LOCK, 0, AGENT_OMP_LOCK_FLOOR_NS,
		  REAL(void_fn, GOMP_critical_start)());
}

AGENT_EXPORT void GOMP_critical_name_start(void **name)
{
	typedef void (*fn_t)(void **);

	GOMP_CALL(RAW_WAIT_OMP_LOCK, (uintptr_t)name, AGENT_OMP_LOCK_FLOOR_NS,
		  REAL(fn_t, GOMP_critical_name_start)(name));
}

AGENT_EXPORT void GOMP_ordered_start(void)
{
	GOMP_CALL(RAW_WAIT_OMP_LOCK, AGENT_WAIT_SITE, AGENT_OMP_LOCK_FLOOR_NS,
		  REAL(void_fn, GOMP_ordered_start)());
}

AGENT_EXPORT void GOMP_taskwait(void)
{
	GOMP_CALL(RAW_WAIT_OMP_OTHER, AGENT_WAIT_SITE, 0, REAL(void_fn, GOMP_taskwait)());
}

AGENT_EXPORT void GOMP_taskgroup_end(void)
{
	GOMP_CALL(RAW_WAIT_OMP_OTHER, AGENT_WAIT_SITE, 0, REAL(void_fn, GOMP_taskgroup_end)());
}

/* A lock that can be taken at once costs a test and no clock read, as pthread's do. */
AGENT_EXPORT void omp_set_lock(void *lock)
{
	typedef void (*set_t)(void *);
	typedef int (*test_t)(void *);

	if (gomp_measured() && REAL(test_t, omp_test_lock)(lock))
		return;
	GOMP_CALL(RAW_WAIT_OMP_LOCK, (uintptr_t)lock, 0, REAL(set_t, omp_set_lock)(lock));
}

AGENT_EXPORT void omp_set_nest_lock(void *lock)
{
	typedef void (*set_t)(void *);
	typedef int (*test_t)(void *);

	if (gomp_measured() && REAL(test_t, omp_test_nest_lock)(lock))
		return;
	GOMP_CALL(RAW_WAIT_OMP_LOCK, (uintptr_t)lock, 0, REAL(set_t, omp_set_nest_lock)(lock));
}

/* ---- libomp: OMPT ------------------------------------------------------------------------ */

static struct agent_omp_thread *ompt_thread(void)
{
	struct agent_thread *t = agent_self;

	return agent_waits_on && t && t->wait ? &t->wait->omp : NULL;
}

static void on_parallel_begin(ompt_data_t *task, const ompt_frame_t *frame, ompt_data_t *parallel,
			      unsigned requested, int flags, const void *codeptr)
{
	struct agent_omp_region *r = calloc(1, sizeof(*r));

	(void)task;
	(void)frame;
	(void)requested;
	(void)flags;
	parallel->ptr = r;
	if (!r)
		return;
	atomic_store(&r->refs, 1);
	r->begin_ns = now_ns();
	r->object = (uintptr_t)codeptr;
	r->measured = true; /* its end writes OMP_REGION when the thread records waits */
	r->origin_stack = origin_here(&r->origin_tid, (uintptr_t)codeptr,
				      (uintptr_t)__builtin_frame_address(0), 0);
}

static void on_parallel_end(ompt_data_t *parallel, ompt_data_t *task, int flags,
			    const void *codeptr)
{
	struct agent_omp_region *r = parallel->ptr;

	(void)task;
	(void)flags;
	(void)codeptr;
	if (!r)
		return;
	parallel->ptr = NULL;
	/* The thread that began it is the one that ends it. */
	region_end(r);
}

/*
 * A thread begins its part of a region: it keeps a reference to it, so its implicit barrier
 * can end with the region. libomp reports a worker's barrier wait as ending only when the
 * worker is woken for its next region; the time after the region's end is idleness, not
 * this barrier's.
 */
static void on_implicit_task(ompt_scope_endpoint_t endpoint, ompt_data_t *parallel,
			     ompt_data_t *task, unsigned actual, unsigned index, int flags)
{
	struct agent_omp_thread *o = ompt_thread();
	struct agent_omp_region *r = parallel ? parallel->ptr : NULL, *old;

	(void)task;
	(void)actual;
	(void)index;
	if (endpoint != ompt_scope_begin || (flags & ompt_task_initial) || !r)
		return;
	origin_mark(r->origin_tid, r->origin_stack);
	atomic_fetch_add(&r->threads, 1);
	if (!o)
		return;
	atomic_fetch_add(&r->refs, 1);
	old = o->ompt_region;
	o->ompt_region = r;
	if (old)
		region_put(old);
}

/* The wait's kind and object for a sync region (at its beginning). */
static uint32_t sync_kind(ompt_sync_region_t kind)
{
	switch (kind) {
	case ompt_sync_region_taskwait:
	case ompt_sync_region_taskgroup:
	case ompt_sync_region_reduction:
		return RAW_WAIT_OMP_OTHER;
	default:
		return RAW_WAIT_OMP_BARRIER;
	}
}

/* A wait begins: measured as if the runtime call at codeptr were the call site. */
static void ompt_wait_begin(uint32_t kind, uint64_t object, const void *codeptr, bool implicit)
{
	struct agent_omp_thread *o = ompt_thread();
	uintptr_t site = codeptr ? (uintptr_t)codeptr : (uintptr_t)object;
	struct agent_thread *t;

	if (!o)
		return;
	if (o->depth < AGENT_OMP_NEST) {
		/* The runtime reports it: codeptr may even be in our code (a wrapper of ours
		   that called the runtime's omp_set_lock). */
		o->waits[o->depth].measured =
			agent_wait_begin(&o->waits[o->depth].call, site, AGENT_WAIT_SP);
		o->waits[o->depth].kind = kind;
		o->waits[o->depth].object = object;
		o->waits[o->depth].implicit = implicit;
		if (implicit && o->waits[o->depth].measured && !o->ompt_barrier_stack &&
		    (t = agent_wait_thread()))
			o->ompt_barrier_stack = agent_wait_stack_here(t, 0, false);
	}
	o->depth++;
}

static void ompt_wait_end(uint64_t floor)
{
	struct agent_omp_thread *o = ompt_thread();
	uint64_t end = now_ns(), region_end;

	if (!o || !o->depth)
		return;
	o->depth--;
	if (o->depth >= AGENT_OMP_NEST || !o->waits[o->depth].measured)
		return;
	if (floor && end - o->waits[o->depth].call.start_ns < floor)
		return;
	/* An implicit barrier ends with its region, when that ended before the thread woke. */
	if (o->waits[o->depth].implicit && o->ompt_region &&
	    (region_end = atomic_load(&o->ompt_region->end_ns)) && region_end < end &&
	    region_end > o->waits[o->depth].call.start_ns)
		end = region_end;
	agent_wait_leave_at(&o->waits[o->depth].call, end, o->waits[o->depth].kind,
			    o->waits[o->depth].object);
}

static void on_sync_region_wait(ompt_sync_region_t kind, ompt_scope_endpoint_t endpoint,
				ompt_data_t *parallel, ompt_data_t *task, const void *codeptr)
{
	struct agent_omp_thread *o = ompt_thread();
	struct agent_omp_region *r = parallel ? parallel->ptr : NULL;
	bool implicit = kind == ompt_sync_region_barrier_implicit_parallel ||
			kind == ompt_sync_region_barrier_implicit;
	uint64_t object;

	(void)task;
	if (endpoint == ompt_scope_end) {
		ompt_wait_end(0);
		return;
	}
	/* An implicit barrier's object is its region's; an explicit one's, its call site. */
	if (implicit)
		object = r ? r->object : o && o->ompt_region ? o->ompt_region->object : 0;
	else
		object = (uintptr_t)codeptr;
	ompt_wait_begin(sync_kind(kind), object, codeptr, implicit);
}

static void on_mutex_acquire(ompt_mutex_t kind, unsigned hint, unsigned impl,
			     ompt_wait_id_t wait_id, const void *codeptr)
{
	(void)hint;
	(void)impl;
	if (kind == ompt_mutex_lock || kind == ompt_mutex_nest_lock ||
	    kind == ompt_mutex_critical || kind == ompt_mutex_ordered)
		ompt_wait_begin(RAW_WAIT_OMP_LOCK, wait_id, codeptr, false);
}

static void on_mutex_acquired(ompt_mutex_t kind, ompt_wait_id_t wait_id, const void *codeptr)
{
	(void)wait_id;
	(void)codeptr;
	if (kind == ompt_mutex_lock || kind == ompt_mutex_nest_lock ||
	    kind == ompt_mutex_critical || kind == ompt_mutex_ordered)
		ompt_wait_end(AGENT_OMP_LOCK_FLOOR_NS);
}

static int ompt_initialize(ompt_function_lookup_t lookup, int device, ompt_data_t *data)
{
	ompt_set_callback_t set = (ompt_set_callback_t)lookup("ompt_set_callback");

	(void)device;
	(void)data;
	if (!set)
		return 0;
	/* Regions and their teams for every analysis (where the work began: -stitch), the
	   waits with -collect threading. */
	set(ompt_callback_parallel_begin, (ompt_callback_t)on_parallel_begin);
	set(ompt_callback_parallel_end, (ompt_callback_t)on_parallel_end);
	set(ompt_callback_implicit_task, (ompt_callback_t)on_implicit_task);
	if (agent.cfg.waits) {
		set(ompt_callback_sync_region_wait, (ompt_callback_t)on_sync_region_wait);
		set(ompt_callback_mutex_acquire, (ompt_callback_t)on_mutex_acquire);
		set(ompt_callback_mutex_acquired, (ompt_callback_t)on_mutex_acquired);
	}
	ompt_running = true;
	agent_log("OpenMP runtime with OMPT: its regions%s are recorded through it",
		  agent.cfg.waits ? " and waits" : "");
	return 1;
}

static void ompt_finalize(ompt_data_t *data)
{
	(void)data;
	ompt_running = false;
}

/* Whether addr is in an OpenMP runtime: libomp defines a weak ompt_start_tool of its own. */
static bool in_runtime(void *addr)
{
	Dl_info info;
	const char *base;

	if (!dladdr(addr, &info) || !info.dli_fname)
		return false;
	base = strrchr(info.dli_fname, '/');
	base = base ? base + 1 : info.dli_fname;
	return !strncmp(base, "libomp", 6) || !strncmp(base, "libiomp", 7) ||
	       !strncmp(base, "libgomp", 7);
}

/*
 * libomp asks for a tool at start. Without waits to record, or when the program brings an
 * OMPT tool of its own (the next definition, not the runtime's own weak one), there is none
 * of ours: the runtime runs as without us.
 */
AGENT_EXPORT ompt_start_tool_result_t *ompt_start_tool(unsigned version, const char *runtime)
{
	static ompt_start_tool_result_t tool = { ompt_initialize, ompt_finalize, { 0 } };
	typedef ompt_start_tool_result_t *(*start_t)(unsigned, const char *);
	start_t next = (start_t)dlsym(RTLD_NEXT, "ompt_start_tool");

	if (next && !in_runtime((void *)next)) {
		agent_log("the program has an OMPT tool of its own: OpenMP waits of libomp are "
			  "not recorded");
		return next(version, runtime);
	}
	if (!agent.active)
		return NULL;
	return &tool;
}
