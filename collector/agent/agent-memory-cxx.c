/* SPDX-License-Identifier: MIT */
/* memory-consumption's C++ wrappers: operator new and delete, every variant. */
#include <dlfcn.h>
#include <stdlib.h>

#include "collector/agent/agent-memory-private.h"

/*
 * The C++ runtime's operator new calls malloc, so malloc alone would count C++ allocations;
 * but its caller would be operator new, the same for every new of the program, and the
 * call-site key would be useless. Wrapping new and delete gives the key the program's own
 * call. The real operator (libstdc++'s, libc++'s) runs with the recursion guard held, so its
 * malloc is not counted again. It may throw (bad_alloc, a new_handler's exception): this file
 * is built with -fexceptions and the guard is released by a cleanup as the exception passes.
 *
 * The mangled names (Itanium C++ ABI, 64-bit size_t): new _Znwm, new[] _Znam; nothrow
 * RKSt9nothrow_t; aligned St11align_val_t; sized delete ...Pvm.
 */

typedef void *(*new1_fn)(size_t);
typedef void *(*new2_fn)(size_t, uintptr_t);
typedef void *(*new3_fn)(size_t, uintptr_t, uintptr_t);
typedef void (*del1_fn)(void *);
typedef void (*del2_fn)(void *, uintptr_t);
typedef void (*del3_fn)(void *, uintptr_t, uintptr_t);

static void *next(void *_Atomic *slot, const char *name)
{
	void *p = atomic_load_explicit(slot, memory_order_acquire);

	if (!p) {
		mem_tls.busy++; /* dlsym may allocate */
		p = dlsym(RTLD_NEXT, name);
		mem_tls.busy--;
		atomic_store_explicit(slot, p, memory_order_release);
	}
	return p;
}

static void guard_release(struct mem_tls **m)
{
	(*m)->busy--;
}

/* The body of a new: call, then record size bytes. */
#define NEW_BODY(call, size)                                                                       \
	do {                                                                                       \
		struct mem_tls *m = &mem_tls;                                                      \
		void *p;                                                                           \
		if (!mem_wanted(m) || mem_unsampled(m, size))                                      \
			return call;                                                               \
		{                                                                                  \
			struct mem_tls *g __attribute__((cleanup(guard_release))) = m;             \
			g->busy++;                                                                 \
			p = call;                                                                  \
			if (p)                                                                     \
				mem_note_alloc(m, (uintptr_t)p, size, MEM_CALL());                 \
		}                                                                                  \
		return p;                                                                          \
	} while (0)

/* The body of a delete: forget p, then call. */
#define DELETE_BODY(call)                                                                          \
	do {                                                                                       \
		struct mem_tls *m = &mem_tls;                                                      \
		if (p && !m->busy && atomic_load_explicit(&mem.free_on, memory_order_relaxed) &&   \
		    (!mem.sampled || mem_filter[mem_filter_index((uintptr_t)p)])) {                \
			struct mem_tls *g __attribute__((cleanup(guard_release))) = m;             \
			g->busy++;                                                                 \
			mem_note_free(m, (uintptr_t)p);                                            \
			call;                                                                      \
			return;                                                                    \
		}                                                                                  \
		call;                                                                              \
	} while (0)

/* Without a C++ runtime after us (none loaded?), new is malloc and delete free. */
static void *fallback_new(size_t n, size_t align)
{
	void *p = NULL;

	if (align <= 16)
		return malloc(n ? n : 1);
	return posix_memalign(&p, align, n ? n : 1) ? NULL : p;
}

#define NEW1(sym)                                                                                  \
	AGENT_EXPORT void *sym(size_t n);                                                          \
	AGENT_EXPORT void *sym(size_t n)                                                           \
	{                                                                                          \
		static void *_Atomic real;                                                         \
		new1_fn f = (new1_fn)next(&real, #sym);                                            \
		if (!f)                                                                            \
			return fallback_new(n, 0);                                                 \
		NEW_BODY(f(n), n);                                                                 \
	}
/* a: the alignment when aligned (else the nothrow tag, ignored) */
#define NEW2(sym, aligned)                                                                         \
	AGENT_EXPORT void *sym(size_t n, uintptr_t a);                                             \
	AGENT_EXPORT void *sym(size_t n, uintptr_t a)                                              \
	{                                                                                          \
		static void *_Atomic real;                                                         \
		new2_fn f = (new2_fn)next(&real, #sym);                                            \
		if (!f)                                                                            \
			return fallback_new(n, aligned ? a : 0);                                   \
		NEW_BODY(f(n, a), n);                                                              \
	}
#define NEW3(sym)                                                                                  \
	AGENT_EXPORT void *sym(size_t n, uintptr_t a, uintptr_t nothrow);                          \
	AGENT_EXPORT void *sym(size_t n, uintptr_t a, uintptr_t nothrow)                           \
	{                                                                                          \
		static void *_Atomic real;                                                         \
		new3_fn f = (new3_fn)next(&real, #sym);                                            \
		if (!f)                                                                            \
			return fallback_new(n, a);                                                 \
		NEW_BODY(f(n, a, nothrow), n);                                                     \
	}
#define DEL1(sym)                                                                                  \
	AGENT_EXPORT void sym(void *p);                                                            \
	AGENT_EXPORT void sym(void *p)                                                             \
	{                                                                                          \
		static void *_Atomic real;                                                         \
		del1_fn f = (del1_fn)next(&real, #sym);                                            \
		if (!f) {                                                                          \
			free(p);                                                                   \
			return;                                                                    \
		}                                                                                  \
		DELETE_BODY(f(p));                                                                 \
	}
#define DEL2(sym)                                                                                  \
	AGENT_EXPORT void sym(void *p, uintptr_t a);                                               \
	AGENT_EXPORT void sym(void *p, uintptr_t a)                                                \
	{                                                                                          \
		static void *_Atomic real;                                                         \
		del2_fn f = (del2_fn)next(&real, #sym);                                            \
		if (!f) {                                                                          \
			free(p);                                                                   \
			return;                                                                    \
		}                                                                                  \
		DELETE_BODY(f(p, a));                                                              \
	}
#define DEL3(sym)                                                                                  \
	AGENT_EXPORT void sym(void *p, uintptr_t a, uintptr_t b);                                  \
	AGENT_EXPORT void sym(void *p, uintptr_t a, uintptr_t b)                                   \
	{                                                                                          \
		static void *_Atomic real;                                                         \
		del3_fn f = (del3_fn)next(&real, #sym);                                            \
		if (!f) {                                                                          \
			free(p);                                                                   \
			return;                                                                    \
		}                                                                                  \
		DELETE_BODY(f(p, a, b));                                                           \
	}

/* operator new(size_t), new[](size_t) */
NEW1(_Znwm)
NEW1(_Znam)
/* new(size_t, const std::nothrow_t &), new[] */
NEW2(_ZnwmRKSt9nothrow_t, 0)
NEW2(_ZnamRKSt9nothrow_t, 0)
/* new(size_t, std::align_val_t), new[] */
NEW2(_ZnwmSt11align_val_t, 1)
NEW2(_ZnamSt11align_val_t, 1)
/* new(size_t, std::align_val_t, const std::nothrow_t &), new[] */
NEW3(_ZnwmSt11align_val_tRKSt9nothrow_t)
NEW3(_ZnamSt11align_val_tRKSt9nothrow_t)

/* delete(void *), delete[] */
DEL1(_ZdlPv)
DEL1(_ZdaPv)
/* sized: delete(void *, size_t), delete[] */
DEL2(_ZdlPvm)
DEL2(_ZdaPvm)
/* delete(void *, const std::nothrow_t &), delete[] */
DEL2(_ZdlPvRKSt9nothrow_t)
DEL2(_ZdaPvRKSt9nothrow_t)
/* delete(void *, std::align_val_t), delete[] */
DEL2(_ZdlPvSt11align_val_t)
DEL2(_ZdaPvSt11align_val_t)
/* sized and aligned: delete(void *, size_t, std::align_val_t), delete[] */
DEL3(_ZdlPvmSt11align_val_t)
DEL3(_ZdaPvmSt11align_val_t)
/* delete(void *, std::align_val_t, const std::nothrow_t &), delete[] */
DEL3(_ZdlPvSt11align_val_tRKSt9nothrow_t)
DEL3(_ZdaPvSt11align_val_tRKSt9nothrow_t)
