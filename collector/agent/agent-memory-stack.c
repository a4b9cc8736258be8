/* SPDX-License-Identifier: MIT */
/* memory-consumption: the stack of an allocation, from the call-site cache or by unwinding. */
#include <string.h>
#include <unwind.h>

#include "collector/agent/agent-memory-private.h"
#include "collector/agent/probe.h"
#include "common/hash.h"

/*
 * A hundred million allocations cannot each be unwound. Each thread keeps a cache from a
 * call-site key to the aggregate entry of the stack last unwound under that key:
 *
 *   key = (return address into the function that called the allocator,
 *          that function's stack pointer at the call,
 *          the calling thread's Python frames (frame address, instruction), when any)
 *
 * read in a few instructions, without unwinding. Two different stacks can share a key: the
 * same call in the same function, entered with the same stack depth from different callers
 * (a malloc wrapper called by two functions whose frames have one size). The cache checks
 * itself: the n-th hit of a key is unwound anyway for n = 1, 2, 4, 8, ... and then every
 * MEM_VERIFY_MAX hits; a check that finds another stack is a collision (counted), and the key
 * of that call site grows by one frame: the next return address, read from the stack where
 * the unwinder found it (the function's frame size, which the unwind gives, is kept in the
 * slot). A grown key that collides again grows again, up to MEM_MAX_LEVELS frames. What
 * is left is counted in the aggregate file (mismatches, escalations) and reported.
 *
 * While the thread is inside dlopen, dlclose or dl_iterate_phdr, the unwinder would enter the
 * loader again: such an allocation gets the one-frame stack of its call (flagged truncated).
 */

/* The slot of a key: direct mapped. */
static inline struct mem_slot *slot_of(struct mem_thread *mt, uint64_t ra, uint64_t sp, uint64_t h)
{
	uint64_t x = (ra ^ (sp * 0x9e3779b97f4a7c15ull) ^ h) * 0xff51afd7ed558ccdull;

	return &mt->slots[x >> (64 - 12)];
}

_Static_assert(MEM_CACHE_SLOTS == 1 << 12, "slot_of() takes 12 bits");

/* The key of one more frame: level L's hash and the return address read at that level. */
static inline uint64_t key_grow(uint64_t h, uint64_t ra, int level)
{
	return hash_combine(hash_combine(h, ra), (uint64_t)level) | 1;
}

void mem_thread_cache_clear(struct mem_thread *mt)
{
	memset(mt->slots, 0, sizeof(mt->slots));
	memset(mt->emap_keys, 0, sizeof(mt->emap_keys));
	mt->emap_used = 0;
	mt->prev_n = 0;
}

/* ---- stack id -> entry -------------------------------------------------------------------- */

/* The slot of stack's key (stack id + 1) in the map, or the empty slot where it would go. */
static size_t emap_slot(const struct mem_thread *mt, uint64_t stack)
{
	return probe_find(mt->emap_keys, sizeof(mt->emap_keys[0]), 0, MEM_EMAP_SLOTS - 1,
			  hash_mix(stack), stack + 1);
}

static uint32_t emap_find(struct mem_thread *mt, uint64_t stack)
{
	size_t i = emap_slot(mt, stack);

	return mt->emap_keys[i] ? mt->emap_vals[i] : MEM_NO_ENTRY;
}

/* Enter stack, not in the map. */
static void emap_put(struct mem_thread *mt, uint64_t stack, uint32_t entry)
{
	size_t i;

	if (!probe_has_room(mt->emap_used, MEM_EMAP_SLOTS)) {
		/* full: forget; a stack seen again gets a new entry, the finalizer adds them up */
		memset(mt->emap_keys, 0, sizeof(mt->emap_keys));
		mt->emap_used = 0;
	}
	i = emap_slot(mt, stack);
	mt->emap_keys[i] = stack + 1;
	mt->emap_vals[i] = entry;
	mt->emap_used++;
}

static uint32_t entry_of(struct mem_tls *m, struct mem_thread *mt, uint64_t stack)
{
	uint32_t e = emap_find(mt, stack);
	bool locked;

	if (e != MEM_NO_ENTRY)
		return e;
	locked = mem_enter(m);
	e = mem_file_entry_new(mt->t->tid, stack);
	mem_leave(locked);
	if (e != MEM_NO_ENTRY)
		emap_put(mt, stack, e);
	return e;
}

/* ---- unwinding ---------------------------------------------------------------------------- */

/*
 * Unwinding: the C runtime's unwinder (libgcc's _Unwind_Backtrace), not libunwind as the
 * sampling handler does. An allocation is not a signal: the thread is at a call, where
 * libgcc's unwinder is safe, and it finds each frame's FDE through glibc's
 * _dl_find_object() (no lock, no signal mask changed), with the CFA of every frame at hand.
 * libunwind cost a few hundred sigprocmask() calls an unwind here.
 */
/*
 * libgcc's functions, taken from its own handle: libunwind (the sampling handler's unwinder,
 * also a dependency of the agent, and loaded before libgcc_s) exports the same _Unwind_* names,
 * so the linked names would be its compatibility layer, which locks with two sigprocmask()
 * calls a frame: 7.5 million of them for the ~145,000 unwinds of `import numpy`. A context of
 * one implementation is read only by the same implementation: all three come from one place.
 */
static struct {
	_Unwind_Reason_Code (*backtrace)(_Unwind_Trace_Fn, void *);
	_Unwind_Ptr (*get_ip)(struct _Unwind_Context *);
	_Unwind_Word (*get_cfa)(struct _Unwind_Context *);
} gcc = { _Unwind_Backtrace, _Unwind_GetIP, _Unwind_GetCFA };

void mem_unwind_init(void)
{
	void *h = agent_real.dlopen ? agent_real.dlopen("libgcc_s.so.1", RTLD_LAZY | RTLD_NOLOAD)
				    : NULL;
	void *b, *ip, *cfa;

	if (!h)
		return; /* keep the linked names */
	b = dlsym(h, "_Unwind_Backtrace");
	ip = dlsym(h, "_Unwind_GetIP");
	cfa = dlsym(h, "_Unwind_GetCFA");
	if (!b || !ip || !cfa)
		return;
	gcc.backtrace = (_Unwind_Reason_Code(*)(_Unwind_Trace_Fn, void *))b;
	gcc.get_ip = (_Unwind_Ptr(*)(struct _Unwind_Context *))ip;
	gcc.get_cfa = (_Unwind_Word(*)(struct _Unwind_Context *))cfa;
}

struct walk {
	struct mem_thread *mt;
	uint32_t n, max, flags;
	enum { OURS, SANITIZER, PROGRAM } phase;
	bool own;
	bool stopped;     /* the walk ended it on purpose (libgcc then returns an error code) */
	bool reused;      /* its outer part is the last stack's */
	uint32_t differs; /* the last stack's frame found changed: no match below it serves */
};

/*
 * Unwind only what changed. Two allocations in a row mostly share the outer part of their
 * stacks (under Python, dozens of interpreter frames): once the walk reaches a frame that
 * the last stack had, at the same stack pointer with the same return address, the frames
 * above it are the last stack's if each of their return addresses is still where that
 * unwind found it (frame k's return address ips[k] sits just below sps[k], the stack pointer
 * of its call). Reading those words is the check: a frame that returned and was called
 * again from elsewhere has put another return address there. Only the thread's own stack,
 * between this frame and its top, is read.
 */
static bool reuse(struct walk *w, uintptr_t ip, uintptr_t sp)
{
	struct mem_thread *mt = w->mt;
	uint32_t lo = 0, hi = mt->prev_n, j, k, take;

	if (!mt->stack_hi || sp >= mt->stack_hi)
		return false;
	while (lo < hi) { /* the stack pointers grow outwards: sorted */
		uint32_t mid = lo + (hi - lo) / 2;

		if (mt->prev_sps[mid] < sp)
			lo = mid + 1;
		else
			hi = mid;
	}
	j = lo;
	if (j >= mt->prev_n || j < w->differs || mt->prev_sps[j] != sp || mt->prev_ips[j] != ip)
		return false;
	for (k = j + 1; k < mt->prev_n; k++)
		if (mt->prev_sps[k] <= mt->prev_sps[k - 1] || mt->prev_sps[k] > mt->stack_hi ||
		    *(const uint64_t *)(uintptr_t)(mt->prev_sps[k] - sizeof(uint64_t)) !=
			    mt->prev_ips[k]) {
			w->differs = k; /* a match below k would stop at k again */
			return false;
		}
	take = mt->prev_n - j;
	if (w->n + take > w->max) {
		take = w->max - w->n;
		w->flags |= RAW_STACK_TRUNCATED;
	} else {
		w->flags |= mt->prev_flags & (RAW_STACK_TRUNCATED | RAW_STACK_UNWIND_ERROR);
	}
	memcpy(&mt->ips[w->n], &mt->prev_ips[j], take * sizeof(uint64_t));
	memcpy(&mt->sps[w->n], &mt->prev_sps[j], take * sizeof(uint64_t));
	w->n += take;
	w->reused = true;
	return true;
}

static _Unwind_Reason_Code walk_frame(struct _Unwind_Context *ctx, void *arg)
{
	struct walk *w = arg;
	/*
	 * libgcc's context at a callback: the return address into this frame and the CFA of the
	 * frame it returns from, which is this frame's stack pointer at that call (the key's sp).
	 */
	uintptr_t ip = (uintptr_t)gcc.get_ip(ctx), sp = (uintptr_t)gcc.get_cfa(ctx);
	if (!ip)
		return _URC_END_OF_STACK;
	if (w->phase != PROGRAM) {
		if (mem_from_agent(ip) && w->phase == SANITIZER) {
			w->own = true;
			w->stopped = true;
			return _URC_END_OF_STACK;
		}
		if (ip - mem.skip_lo < mem.skip_hi - mem.skip_lo)
			w->phase = SANITIZER;
		else if (!mem_from_agent(ip))
			w->phase = PROGRAM;
	}
	if (w->phase != PROGRAM)
		return _URC_NO_REASON;
	if (w->n >= w->max) {
		w->flags |= RAW_STACK_TRUNCATED;
		w->stopped = true;
		return _URC_END_OF_STACK;
	}
	if (w->mt->prev_n && reuse(w, ip, sp)) {
		w->stopped = true;
		return _URC_END_OF_STACK;
	}
	w->mt->ips[w->n] = ip;
	w->mt->sps[w->n] = sp;
	w->n++;
	return _URC_NO_REASON;
}

/*
 * Unwind the calling thread into mt->ips and mt->sps (each frame's stack pointer) from the
 * first frame that is not ours: the allocation's caller, whose ip is c.ra. Returns the
 * frames, with *flags the stack's flags; 0 when nothing could be taken. Under a sanitizer's
 * hooks our frames come first, then the sanitizer's, then the caller: an allocation whose
 * caller is ours again was the agent's own (*own set).
 */
static uint32_t unwind(struct mem_thread *mt, uint32_t *flags, bool *own)
{
	struct walk w = { .mt = mt, .max = agent.cfg.stack_depth, .phase = OURS };
	_Unwind_Reason_Code r = gcc.backtrace(walk_frame, &w);

	if (!w.stopped && r != _URC_END_OF_STACK && r != _URC_NO_REASON && w.n)
		w.flags |= RAW_STACK_UNWIND_ERROR;
	*flags = w.flags;
	*own = w.own;
	if (w.own || !w.n) {
		mt->prev_n = 0;
		return 0;
	}
	memcpy(mt->prev_ips, mt->ips, w.n * sizeof(uint64_t));
	memcpy(mt->prev_sps, mt->sps, w.n * sizeof(uint64_t));
	mt->prev_n = w.n;
	mt->prev_flags = w.flags;
	return w.n;
}

/* Take t's writer (the thread may be ending: another thread holds it then). */
static bool writer_take(struct agent_thread *t)
{
	int expected = 0;

	return atomic_load(&t->state) == AGENT_THREAD_LIVE &&
	       atomic_compare_exchange_strong(&t->busy, &expected, 1);
}

/* The stack ips[0..n) (with Python frames when the thread runs Python): its id and hash. */
static uint64_t stack_of(struct agent_thread *t, const uint64_t *ips, uint32_t n, uint32_t flags,
			 uint64_t *hash, uint64_t py_key)
{
	uint64_t id = 0;

	if (atomic_load_explicit(&t->py, memory_order_relaxed))
		id = agent_python_stack(t, ips, n, flags, hash, py_key);
	if (!id)
		id = agent_stack_id_of(t, ips, n, flags, hash);
	return id;
}

struct unwound {
	uint32_t n;     /* frames */
	bool own;       /* the agent's own allocation */
	uint64_t stack; /* its id in the thread's stream */
	uint64_t hash;  /* of its native frames */
	uint32_t entry;
};

/* Unwind and find the stack's entry; false when it cannot be recorded. */
static bool unwind_entry(struct mem_tls *m, struct mem_thread *mt, struct unwound *u)
{
	struct agent_thread *t = mt->t;
	uint32_t flags;
	bool ok;

	u->n = unwind(mt, &flags, &u->own);
	if (!u->n || !writer_take(t))
		return false;
	/*
	 * What a check compares is the native part: the Python part is in the key itself (every
	 * frame's address and instruction), and the mixed stack's id may change without the stack
	 * changing (code ids are given again when a thread's table of them is full).
	 */
	u->hash = stack_table_hash(mt->ips, u->n, flags);
	u->stack = stack_of(t, mt->ips, u->n, flags, NULL, m->py_key);
	agent_account(t);
	agent_thread_give(t);
	ok = u->stack != 0;
	if (ok) {
		u->entry = entry_of(m, mt, u->stack);
		ok = u->entry != MEM_NO_ENTRY;
	}
	if (ok)
		__atomic_add_fetch(&mem.hdr->cache_misses, 1, __ATOMIC_RELAXED);
	return ok;
}

static void slot_fill(struct mem_slot *s, struct mem_call c, uint64_t h, const struct unwound *u)
{
	s->ra = c.ra;
	s->sp = c.cfa;
	s->h = h;
	s->stack = u->hash;
	s->entry = u->entry;
	s->deep = 0;
	s->countdown = 1;
	s->interval = 1;
}

/*
 * A check of slot s (level L of its key): the stack unwound now against the one it named.
 * Agreeing, the next check comes twice as late. Disagreeing, the key grows by the frame
 * above level L, whose frame size the unwind gives.
 */
static uint32_t check(struct mem_tls *m, struct mem_thread *mt, struct mem_slot *s,
		      struct mem_call c, uint64_t h, int level)
{
	struct unwound u;
	uint64_t d, next_h;

	__atomic_add_fetch(&mem.hdr->verifications, 1, __ATOMIC_RELAXED);
	if (!unwind_entry(m, mt, &u))
		return s->entry; /* cannot check: trust it */
	__atomic_sub_fetch(&mem.hdr->cache_misses, 1, __ATOMIC_RELAXED);
	if (u.hash == s->stack) {
		s->interval = s->interval >= MEM_VERIFY_MAX / 2 ? MEM_VERIFY_MAX : s->interval * 2;
		s->countdown = s->interval;
		return s->entry;
	}
	__atomic_add_fetch(&mem.hdr->mismatches, 1, __ATOMIC_RELAXED);
	/* frame 0 is the caller (ra = c.ra, sp = c.cfa); level L's return address is frame L */
	if (level + 1 >= MEM_MAX_LEVELS || (uint32_t)level + 1 >= u.n || mt->ips[0] != c.ra ||
	    mt->sps[0] != c.cfa) {
		/* cannot grow: name the last stack seen, check often */
		s->stack = u.hash;
		s->entry = u.entry;
		s->interval = 1;
		s->countdown = 1;
		return u.entry;
	}
	d = mt->sps[level + 1] - mt->sps[level];
	if (!d || d >= UINT32_MAX) {
		s->stack = u.hash;
		s->entry = u.entry;
		return u.entry;
	}
	s->deep = (uint32_t)d;
	__atomic_add_fetch(&mem.hdr->escalations, 1, __ATOMIC_RELAXED);
	next_h = key_grow(h, mt->ips[level + 1], level + 1);
	slot_fill(slot_of(mt, c.ra, c.cfa, next_h), c, next_h, &u);
	return u.entry;
}

/* A miss at level L (key hash h): unwind, and remember the answer under that key. */
static uint32_t miss(struct mem_tls *m, struct mem_thread *mt, struct mem_call c, uint64_t h)
{
	struct unwound u;

	if (!unwind_entry(m, mt, &u))
		return MEM_NO_ENTRY;
	if (mt->ips[0] == c.ra && mt->sps[0] == c.cfa) {
		slot_fill(slot_of(mt, c.ra, c.cfa, h), c, h, &u);
	} else if (!mem.log_cfa_once) {
		/* the key would never match what the unwinder sees: not cached */
		mem.log_cfa_once = true;
		agent_log("memory: an allocation's caller (ip %#lx sp %#lx) is not where the "
			  "unwinder finds it (ip %#lx sp %#lx): such calls are unwound each time",
			  (unsigned long)c.ra, (unsigned long)c.cfa, (unsigned long)mt->ips[0],
			  (unsigned long)mt->sps[0]);
	}
	return u.entry;
}

/* Inside the loader: the call alone, as a one-frame stack, never cached. */
static uint32_t in_loader(struct mem_tls *m, struct mem_thread *mt, struct mem_call c)
{
	struct agent_thread *t = mt->t;
	uint64_t ip = c.ra, stack;

	if (!writer_take(t))
		return MEM_NO_ENTRY;
	stack = agent_stack_id_of(t, &ip, 1, RAW_STACK_TRUNCATED, NULL);
	agent_account(t);
	agent_thread_give(t);
	return stack ? entry_of(m, mt, stack) : MEM_NO_ENTRY;
}

/* The thread's state when it was created before the agent: looked up once by its tid. */
static struct mem_thread *thread_state(struct mem_tls *m)
{
	struct agent_thread *t;

	if (m->mt || m->looked_up)
		return m->mt;
	m->looked_up = true;
	t = agent_thread_find_tid(agent_gettid());
	if (t && t->external && t->mem)
		m->mt = t->mem;
	return m->mt;
}

uint32_t mem_callsite(struct mem_tls *m, struct mem_call c)
{
	struct mem_thread *mt = thread_state(m);
	uint64_t h = 0, sp;
	bool whole = false;
	int level;

	m->py_key = 0;
	if (!mt)
		return MEM_NO_ENTRY;
	if (mem.hooks) {
		/* called from inside the sanitizer's allocator: no key, every call unwound */
		struct unwound u;

		if (unwind_entry(m, mt, &u))
			return u.entry;
		return u.own ? MEM_OURS : MEM_NO_ENTRY;
	}
	if (agent_in_dl)
		return in_loader(m, mt, c);
	if (atomic_load_explicit(&mem.py_pending, memory_order_relaxed) != 0 || pyagent_active())
		h = mem_python_key(&whole);
	m->py_key = whole ? h : 0;
	sp = c.cfa;
	for (level = 0;; level++) {
		struct mem_slot *s = slot_of(mt, c.ra, c.cfa, h);
		uintptr_t next;

		if (s->ra != c.ra || s->sp != c.cfa || s->h != h)
			return miss(m, mt, c, h);
		if (!s->deep || level + 1 >= MEM_MAX_LEVELS) {
			if (--s->countdown)
				return s->entry;
			return check(m, mt, s, c, h, level);
		}
		/* a collision was seen here: one more return address, where the frame ends */
		next = sp + s->deep;
		if (next < sp || (mt->stack_hi && next > mt->stack_hi))
			return miss(m, mt, c, h);
		sp = next;
		h = key_grow(h, *(const uintptr_t *)(next - sizeof(uintptr_t)), level + 1);
	}
}
