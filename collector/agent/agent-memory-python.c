/* SPDX-License-Identifier: MIT */
/* memory-consumption for Python: hooks on the PyMem and PyObject domains, the frames' key. */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "collector/agent/agent-memory-private.h"

/*
 * pymalloc serves objects of 512 bytes or less from arenas it maps itself (256 KiB or 1 MiB),
 * so malloc alone would show a few arenas, never the objects. The interpreter lets a tool
 * wrap its allocators (PyMem_SetAllocator): once the interpreter is initialized, the first
 * allocation made by a thread holding the GIL installs our hooks on the PyMem and PyObject
 * domains, each delegating to the allocator it replaces (pymalloc, or what PYTHONMALLOC or
 * tracemalloc put there): the program keeps its allocator, we see each object at the size
 * asked for. What the delegate does meanwhile (arenas it maps, malloc it calls) runs under
 * our recursion guard, so it is not counted twice. The raw domain is malloc itself, which we
 * interpose already.
 *
 * Before the hooks (the interpreter's start-up), objects show up as the arenas pymalloc maps
 * for them (anonymous mmap, under the start-up's stacks). docs/python.md has the cost.
 */

/* CPython's own declarations (Include/cpython/pymem.h), stable since 3.5. */
typedef struct {
	void *ctx;
	void *(*malloc)(void *ctx, size_t size);
	void *(*calloc)(void *ctx, size_t nelem, size_t elsize);
	void *(*realloc)(void *ctx, void *ptr, size_t new_size);
	void (*free)(void *ctx, void *ptr);
} py_allocator;
enum { PY_DOMAIN_RAW, PY_DOMAIN_MEM, PY_DOMAIN_OBJ };

static struct {
	int (*is_initialized)(void);
	int (*gil_check)(void);
	void (*get)(int domain, py_allocator *a);
	void (*set)(int domain, py_allocator *a);
	py_allocator prev_mem, prev_obj; /* what our hooks delegate to */
	py_allocator hook_mem, hook_obj;
} py;

static void *hook_malloc(void *ctx, size_t n)
{
	const py_allocator *prev = ctx;
	struct mem_tls *m = &mem_tls;
	void *p;

	if (m->busy || !atomic_load_explicit(&mem.alloc_on, memory_order_relaxed) ||
	    (mem.sampled && (m->countdown -= (int64_t)n) > 0))
		return prev->malloc(prev->ctx, n);
	m->busy++;
	p = prev->malloc(prev->ctx, n);
	if (p)
		mem_note_alloc(m, (uintptr_t)p, n, MEM_CALL());
	m->busy--;
	return p;
}

static void *hook_calloc(void *ctx, size_t nelem, size_t elsize)
{
	const py_allocator *prev = ctx;
	struct mem_tls *m = &mem_tls;
	size_t n = nelem * elsize;
	void *p;

	if (m->busy || !atomic_load_explicit(&mem.alloc_on, memory_order_relaxed) ||
	    (mem.sampled && (m->countdown -= (int64_t)n) > 0))
		return prev->calloc(prev->ctx, nelem, elsize);
	m->busy++;
	p = prev->calloc(prev->ctx, nelem, elsize);
	if (p)
		mem_note_alloc(m, (uintptr_t)p, n, MEM_CALL());
	m->busy--;
	return p;
}

static void *hook_realloc(void *ctx, void *old, size_t n)
{
	const py_allocator *prev = ctx;
	struct mem_tls *m = &mem_tls;
	struct mem_block blk;
	bool had;
	void *p;

	if (m->busy || !atomic_load_explicit(&mem.free_on, memory_order_relaxed))
		return prev->realloc(prev->ctx, old, n);
	m->busy++;
	/* out of the table before the delegate may hand the address to another thread */
	had = old && mem_record_take(m, (uintptr_t)old, &blk);
	p = prev->realloc(prev->ctx, old, n);
	if (had && !p && n)
		mem_record_untake(m, &blk); /* failed: the old block stays */
	else if (had)
		mem_record_free_block(m, &blk, false);
	if (p && atomic_load_explicit(&mem.alloc_on, memory_order_relaxed) &&
	    (!mem.sampled || (m->countdown -= (int64_t)n) <= 0))
		mem_note_alloc(m, (uintptr_t)p, n, MEM_CALL());
	m->busy--;
	return p;
}

static void hook_free(void *ctx, void *p)
{
	const py_allocator *prev = ctx;
	struct mem_tls *m = &mem_tls;

	if (p && !m->busy && atomic_load_explicit(&mem.free_on, memory_order_relaxed)) {
		m->busy++;
		mem_note_free(m, (uintptr_t)p);
		m->busy--;
	}
	prev->free(prev->ctx, p);
}

/* PyThreadState_GetUnchecked() (3.13+; _PyThreadState_UncheckedGet before). */
static void *(*py_tstate_unchecked)(void);

static uintptr_t tstate_unchecked(void)
{
	return (uintptr_t)py_tstate_unchecked();
}

static void *sym(void *handle, const char *name)
{
	void *p = dlsym(RTLD_DEFAULT, name);

	return p || !handle ? p : dlsym(handle, name);
}

static char found_path[PATH_MAX];
static _Atomic int found;

void mem_python_found(const char *path)
{
	if (!agent.cfg.memory || mem.hooks || atomic_load(&found))
		return;
	snprintf(found_path, sizeof(found_path), "%s", path);
	atomic_store(&found, 1);
}

void mem_python_resolve(void)
{
	void *handle = NULL;
	const char *path = found_path;
	int expected = 1;

	/* Out of agent.lock (the loader's lock may be taken here), once. */
	if (!atomic_compare_exchange_strong(&found, &expected, 2))
		return;
	mem.slow = 1; /* the Python frames go into every key */
	py.set = (void (*)(int, py_allocator *))sym(NULL, "PyMem_SetAllocator");
	if (!py.set && agent_real.dlopen) {
		/* an embedded interpreter loaded RTLD_LOCAL: its own handle */
		handle = agent_real.dlopen(path, RTLD_LAZY | RTLD_NOLOAD);
	}
	py.is_initialized = (int (*)(void))sym(handle, "Py_IsInitialized");
	py.gil_check = (int (*)(void))sym(handle, "PyGILState_Check");
	py.get = (void (*)(int, py_allocator *))sym(handle, "PyMem_GetAllocator");
	py.set = (void (*)(int, py_allocator *))sym(handle, "PyMem_SetAllocator");
	py_tstate_unchecked = (void *(*)(void))sym(handle, "PyThreadState_GetUnchecked");
	if (!py_tstate_unchecked)
		py_tstate_unchecked = (void *(*)(void))sym(handle, "_PyThreadState_UncheckedGet");
	if (py_tstate_unchecked)
		pyagent_key_tstate_fn(tstate_unchecked);
	if (handle && agent_real.dlclose)
		agent_real.dlclose(handle);
	if (!py.is_initialized || !py.gil_check || !py.get || !py.set) {
		agent_log(
			"memory: python in '%s' has no PyMem_SetAllocator: its small objects show "
			"as pymalloc's arenas",
			path);
		return;
	}
	atomic_store(&mem.py_pending, 1);
}

void mem_python_try_hook(void)
{
	int expected = 1;

	if (!atomic_compare_exchange_strong(&mem.py_pending, &expected, 2))
		return;
	if (!py.is_initialized() || !py.gil_check()) {
		atomic_store(&mem.py_pending, 1);
		return;
	}
	py.get(PY_DOMAIN_MEM, &py.prev_mem);
	py.get(PY_DOMAIN_OBJ, &py.prev_obj);
	py.hook_mem =
		(py_allocator){ &py.prev_mem, hook_malloc, hook_calloc, hook_realloc, hook_free };
	py.hook_obj =
		(py_allocator){ &py.prev_obj, hook_malloc, hook_calloc, hook_realloc, hook_free };
	py.set(PY_DOMAIN_MEM, &py.hook_mem);
	py.set(PY_DOMAIN_OBJ, &py.hook_obj);
	atomic_store(&mem.py_pending, 0);
	agent_log("memory: python's PyMem and PyObject allocators hooked");
}

uint64_t mem_python_key(bool *whole)
{
	return pyagent_key(MEM_MAX_PY, whole);
}
