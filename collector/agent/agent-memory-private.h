/* SPDX-License-Identifier: MIT */
/* memory-consumption inside the agent: state shared by the agent-memory*.c files. */
#ifndef PCOLLECT_COLLECTOR_AGENT_MEMORY_PRIVATE_H
#define PCOLLECT_COLLECTOR_AGENT_MEMORY_PRIVATE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "collector/agent/agent-private.h"
#include "collector/agent/mem-table.h"
#include "common/raw-memory.h"

/*
 * How an allocation is recorded (docs/pcollect.md, "memory-consumption", tells the story):
 *
 *   wrapper (malloc, new, a PyMem hook, mmap...)  agent-memory-alloc.c, -cxx.c, -python.c
 *     -> the real function, with the thread's recursion guard (mem_tls.busy) set: whatever
 *        the allocator calls inside is passed through unrecorded
 *     -> mem_callsite(): the aggregate entry of (thread, stack), from the call-site cache
 *        keyed by (return address, stack pointer[, Python frames]); a miss or a periodic
 *        check unwinds (agent-memory-stack.c)
 *     -> mem_enter(): the lock, or nothing while one thread allocates (the owner)
 *     -> the live-block table and the entry's counters in the aggregate file, the totals and
 *        the peak (agent-memory.c)
 *
 * Nothing here calls the allocator: tables are mapped, the aggregate file is mapped.
 */

#define MEM_CACHE_SLOTS 4096       /* call-site cache entries per thread (direct mapped) */
#define MEM_EMAP_SLOTS  16384      /* stack id -> entry per thread, cleared when full */
#define MEM_MAX_LEVELS  8          /* frames a call-site key may grow by after collisions */
#define MEM_VERIFY_MAX  16384      /* at most this many cache hits between two checks of a key */
#define MEM_TICK_OPS    1024       /* a thread reads the clock every so many operations */
#define MEM_TICK_BYTES  (1u << 20) /* or bytes: a program of few large blocks has a timeline */
#define MEM_EXACT       1          /* mem.alloc_on, free_on: every allocation */
#define MEM_SAMPLED     2          /* a Poisson sample by bytes */
#define MEM_NO_ENTRY    UINT32_MAX /* counted, not attributed */
#define MEM_OURS        (UINT32_MAX - 1) /* the agent's own allocation: not counted */
#define MEM_MAX_PY      64               /* Python frames hashed into a key */

/* One call-site key and what it named when it was unwound. */
struct mem_slot {
	uint64_t ra;        /* return address into the allocating function (0: empty) */
	uint64_t sp;        /* that function's stack pointer at the call */
	uint64_t h;         /* Python frames, then the frames the key grew by (0: none) */
	uint64_t stack;     /* the hash of the native frames of the stack it names */
	uint32_t entry;     /* its aggregate entry */
	uint32_t deep;      /* 0; else a collision was seen here: the frame size of the
			       function holding the last return address of the key, to read
			       the next one and look again one level deeper */
	uint32_t countdown; /* hits before the next check */
	uint32_t interval;  /* hits between two checks: doubles after each check that agrees */
};

/* Per-thread state of the analysis, mapped (never malloc'ed) when the thread's stream opens. */
struct mem_thread {
	struct agent_thread *t;
	uintptr_t stack_hi; /* top of the thread's stack (deep keys read below it only) */
	size_t map_len;
	uint64_t emap_used;
	struct mem_slot slots[MEM_CACHE_SLOTS];
	uint64_t emap_keys[MEM_EMAP_SLOTS]; /* stack id + 1; 0: empty */
	uint32_t emap_vals[MEM_EMAP_SLOTS];
	uint64_t ips[RAW_MAX_DEPTH + 64];
	uint64_t sps[RAW_MAX_DEPTH + 64];
	/* the last stack unwound, whose unchanged outer part the next unwind takes as it is */
	uint64_t prev_ips[RAW_MAX_DEPTH + 64];
	uint64_t prev_sps[RAW_MAX_DEPTH + 64];
	uint32_t prev_n, prev_flags;
};

/* Per-thread fast state (initial-exec TLS: a few instructions from every wrapper). */
struct mem_tls {
	int busy;              /* recursion guard: >0 while the agent works or the real
				  allocator runs; nested calls pass through */
	bool owner;            /* the thread allowed to skip the lock while it is alone */
	bool looked_up;        /* mt looked for (a thread the agent found at start) */
	struct mem_thread *mt; /* NULL: this thread's allocations are counted, not attributed */
	uintptr_t last_alloc;  /* this thread's last allocation: temporaries */
	int64_t countdown;     /* sampled: bytes to the next sample point */
	uint32_t ops;          /* operations, for the clock */
	uint64_t tick_bytes;   /* bytes allocated or freed since the clock was last read */
	uint64_t rng;          /* xorshift state (sampled) */
	uint64_t py_key;       /* the call being keyed: its Python frames' key if it holds all
				  of them, else 0 (agent_python_stack()) */
};
extern __thread struct mem_tls mem_tls AGENT_TLS;

/* What a wrapper knows of its call: where it returns to and its caller's stack pointer. */
struct mem_call {
	uintptr_t ra;
	uintptr_t cfa;
};
#define MEM_CALL()                                                                                 \
	((struct mem_call){ (uintptr_t)__builtin_return_address(0),                                \
			    (uintptr_t)__builtin_dwarf_cfa() })

/* How a block was made, for the table (mmap regions are apart). */
struct mem_state {
	/* read by every wrapper */
	_Atomic int alloc_on;   /* record allocations */
	_Atomic int free_on;    /* account frees of recorded blocks (on after the agent ends) */
	_Atomic int threaded;   /* more than the owner thread allocates: take the lock */
	volatile int solo_busy; /* the owner is updating without the lock */
	_Atomic int lock;
	_Atomic int py_pending; /* an interpreter to hook once it is initialized */
	int slow;               /* nonzero: every allocation takes the slow path (sampled, hooks,
				   an interpreter: its frames in the key) */
	bool sampled;
	bool hooks; /* sanitizer allocator hooks, not our wrappers */
	uint64_t sample_bytes;
	uintptr_t agent_lo, agent_hi; /* our own code: calls from it are not the program's */
	uintptr_t skip_lo, skip_hi;   /* frames to skip when unwinding (the sanitizer's) */
	/* under the lock */
	struct mem_blocks blocks;
	struct mem_regions regions;
	struct raw_mem_header *hdr; /* the aggregate file's header, or NULL (not open) */
	struct raw_mem_entry *entries;
	uint64_t entries_cap; /* entries mapped */
	uint64_t file_size;   /* bytes of the file mapped (whole pages) */
	uint64_t reserve_len; /* address space reserved for the file */
	uint8_t *reserve;
	char path[PATH_MAX];
	uint64_t early_allocs, early_bytes; /* before the file existed */
	uint64_t agent_static;              /* bytes mapped outside the tables (caches, file) */
	_Atomic int64_t last_tick_ns;       /* the timeline's last point */
	int64_t tick_ns;                    /* between two points */
	_Atomic uint64_t point_live;        /* the live heap of the last point */
	bool log_cfa_once;
};
extern struct mem_state mem;

/*
 * Sampled mode: per hash of a block's address, how many sampled blocks live there (255
 * sticks). A free whose slot is 0 cannot be of a sampled block: it goes straight to the real
 * free. Static (.bss): its address is a constant of the code, and untouched pages cost
 * nothing.
 */
#define MEM_FILTER_BITS 16
extern uint8_t mem_filter[1u << MEM_FILTER_BITS];

static inline uint32_t mem_filter_index(uintptr_t p)
{
	return (uint32_t)(((uint64_t)p * 0x9e3779b97f4a7c15ull) >> (64 - MEM_FILTER_BITS));
}

/* agent-memory.c: the recording core */
/* Another thread will allocate: from now on take the lock. */
void mem_go_threaded(void);

/*
 * Record what a wrapper did; all with mem_tls.busy held by the caller. mem_note_alloc() and
 * mem_note_free() below are the inline paths; this is the general one (sampled, a cache miss,
 * Python, the loader...).
 */
void mem_record_alloc(struct mem_tls *m, uintptr_t p, uint64_t size, struct mem_call c);
/* realloc: p left the table before the real call; put it back when the call failed. */
bool mem_record_take(struct mem_tls *m, uintptr_t p, struct mem_block *out);
void mem_record_untake(struct mem_tls *m, const struct mem_block *blk);
void mem_record_free_block(struct mem_tls *m, const struct mem_block *blk, bool temporary);
/* mmap family */
void mem_record_map(struct mem_tls *m, uintptr_t p, uint64_t len, struct mem_call c);
void mem_record_unmap(struct mem_tls *m, uintptr_t p, uint64_t len);
/* mremap moved or resized [old, old + old_len) to [p, p + len): recorded when old was. */
void mem_record_remap(struct mem_tls *m, uintptr_t old, uint64_t old_len, uintptr_t p, uint64_t len,
		      struct mem_call c);

/* Sampled: does an allocation of size bytes fall on a sample point? Its weight when so. */
bool mem_sample(struct mem_tls *m, uint64_t size, double *weight);

/* A new peak of live bytes (epoch, time). */
void mem_peak_reached(struct raw_mem_header *h);
/* Insert's rarer outcomes: a block already at that address, no room. */
void mem_put_odd(uint32_t count, const struct mem_block *old, int r);
/* Every MEM_TICK_OPS operations of a thread: a timeline point when the interval passed. */
void mem_tick(struct mem_tls *m);

/* The executable segments [*lo, *hi) of the loaded object holding addr (0, 0: none). */
void mem_text_of(uintptr_t addr, uintptr_t *lo, uintptr_t *hi);

/* agent-memory-stack.c: the aggregate entry of the calling stack */
uint32_t mem_callsite(struct mem_tls *m, struct mem_call c);
/* Clear a thread's cache (fork child: its entries named the parent's file). */
void mem_thread_cache_clear(struct mem_thread *mt);
/* Bind the unwinder to libgcc's (before the first allocation is recorded). */
void mem_unwind_init(void);

/* agent-memory-file.c: the aggregate file */
int mem_file_open(void);
/* A new entry for (tid, stack), under the lock; MEM_NO_ENTRY when the file cannot grow. */
uint32_t mem_file_entry_new(pid_t tid, uint64_t stack);
/* Let go of the mapping (fork child: it maps the parent's file). */
void mem_file_drop(void);
/* The memory the analysis holds now, into the header. */
void mem_file_account(void);

/* agent-memory-python.c */
/* From an allocation wrapper while py_pending: install the hooks if the time has come. */
void mem_python_try_hook(void);
/* The hash of the calling thread's Python frames (0: none), for the call-site key; *whole:
   of all of them. */
uint64_t mem_python_key(bool *whole);

/* agent-memory-alloc.c */
/* Resolve the real allocator (from the constructor, in case no allocation did it yet). */
void mem_resolve(void);
/* The program's malloc is not ours (a sanitizer's, an allocator in the executable). */
bool mem_malloc_is_ours(void);
/* Install a sanitizer's allocator hooks instead. true when done. */
bool mem_sanitizer_hooks(void);

/* ---- the lock ------------------------------------------------------------------------------ */

void mem_lock_slow(void);
void mem_switch_threaded(void);

/*
 * Enter the shared state: the lock, or, for the owner while it is the only thread that
 * allocates, a flag the switch to threaded mode waits for (mem_switch_threaded(): membarrier,
 * so the owner pays no fence). Returns true when the lock was taken.
 */
static inline bool mem_enter(struct mem_tls *m)
{
	if (m->owner && !atomic_load_explicit(&mem.threaded, memory_order_relaxed)) {
		mem.solo_busy = 1;
		atomic_signal_fence(memory_order_seq_cst);
		if (!atomic_load_explicit(&mem.threaded, memory_order_relaxed))
			return false;
		mem.solo_busy = 0;
	} else if (!atomic_load_explicit(&mem.threaded, memory_order_acquire)) {
		mem_switch_threaded(); /* returns with the lock held */
		return true;
	}
	if (atomic_exchange_explicit(&mem.lock, 1, memory_order_acquire))
		mem_lock_slow();
	return true;
}

static inline void mem_leave(bool locked)
{
	if (locked) {
		atomic_store_explicit(&mem.lock, 0, memory_order_release);
		return;
	}
	atomic_signal_fence(memory_order_seq_cst);
	mem.solo_busy = 0;
}

/* Whether a wrapper records: something to record, and not from inside ourselves. */
static inline bool mem_wanted(const struct mem_tls *m)
{
	return !m->busy && atomic_load_explicit(&mem.alloc_on, memory_order_relaxed);
}

/* Sampled: the allocation falls between two sample points (most do): nothing to record. */
static inline bool mem_unsampled(struct mem_tls *m, size_t n)
{
	return mem.sampled && (m->countdown -= (int64_t)n) > 0;
}

static inline bool mem_from_agent(uintptr_t ra)
{
	return ra - mem.agent_lo < mem.agent_hi - mem.agent_lo;
}

/* ---- the hot path: accounting inside mem_enter()/mem_leave() ------------------------------ */

/* The first change of an entry since the last peak keeps its live bytes at that peak. */
static inline void mem_entry_touch(struct raw_mem_entry *e, uint64_t epoch)
{
	if (e->peak_epoch != epoch) {
		e->peak_live = e->alloc_bytes - e->freed_bytes;
		e->peak_epoch = epoch;
	}
}

static inline void mem_account_alloc(uint32_t idx, uint64_t bytes, uint64_t count)
{
	struct raw_mem_header *h = mem.hdr;
	struct raw_mem_entry *e = &mem.entries[idx];

	mem_entry_touch(e, h->epoch);
	e->allocs += count;
	e->alloc_bytes += bytes;
	h->live_bytes += bytes;
	if (h->live_bytes > h->peak_bytes)
		mem_peak_reached(h);
}

static inline void mem_account_free(uint32_t idx, uint64_t bytes, uint64_t count, bool temporary)
{
	struct raw_mem_header *h = mem.hdr;
	struct raw_mem_entry *e = &mem.entries[idx];

	mem_entry_touch(e, h->epoch);
	e->frees += count;
	e->freed_bytes += bytes;
	h->live_bytes -= bytes;
	if (temporary)
		e->temporaries += count;
}

/* A block into the table (and, sampled, the filter of sampled addresses). */
static inline void mem_put(uint64_t addr, uint64_t size, uint32_t entry, uint32_t count)
{
	struct mem_block old;
	int r = mem_blocks_insert(&mem.blocks, addr, size, entry, count, &old);

	if (__builtin_expect(r != 0, 0))
		mem_put_odd(count, &old, r);
	if (mem.sampled && r >= 0 && mem_filter[mem_filter_index(addr)] < 255)
		mem_filter[mem_filter_index(addr)]++;
}

static inline void mem_count_op(struct mem_tls *m, uint64_t bytes)
{
	m->tick_bytes += bytes;
	if (__builtin_expect(!(++m->ops % MEM_TICK_OPS) || m->tick_bytes >= MEM_TICK_BYTES, 0)) {
		m->tick_bytes = 0;
		mem_tick(m);
	}
}

/* The call-site cache's slot of a key: direct mapped. */
static inline struct mem_slot *mem_slot_of(struct mem_thread *mt, uint64_t ra, uint64_t sp,
					   uint64_t h)
{
	uint64_t x = (ra ^ (sp * 0x9e3779b97f4a7c15ull) ^ h) * 0xff51afd7ed558ccdull;

	return &mt->slots[x >> (64 - 12)];
}
_Static_assert(MEM_CACHE_SLOTS == 1 << 12, "mem_slot_of() takes 12 bits");

/*
 * An allocation of size bytes at p: the common case inline (exact mode, a native key found in
 * the cache with no check due), the rest through mem_record_alloc().
 */
static inline __attribute__((always_inline)) void mem_note_alloc(struct mem_tls *m, uintptr_t p,
								 uint64_t size, struct mem_call c)
{
	struct mem_thread *mt = m->mt;
	struct mem_slot *s;
	uint32_t e;
	bool locked;

	if (__builtin_expect(mem.slow || !mt || agent_in_dl || mem_from_agent(c.ra), 0)) {
		mem_record_alloc(m, p, size, c);
		return;
	}
	s = mem_slot_of(mt, c.ra, c.cfa, 0);
	if (__builtin_expect(s->ra != c.ra || s->sp != c.cfa || s->h || s->deep ||
				     s->countdown <= 1 || !mem.hdr,
			     0)) {
		mem_record_alloc(m, p, size, c);
		return;
	}
	s->countdown--;
	e = s->entry;
	locked = mem_enter(m);
	mem_put(p, size, e, 1);
	mem_account_alloc(e, size, 1);
	mem_leave(locked);
	m->last_alloc = p;
	mem_count_op(m, size);
}

/*
 * A free (or the end of a block realloc replaced, temporary false then): true when p was a
 * recorded block, now accounted and out of the table.
 */
static inline __attribute__((always_inline)) bool mem_note_free(struct mem_tls *m, uintptr_t p)
{
	struct mem_block blk;
	bool locked, found, temporary = false;

	locked = mem_enter(m);
	found = mem.hdr && mem_blocks_remove(&mem.blocks, p, &blk);
	if (found) {
		temporary = m->last_alloc == p;
		mem_account_free(blk.entry, blk.size, blk.count, temporary);
		if (mem.sampled && mem_filter[mem_filter_index(p)] < 255)
			mem_filter[mem_filter_index(p)]--;
	} else if (mem.hdr && !mem.sampled) {
		mem.hdr->unknown_frees++;
	}
	mem_leave(locked);
	if (!found)
		return false;
	if (temporary)
		m->last_alloc = 0;
	mem_count_op(m, blk.size);
	return true;
}

#endif
