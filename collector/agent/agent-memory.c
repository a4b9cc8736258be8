/* SPDX-License-Identifier: MIT */
/* memory-consumption in the agent: the counters, the live blocks, the peak, the timeline. */
#include <errno.h>
#include <fcntl.h>
#include <linux/membarrier.h>
#include <math.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "collector/agent/agent-memory-private.h"
#include "common/hash.h"

/*
 * Every operation the program makes is accounted here, in the process, never written out one
 * by one: the entry of its (thread, stack) in the aggregate file (common/raw-memory.h) takes
 * the counts and bytes, the live-block table remembers each block's entry and size until it
 * is freed, and the header holds the totals and the peak. The file is MAP_SHARED: what is
 * stored is in the page cache at once, so a killed program leaves its figures behind.
 *
 * The peak per stack is kept exactly and cheaply with an epoch: the header counts the peaks
 * reached (epoch), and an entry remembers the epoch it last changed in and its live bytes at
 * that epoch's start (the first change in an epoch takes them). At the end, an entry changed
 * since the last peak has its value at that peak in peak_live; one untouched since has it as
 * its current live bytes (raw_mem_entry_at_peak()).
 */

__thread struct mem_tls mem_tls AGENT_TLS;
struct mem_state mem;
uint8_t mem_filter[1u << MEM_FILTER_BITS];

/* ---- the lock --------------------------------------------------------------------------- */

void mem_lock_slow(void)
{
	int spins = 0;

	for (;;) {
		while (atomic_load_explicit(&mem.lock, memory_order_relaxed)) {
			if (++spins < 64)
				__builtin_ia32_pause();
			else
				sched_yield();
		}
		if (!atomic_exchange_explicit(&mem.lock, 1, memory_order_acquire))
			return;
	}
}

/*
 * A second thread allocates: from now on everyone takes the lock. The owner may be inside an
 * update without it (solo_busy): membarrier makes every other thread pass a full barrier, so
 * after it either the owner's solo_busy = 1 is visible here (we wait for its end) or its next
 * check sees threaded (it takes the lock). The owner pays no fence. Returns with the lock.
 */
void mem_switch_threaded(void)
{
	if (atomic_exchange_explicit(&mem.lock, 1, memory_order_acquire))
		mem_lock_slow();
	if (atomic_load(&mem.threaded))
		return;
	atomic_store(&mem.threaded, 1);
	syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0);
	while (mem.solo_busy)
		__builtin_ia32_pause();
}

/* Whether the owner may go without the lock: the barrier the switch needs is available. */
static void lock_mode_init(void)
{
	atomic_store(&mem.threaded, mem.hooks);
	if (syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0))
		atomic_store(&mem.threaded, 1);
	atomic_store(&mem.lock, 0);
	mem.solo_busy = 0;
	mem_tls.owner = true;
}

/* ---- accounting (inside mem_enter/mem_leave) ---------------------------------------------- */

static uint64_t now_mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void mem_peak_reached(struct raw_mem_header *h)
{
	/* The entries untouched from now on keep their value at this peak. */
	h->peak_bytes = h->live_bytes;
	h->epoch++;
	h->peak_ns = now_mono();
}

static void account_untracked(uint64_t bytes)
{
	if (mem.hdr) {
		mem.hdr->untracked_allocs++;
		mem.hdr->untracked_bytes += bytes;
	} else {
		mem.early_allocs++;
		mem.early_bytes += bytes;
	}
}

/* ---- sampling ---------------------------------------------------------------------------- */

static uint64_t rng_next(struct mem_tls *m)
{
	uint64_t x = m->rng;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	m->rng = x;
	return x * 0x2545f4914f6cdd1dull;
}

/* Uniform in (0, 1]. */
static double rng_unit(struct mem_tls *m)
{
	return ((double)(rng_next(m) >> 11) + 1.0) / 9007199254740992.0;
}

/* Bytes to the next point of a Poisson process of mean spacing sample_bytes. */
static int64_t rng_gap(struct mem_tls *m)
{
	double g = -log(rng_unit(m)) * (double)mem.sample_bytes;

	return g < 1.0 ? 1 : g > 9e18 ? INT64_MAX : (int64_t)g;
}

/* x rounded up or down at random, so that the expectation is x: sums stay unbiased. */
static uint64_t round_random(struct mem_tls *m, double x)
{
	double f = floor(x);

	return (uint64_t)f + (rng_unit(m) <= x - f ? 1 : 0);
}

/*
 * The wrapper subtracted size from the countdown and found it at or below 0: a sample point
 * fell inside this allocation. P(sampled) = 1 - exp(-size / N) whatever came before (the
 * process is memoryless), so weight 1 / P makes every sum unbiased.
 */
bool mem_sample(struct mem_tls *m, uint64_t size, double *weight)
{
	if (!m->rng) {
		/* a thread's first: its process starts now */
		m->rng = hash_mix((uint64_t)(uintptr_t)m ^ now_mono()) | 1;
		m->countdown += rng_gap(m);
		if (m->countdown > 0)
			return false;
	}
	m->countdown = rng_gap(m);
	*weight = 1.0 / -expm1(-(double)size / (double)mem.sample_bytes);
	return true;
}

/* ---- the timeline ------------------------------------------------------------------------ */

/*
 * The resident set, from /proc/self/statm (its second number, pages), in bytes; 0 when it
 * cannot be read. System calls only: this runs inside malloc.
 */
static uint64_t rss_bytes(void)
{
	char buf[128];
	uint64_t res = 0;
	ssize_t n, i = 0;
	int fd = (int)syscall(SYS_openat, AT_FDCWD, "/proc/self/statm", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	n = syscall(SYS_read, fd, buf, sizeof(buf) - 1);
	syscall(SYS_close, fd);
	if (n <= 0)
		return 0;
	while (i < n && buf[i] != ' ')
		i++;
	for (i++; i < n && buf[i] >= '0' && buf[i] <= '9'; i++)
		res = res * 10 + (uint64_t)(buf[i] - '0');
	return res * (uint64_t)sysconf(_SC_PAGESIZE);
}

/* A point of the live heap and RSS into the calling thread's stream. */
static void write_point(struct mem_tls *m)
{
	struct agent_thread *t = m->mt ? m->mt->t : NULL;
	uint8_t buf[4 * RAW_VARINT_MAX];
	int expected = 0;
	uint64_t live;
	size_t len;

	if (!t || !mem.hdr || atomic_load(&t->state) != AGENT_THREAD_LIVE ||
	    !atomic_compare_exchange_strong(&t->busy, &expected, 1))
		return;
	live = mem.hdr->live_bytes;
	atomic_store_explicit(&mem.point_live, live, memory_order_relaxed);
	len = raw_mem_counters_encode(buf, raw_header_now(&t->hdr), live, rss_bytes());
	raw_writer_record(&t->w, RAW_REC_MEM_COUNTERS, buf, len);
	agent_account(t);
	agent_thread_give(t);
}

/*
 * A point every sampling interval while the program allocates or frees; sooner (a tenth of
 * the interval at the least) when the live heap moved by a large step since the last point
 * (MEM_TICK_BYTES and an eighth), so that a program of few large blocks shows each of them.
 */
static bool big_step(void)
{
	uint64_t live = mem.hdr ? mem.hdr->live_bytes : 0;
	uint64_t was = atomic_load_explicit(&mem.point_live, memory_order_relaxed);
	uint64_t d = live > was ? live - was : was - live;

	return d >= MEM_TICK_BYTES && d >= was / 8;
}

void mem_tick(struct mem_tls *m)
{
	int64_t now = (int64_t)now_mono();
	int64_t last = atomic_load_explicit(&mem.last_tick_ns, memory_order_relaxed);

	if (now - last < mem.tick_ns && (now - last < mem.tick_ns / 10 || !big_step()))
		return;
	if (!atomic_compare_exchange_strong(&mem.last_tick_ns, &last, now))
		return;
	mem_file_account();
	write_point(m);
}

/* ---- recording ------------------------------------------------------------------------- */

/* A block already at blk's address was freed where we could not see; or no room for blk. */
void mem_put_odd(uint32_t count, const struct mem_block *old, int r)
{
	if (r == 1)
		mem_account_free(old->entry, old->size, old->count, false);
	else
		mem.hdr->untracked_allocs += count; /* stays counted, as if never freed */
}

static void record(struct mem_tls *m, uintptr_t p, uint64_t size, uint64_t bytes, uint64_t count,
		   struct mem_call c)
{
	uint32_t e, n = (uint32_t)(count > UINT32_MAX ? UINT32_MAX : count);
	bool locked;

	if (atomic_load_explicit(&mem.py_pending, memory_order_relaxed) == 1)
		mem_python_try_hook();
	e = mem_from_agent(c.ra) ? MEM_OURS : mem_callsite(m, c);
	if (e == MEM_OURS)
		return;
	locked = mem_enter(m);
	if (!mem.hdr || e == MEM_NO_ENTRY) {
		account_untracked(size);
		mem_leave(locked);
		return;
	}
	mem_put(p, bytes, e, n);
	mem_account_alloc(e, bytes, count);
	if (mem.sampled)
		mem.hdr->sampled_allocs++;
	mem_leave(locked);
	m->last_alloc = p;
	mem_count_op(m, size);
}

void mem_record_alloc(struct mem_tls *m, uintptr_t p, uint64_t size, struct mem_call c)
{
	double w;

	/* Paused (or stopped): not recorded; its block's free is one of a block not recorded. */
	if (agent_paused())
		return;
	if (!mem.sampled) {
		record(m, p, size, size, 1, c);
		return;
	}
	if (mem_sample(m, size, &w))
		record(m, p, size, round_random(m, (double)size * w), round_random(m, w), c);
}

void mem_record_free_block(struct mem_tls *m, const struct mem_block *blk, bool temporary)
{
	bool locked = mem_enter(m);

	mem_account_free(blk->entry, blk->size, blk->count, temporary);
	mem_leave(locked);
}

bool mem_record_take(struct mem_tls *m, uintptr_t p, struct mem_block *out)
{
	bool locked, found;

	if (mem.sampled && !mem_filter[mem_filter_index(p)])
		return false;
	locked = mem_enter(m);
	found = mem.hdr && mem_blocks_remove(&mem.blocks, p, out);
	if (found && mem.sampled && mem_filter[mem_filter_index(p)] < 255)
		mem_filter[mem_filter_index(p)]--;
	if (!found && mem.hdr && !mem.sampled)
		mem.hdr->unknown_frees++;
	mem_leave(locked);
	return found;
}

void mem_record_untake(struct mem_tls *m, const struct mem_block *blk)
{
	bool locked = mem_enter(m);

	mem_put(blk->addr, blk->size, blk->entry, blk->count);
	mem_leave(locked);
}

/* ---- anonymous mappings ------------------------------------------------------------------ */

static void unmap_piece(void *ctx, const struct mem_region *piece)
{
	(void)ctx;
	mem_account_free(piece->entry, (uint64_t)((double)(piece->hi - piece->lo) * piece->scale),
			 piece->count, false);
}

void mem_record_map(struct mem_tls *m, uintptr_t p, uint64_t len, struct mem_call c)
{
	struct mem_region reg = { p, p + len, 0, 1, 1.0 };
	uint64_t bytes = len, count = 1;
	double w = 1.0;
	uint32_t e;
	bool locked;

	if (agent_paused())
		return;
	if (mem.sampled) {
		m->countdown -= (int64_t)len;
		if (m->countdown > 0 || !mem_sample(m, len, &w))
			return;
		bytes = round_random(m, (double)len * w);
		count = round_random(m, w);
		reg.scale = (double)bytes / (double)len;
		reg.count = (uint32_t)(count > UINT32_MAX ? UINT32_MAX : count);
	}
	e = mem_from_agent(c.ra) ? MEM_OURS : mem_callsite(m, c);
	if (e == MEM_OURS)
		return;
	locked = mem_enter(m);
	if (!mem.hdr || e == MEM_NO_ENTRY || (reg.entry = e, mem_regions_add(&mem.regions, &reg))) {
		account_untracked(len);
		mem_leave(locked);
		return;
	}
	mem_account_alloc(e, bytes, count);
	mem_leave(locked);
	mem_count_op(m, len);
}

void mem_record_unmap(struct mem_tls *m, uintptr_t p, uint64_t len)
{
	bool locked = mem_enter(m);

	if (mem.hdr && mem.regions.n)
		mem_regions_remove(&mem.regions, p, p + len, unmap_piece, NULL);
	mem_leave(locked);
	mem_count_op(m, len);
}

void mem_record_remap(struct mem_tls *m, uintptr_t old, uint64_t old_len, uintptr_t p, uint64_t len,
		      struct mem_call c)
{
	bool locked = mem_enter(m), had = false;

	if (mem.hdr && mem_regions_covers(&mem.regions, old)) {
		had = true;
		mem_regions_remove(&mem.regions, old, old + old_len, unmap_piece, NULL);
	}
	mem_leave(locked);
	if (had && atomic_load_explicit(&mem.alloc_on, memory_order_relaxed))
		mem_record_map(m, p, len, c);
}

/* ---- lifecycle --------------------------------------------------------------------------- */

struct text_range {
	uintptr_t addr, lo, hi;
};

static int find_text(struct dl_phdr_info *info, size_t size, void *ctx)
{
	struct text_range *r = ctx;
	uintptr_t lo, hi;

	(void)size;
	agent_module_text(info, &lo, &hi);
	if (r->addr < lo || r->addr >= hi)
		return 0;
	r->lo = lo;
	r->hi = hi;
	return 1;
}

void mem_text_of(uintptr_t addr, uintptr_t *lo, uintptr_t *hi)
{
	struct text_range r = { addr, 0, 0 };

	dl_iterate_phdr(find_text, &r);
	*lo = r.lo;
	*hi = r.hi;
}

static int tables_init(void)
{
	if (mem_blocks_init(&mem.blocks))
		return -ENOMEM;
	mem_regions_init(&mem.regions);
	return 0;
}

void mem_start(void)
{
	mem.sampled = agent.cfg.mem_sample_bytes != 0;
	mem.slow = mem.sampled;
	mem.sample_bytes = agent.cfg.mem_sample_bytes;
	mem.tick_ns = (int64_t)agent.cfg.interval_ns;
	/* our own code: allocations it makes directly are not the program's */
	mem_text_of((uintptr_t)mem_start, &mem.agent_lo, &mem.agent_hi);
	mem_resolve();
	mem_unwind_init();
	if (!mem_malloc_is_ours()) {
		if (mem_sanitizer_hooks()) {
			mem.hooks = true;
			mem.slow = 1;
			agent_log(
				"memory: the program's malloc is a sanitizer's: allocations recorded "
				"through its allocator hooks, each one unwound");
		} else {
			agent_log(
				"memory: the program's malloc is not the C library's and has no "
				"hooks: its allocations are not recorded (new/delete and mmap are)");
		}
	}
	lock_mode_init();
	if (tables_init() || mem_file_open()) {
		agent_log("memory: cannot set up its tables or file: allocations not recorded");
		return;
	}
	mem.hdr->untracked_allocs += mem.early_allocs;
	mem.hdr->untracked_bytes += mem.early_bytes;
	mem.hdr->flags |= mem.hooks ? RAW_MEM_HOOKS : 0;
	/* the first call writes a point */
	atomic_store(&mem.last_tick_ns, (int64_t)now_mono() - mem.tick_ns);
	atomic_store(&mem.free_on, mem.sampled ? MEM_SAMPLED : MEM_EXACT);
	atomic_store(&mem.alloc_on, mem.sampled ? MEM_SAMPLED : MEM_EXACT);
}

void mem_agent_enter(void)
{
	mem_tls.busy++;
}

void mem_agent_leave(void)
{
	mem_tls.busy--;
}

void mem_go_threaded(void)
{
	if (!atomic_load(&mem.threaded)) {
		mem_switch_threaded();
		atomic_store_explicit(&mem.lock, 0, memory_order_release);
	}
}

static size_t thread_map_len(void)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	return (sizeof(struct mem_thread) + page - 1) / page * page;
}

/*
 * How high this thread's stack may be read (the stack walk's reuse checks), without
 * pthread_getattr_np(): that allocates (the thread's CPU set), and a thread's first malloc
 * makes the C library give it an arena of its own, 64 MiB of address space reserved, which
 * the program's thread alone might never have had: under ulimit -v the program then could
 * not create its threads (issue 22). glibc keeps a thread's descriptor at the top of the
 * block its stack is in (its own stack or one the program gave it), so everything between
 * this frame and pthread_self() is that block's. 0 when that does not hold (the main thread,
 * whose descriptor is elsewhere): pthread_getattr_np() is asked then.
 */
static uintptr_t own_stack_top(void)
{
	uintptr_t top = (uintptr_t)pthread_self(), here = (uintptr_t)__builtin_frame_address(0);

	if (getpid() == (pid_t)syscall(SYS_gettid) || here >= top || top - here > (1ul << 30))
		return 0;
	return top;
}

void mem_thread_begin(struct agent_thread *t)
{
	struct mem_thread *mt = t->mem;
	pthread_attr_t attr;
	void *lo;
	size_t size;

	if (!mem.hdr)
		return;
	if (!mt) {
		mt = mmap(NULL, thread_map_len(), PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (mt == MAP_FAILED) {
			agent_log("memory: thread %d: no memory for its call-site cache: its "
				  "allocations are counted, not attributed",
				  (int)t->tid);
			return;
		}
		mt->map_len = thread_map_len();
		__atomic_add_fetch(&mem.agent_static, mt->map_len, __ATOMIC_RELAXED);
	} else {
		mem_thread_cache_clear(mt);
	}
	mt->t = t;
	mt->stack_hi = 0;
	if (!t->external)
		mt->stack_hi = own_stack_top();
	if (!t->external && !mt->stack_hi && !pthread_getattr_np(pthread_self(), &attr)) {
		if (!pthread_attr_getstack(&attr, &lo, &size))
			mt->stack_hi = (uintptr_t)lo + size;
		pthread_attr_destroy(&attr);
	}
	t->mem = mt;
	if (!t->external) {
		mem_tls.mt = mt;
		mem_tls.looked_up = true;
	}
}

void mem_thread_end(struct agent_thread *t, bool own)
{
	struct mem_thread *mt = t->mem;

	if (!mt || !own)
		return; /* another thread's: it may still run and read its cache */
	mem_tls.mt = NULL;
	t->mem = NULL;
	__atomic_sub_fetch(&mem.agent_static, mt->map_len, __ATOMIC_RELAXED);
	munmap(mt, mt->map_len);
}

/* A fork child drops a thread that did not survive the fork. */
void mem_thread_drop(struct agent_thread *t)
{
	struct mem_thread *mt = t->mem;

	if (!mt)
		return;
	t->mem = NULL;
	__atomic_sub_fetch(&mem.agent_static, mt->map_len, __ATOMIC_RELAXED);
	munmap(mt, mt->map_len);
}

void mem_fork_child(void)
{
	if (!mem.hdr && !mem.blocks.slots)
		return;
	atomic_store(&mem.alloc_on, 0);
	atomic_store(&mem.free_on, 0);
	/* The parent's blocks are not this process's to account: their frees pass through. */
	mem_file_drop();
	mem_blocks_clear(&mem.blocks);
	mem_regions_clear(&mem.regions);
	/* mem_filter is kept: it marks the arena's blocks, and a stale slot costs a lookup */
	mem.early_allocs = mem.early_bytes = 0;
	mem_tls.last_alloc = 0;
	if (mem_tls.mt)
		mem_thread_cache_clear(mem_tls.mt);
	lock_mode_init();
	if (mem_file_open()) {
		agent_log("memory: cannot create the child's file: allocations not recorded");
		return;
	}
	mem.hdr->flags |= mem.hooks ? RAW_MEM_HOOKS : 0;
	atomic_store(&mem.free_on, mem.sampled ? MEM_SAMPLED : MEM_EXACT);
	atomic_store(&mem.alloc_on, mem.sampled ? MEM_SAMPLED : MEM_EXACT);
}

void mem_image_end(void)
{
	if (!mem.hdr)
		return;
	mem_tls.busy++;
	if (atomic_exchange(&mem.alloc_on, 0))
		write_point(&mem_tls);
	mem_file_account();
	mem.hdr->ended_ns = now_mono();
	mem.hdr->flags |= RAW_MEM_ENDED;
	mem_tls.busy--;
}

void mem_image_resume(void)
{
	if (!mem.hdr)
		return;
	mem.hdr->flags &= ~(uint32_t)RAW_MEM_ENDED;
	mem.hdr->ended_ns = 0;
	atomic_store(&mem.alloc_on, mem.sampled ? MEM_SAMPLED : MEM_EXACT);
}
