/* SPDX-License-Identifier: MIT */
/* memory-consumption's C wrappers: the malloc family, munmap and mremap, sanitizer hooks. */
#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "collector/agent/agent-memory-private.h"

/*
 * Each wrapper calls the next definition (the C library's, or another preloaded allocator's:
 * dlsym(RTLD_NEXT)) with the thread's recursion guard held, then records what it got. With
 * the guard held, or while nothing is recorded, a wrapper is a call through a pointer.
 *
 * Before the real functions are known, dlsym itself allocates (calloc for its error buffer):
 * those calls, and any made while another thread resolves, are served from a static arena
 * here. Its blocks are never given to the real free(); realloc() moves them out.
 *
 * A block is taken out of the table before the real free() or realloc() runs, so another
 * thread cannot be handed its address and record it while we still hold the old one.
 */

static void *malloc_early(size_t n);
static void free_early(void *p);

/*
 * The next definitions. malloc and free start as the functions that resolve them (the hot
 * wrappers then jump through the pointer with no test of their own); the others are NULL
 * until resolved (ready()).
 */
static struct {
	void *(*malloc)(size_t);
	void (*free)(void *);
	void *(*calloc)(size_t, size_t);
	void *(*realloc)(void *, size_t);
	void *(*reallocarray)(void *, size_t, size_t);
	int (*posix_memalign)(void **, size_t, size_t);
	void *(*aligned_alloc)(size_t, size_t);
	void *(*memalign)(size_t, size_t);
	void *(*valloc)(size_t);
	void *(*pvalloc)(size_t);
	int (*munmap)(void *, size_t);
	void *(*mremap)(void *, size_t, size_t, int, ...);
} real = { .malloc = malloc_early, .free = free_early };
static _Atomic int resolved;

/* glibc's own names: the fallback when dlsym cannot give the next definition. */
extern void *__libc_malloc(size_t);
extern void __libc_free(void *);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void *__libc_valloc(size_t);
extern void *__libc_pvalloc(size_t);

/* ---- the bootstrap arena ------------------------------------------------------------------ */

#define BOOT_SIZE (256u << 10)
static uint8_t boot[BOOT_SIZE] __attribute__((aligned(4096)));
static _Atomic size_t boot_used;

static bool is_boot(const void *p)
{
	return (uintptr_t)p - (uintptr_t)boot < BOOT_SIZE;
}

/* A block from the arena, its size in the word before it; NULL when the arena is spent. */
static void *boot_alloc(size_t n, size_t align)
{
	size_t a = align < 16 ? 16 : align, need = (n + 15) / 16 * 16 + a + 16;
	size_t off = atomic_fetch_add(&boot_used, need);
	uintptr_t p;

	if (off + need > BOOT_SIZE || need < n)
		return NULL;
	p = ((uintptr_t)boot + off + 16 + a - 1) / a * a;
	((size_t *)p)[-1] = n;
	mem_filter[mem_filter_index(p)] = 255; /* never the real free's (free()) */
	return (void *)p;                      /* static memory: zero already, as calloc wants */
}

static _Atomic int resolving;

#define NEXT(name, fallback)                                                                       \
	(real.name = dlsym(RTLD_NEXT, #name), real.name ? real.name : (real.name = fallback))

void mem_resolve(void)
{
	void *(*m)(size_t);
	void (*f)(void *);

	if (atomic_load(&resolved) || atomic_exchange(&resolving, 1))
		return; /* done, or being done: the caller uses the arena meanwhile */
	m = (void *(*)(size_t))dlsym(RTLD_NEXT, "malloc");
	f = (void (*)(void *))dlsym(RTLD_NEXT, "free");
	NEXT(calloc, __libc_calloc);
	NEXT(realloc, __libc_realloc);
	NEXT(memalign, __libc_memalign);
	NEXT(valloc, __libc_valloc);
	NEXT(pvalloc, __libc_pvalloc);
	real.reallocarray = dlsym(RTLD_NEXT, "reallocarray");
	real.posix_memalign = dlsym(RTLD_NEXT, "posix_memalign");
	real.aligned_alloc = dlsym(RTLD_NEXT, "aligned_alloc");
	real.munmap = dlsym(RTLD_NEXT, "munmap");
	real.mremap = dlsym(RTLD_NEXT, "mremap");
	real.malloc = m ? m : __libc_malloc;
	real.free = f ? f : __libc_free;
	atomic_store(&resolved, 1);
}

static inline bool ready(void)
{
	if (__builtin_expect(atomic_load_explicit(&resolved, memory_order_relaxed), 1))
		return true;
	mem_resolve();
	return atomic_load(&resolved);
}

/* ---- the wrappers ------------------------------------------------------------------------- */

/*
 * malloc and free are the hot pair: their wrappers only test and jump, a tail call to the real
 * function when there is nothing to record, to the recording path (which needs the registers
 * and the frame) otherwise. The caller's return address and stack pointer go with it.
 */
__attribute__((noinline)) static void *malloc_record(size_t n, void *ra, void *cfa)
{
	struct mem_tls *m = &mem_tls;
	void *p;

	m->busy++;
	p = real.malloc(n);
	if (p)
		mem_note_alloc(m, (uintptr_t)p, n,
			       (struct mem_call){ (uintptr_t)ra, (uintptr_t)cfa });
	m->busy--;
	return p;
}

static void *malloc_early(size_t n)
{
	if (!ready())
		return boot_alloc(n, 16);
	return real.malloc(n);
}

/* Nothing to record: off, or (sampled) no sample point in these n bytes, or our own call. */
static inline bool pass_malloc(struct mem_tls *m, size_t n)
{
	int mode = atomic_load_explicit(&mem.alloc_on, memory_order_relaxed);

	if (mode == MEM_SAMPLED)
		return (m->countdown -= (int64_t)n) > 0 || m->busy;
	return !mode || m->busy;
}

AGENT_EXPORT void *malloc(size_t n)
{
	struct mem_tls *m = &mem_tls;

	if (pass_malloc(m, n))
		return real.malloc(n);
	return malloc_record(n, __builtin_return_address(0), __builtin_dwarf_cfa());
}

/* Our malloc's own address (the name "malloc" here is the program's first definition). */
extern __typeof(malloc) mem_malloc_self
	__attribute__((alias("malloc"), copy(malloc), visibility("hidden")));

static void free_early(void *p)
{
	/* before the real free is known only the arena's blocks exist */
	if (ready() && p && !is_boot(p))
		real.free(p);
}

__attribute__((noinline)) static void free_record(void *p, int mode)
{
	struct mem_tls *m = &mem_tls;

	if (is_boot(p) || !p)
		return;
	if (!mode || m->busy) {
		real.free(p);
		return;
	}
	m->busy++;
	mem_note_free(m, (uintptr_t)p);
	real.free(p);
	m->busy--;
}

AGENT_EXPORT void free(void *p)
{
	int mode = atomic_load_explicit(&mem.free_on, memory_order_relaxed);

	/*
	 * Sampled: a block whose filter slot is 0 was not sampled (the arena's blocks have
	 * theirs set for good, so they never reach the real free from here).
	 */
	if (mode == MEM_SAMPLED && !mem_filter[mem_filter_index((uintptr_t)p)]) {
		real.free(p);
		return;
	}
	free_record(p, mode);
}

AGENT_EXPORT void *calloc(size_t nelem, size_t elsize)
{
	struct mem_tls *m = &mem_tls;
	size_t n;
	void *p;

	if (__builtin_mul_overflow(nelem, elsize, &n))
		n = SIZE_MAX;
	if (!ready())
		return n == SIZE_MAX ? NULL : boot_alloc(n, 16);
	if (!mem_wanted(m) || mem_unsampled(m, n))
		return real.calloc(nelem, elsize);
	m->busy++;
	p = real.calloc(nelem, elsize);
	if (p)
		mem_note_alloc(m, (uintptr_t)p, n, MEM_CALL());
	m->busy--;
	return p;
}

/* realloc and reallocarray: the old block freed (not a temporary), the new one allocated. */
static void *resize(void *old, size_t nelem, size_t elsize, bool array, struct mem_call c)
{
	struct mem_tls *m = &mem_tls;
	struct mem_block blk;
	size_t n;
	bool had;
	void *p;

	if (__builtin_mul_overflow(nelem, elsize, &n))
		n = SIZE_MAX;
	if (m->busy || !atomic_load_explicit(&mem.free_on, memory_order_relaxed))
		return array ? real.reallocarray(old, nelem, elsize) : real.realloc(old, n);
	m->busy++;
	had = old && mem_record_take(m, (uintptr_t)old, &blk);
	p = array ? real.reallocarray(old, nelem, elsize) : real.realloc(old, n);
	if (had && !p && n)
		mem_record_untake(m, &blk); /* failed: the old block is still there */
	else if (had)
		mem_record_free_block(m, &blk, false); /* glibc's realloc(p, 0) frees p */
	if (p && atomic_load_explicit(&mem.alloc_on, memory_order_relaxed) && !mem_unsampled(m, n))
		mem_note_alloc(m, (uintptr_t)p, n, c);
	m->busy--;
	return p;
}

/* A block of the arena moves to the real allocator, its bytes with it. */
static void *boot_move(void *old, size_t n)
{
	size_t had = ((size_t *)old)[-1];
	void *p = malloc(n);

	if (p)
		memcpy(p, old, had < n ? had : n);
	return p;
}

AGENT_EXPORT void *realloc(void *old, size_t n)
{
	if (!ready()) {
		void *p = boot_alloc(n, 16);
		size_t had = old ? ((size_t *)old)[-1] : 0;

		if (p && old)
			memcpy(p, old, had < n ? had : n);
		return p;
	}
	if (__builtin_expect(is_boot(old), 0))
		return boot_move(old, n);
	return resize(old, n, 1, false, MEM_CALL());
}

AGENT_EXPORT void *reallocarray(void *old, size_t nelem, size_t elsize)
{
	size_t n;

	if (__builtin_mul_overflow(nelem, elsize, &n)) {
		errno = ENOMEM;
		return NULL;
	}
	if (!ready() || !real.reallocarray || is_boot(old))
		return realloc(old, n);
	return resize(old, nelem, elsize, true, MEM_CALL());
}

/* The aligned family: aligned blocks, recorded at the size asked for. */
#define ALIGNED_BODY(call, size)                                                                   \
	struct mem_tls *m = &mem_tls;                                                              \
	void *p;                                                                                   \
	if (!mem_wanted(m) || mem_unsampled(m, size))                                              \
		return call;                                                                       \
	m->busy++;                                                                                 \
	p = call;                                                                                  \
	if (p)                                                                                     \
		mem_note_alloc(m, (uintptr_t)p, size, MEM_CALL());                                 \
	m->busy--;                                                                                 \
	return p

AGENT_EXPORT void *memalign(size_t align, size_t n)
{
	if (!ready())
		return boot_alloc(n, align);
	ALIGNED_BODY(real.memalign(align, n), n);
}

AGENT_EXPORT void *aligned_alloc(size_t align, size_t n)
{
	if (!ready() || !real.aligned_alloc)
		return memalign(align, n);
	ALIGNED_BODY(real.aligned_alloc(align, n), n);
}

AGENT_EXPORT void *valloc(size_t n)
{
	if (!ready())
		return boot_alloc(n, 4096);
	ALIGNED_BODY(real.valloc(n), n);
}

/* pvalloc rounds the size up to whole pages: that is what the program gets and is counted. */
AGENT_EXPORT void *pvalloc(size_t n)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), size = n ? (n + page - 1) / page * page : page;

	if (!ready())
		return boot_alloc(size, page);
	ALIGNED_BODY(real.pvalloc(n), size);
}

AGENT_EXPORT int posix_memalign(void **out, size_t align, size_t n)
{
	struct mem_tls *m = &mem_tls;
	int ret;

	if (!ready() || !real.posix_memalign) {
		void *p = memalign(align, n);

		if (!p)
			return ENOMEM;
		*out = p;
		return 0;
	}
	if (!mem_wanted(m) || mem_unsampled(m, n))
		return real.posix_memalign(out, align, n);
	m->busy++;
	ret = real.posix_memalign(out, align, n);
	if (!ret)
		mem_note_alloc(m, (uintptr_t)*out, n, MEM_CALL());
	m->busy--;
	return ret;
}

/* ---- anonymous mappings ------------------------------------------------------------------ */

void mem_mapped_at(void *p, size_t len, int prot, int flags, void *ra, void *cfa)
{
	struct mem_call c = { (uintptr_t)ra, (uintptr_t)cfa };
	struct mem_tls *m = &mem_tls;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	/* A reservation (PROT_NONE) holds no memory; file mappings are not the heap. */
	if (!(flags & MAP_ANONYMOUS) || prot == PROT_NONE || !mem_wanted(m) || !len)
		return;
	m->busy++;
	mem_record_map(m, (uintptr_t)p, (len + page - 1) / page * page, c);
	m->busy--;
}

AGENT_EXPORT int munmap(void *p, size_t len)
{
	struct mem_tls *m = &mem_tls;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	if (!ready() || !real.munmap)
		return (int)syscall(SYS_munmap, p, len);
	if (!m->busy && atomic_load_explicit(&mem.free_on, memory_order_relaxed) && mem.regions.n) {
		m->busy++;
		mem_record_unmap(m, (uintptr_t)p, (len + page - 1) / page * page);
		m->busy--;
	}
	return real.munmap(p, len);
}

AGENT_EXPORT void *mremap(void *old, size_t old_len, size_t len, int flags, ...)
{
	struct mem_tls *m = &mem_tls;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	void *want = NULL, *p;
	va_list ap;

	if (flags & MREMAP_FIXED) {
		va_start(ap, flags);
		want = va_arg(ap, void *);
		va_end(ap);
	}
	if (!ready() || !real.mremap)
		return (void *)syscall(SYS_mremap, old, old_len, len, flags, want);
	p = real.mremap(old, old_len, len, flags, want);
	if (p == MAP_FAILED || m->busy ||
	    !atomic_load_explicit(&mem.free_on, memory_order_relaxed) || !mem.regions.n)
		return p;
	/* Like realloc: the old range freed, the new one allocated here, if it was recorded. */
	m->busy++;
	mem_record_remap(m, (uintptr_t)old, (old_len + page - 1) / page * page, (uintptr_t)p,
			 (len + page - 1) / page * page, MEM_CALL());
	m->busy--;
	return p;
}

/* ---- another malloc than ours ------------------------------------------------------------- */

/*
 * Whether the program's malloc is ours: the name's first definition, or what a call through it
 * reaches. A non-PIE executable that takes malloc's address (Debian's python3.11) has its
 * PLT entry as the canonical address: dlsym gives that, a stub that jumps to us. So one call
 * through it, with our pass-through path's next function replaced for the time of the call,
 * says where it lands: a sanitizer's or another allocator's malloc never calls ours.
 */
static __thread bool probe_hit;
static void *(*probe_next)(size_t);

static void *probe_malloc(size_t n)
{
	probe_hit = true;
	return probe_next(n);
}

bool mem_malloc_is_ours(void)
{
	void *(*m)(size_t) = (void *(*)(size_t))dlsym(RTLD_DEFAULT, "malloc");
	void (*f)(void *) = (void (*)(void *))dlsym(RTLD_DEFAULT, "free");
	void *p;

	if (m == mem_malloc_self)
		return true;
	/* nothing is recorded yet (alloc_on is 0): our malloc passes the call to real.malloc */
	if (!m || !f || !ready() || atomic_load(&mem.alloc_on))
		return false;
	probe_next = real.malloc;
	probe_hit = false;
	real.malloc = probe_malloc;
	p = m(16);
	real.malloc = probe_next;
	f(p);
	return probe_hit;
}

static void san_malloc(const volatile void *p, size_t n)
{
	struct mem_tls *m = &mem_tls;

	if (!mem_wanted(m) || mem_unsampled(m, n))
		return;
	m->busy++;
	mem_record_alloc(m, (uintptr_t)p, n, (struct mem_call){ 0, 0 });
	m->busy--;
}

static void san_free(const volatile void *p)
{
	struct mem_tls *m = &mem_tls;

	if (m->busy || !atomic_load_explicit(&mem.free_on, memory_order_relaxed))
		return;
	if (mem.sampled && !mem_filter[mem_filter_index((uintptr_t)p)])
		return;
	m->busy++;
	mem_note_free(m, (uintptr_t)p);
	m->busy--;
}

/*
 * AddressSanitizer (and the other sanitizers with an allocator) replace malloc ahead of us,
 * and call hooks a tool may install on every allocation and free: we record through those.
 * Each call is unwound (the hook runs inside the sanitizer's allocator: no call-site key),
 * skipping the sanitizer's frames.
 */
bool mem_sanitizer_hooks(void)
{
	int (*install)(void (*)(const volatile void *, size_t), void (*)(const volatile void *));

	install =
		(int (*)(void (*)(const volatile void *, size_t), void (*)(const volatile void *)))
			dlsym(RTLD_DEFAULT, "__sanitizer_install_malloc_and_free_hooks");
	if (!install)
		return false;
	mem_text_of((uintptr_t)install, &mem.skip_lo, &mem.skip_hi);
	return install(san_malloc, san_free) != 0;
}
