/* SPDX-License-Identifier: MIT */
/* pyagent internals shared by its files: the interpreter found and the ELF lookup. */
#ifndef PCOLLECT_COLLECTOR_PYTHON_PRIVATE_H
#define PCOLLECT_COLLECTOR_PYTHON_PRIVATE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "collector/agent/python/python-layout.h"
#include "collector/agent/python/python.h"

/* The interpreter pyagent walks; written by pyagent_on_module() before sampling starts. */
struct pyagent_runtime {
	int state;            /* enum pyagent_module of the interpreter found, 0 = none */
	int minor;            /* 3.minor, -1 unknown */
	uint32_t version;     /* RAW_PY_VERSION(3, minor) */
	int note;             /* PYAGENT_UNSUPPORTED: the enum raw_py_note_kind samples get */
	const char *why;      /* PYAGENT_UNSUPPORTED: why, for the agent's log */
	bool later;           /* a release newer than the built-in tables (python-debug.c) */
	struct pylayout L;    /* offsets (3.13+: refreshed from _Py_DebugOffsets) */
	uintptr_t runtime;    /* &_PyRuntime */
	uintptr_t code_type;  /* &PyCode_Type */
	uintptr_t frame_type; /* &PyFrame_Type (3.10 frames are objects) */
	size_t rt_lo, rt_len; /* the span of _PyRuntime one sample copies */
	size_t ts_len;        /* bytes of a PyThreadState one sample copies */
	char path[256];       /* the module that holds it (diagnostics) */
	/* 3.12+: the code of the entry frames a _PyEval_EvalFrameDefault call pushes (the
	   interpreter's trampoline), learned from the first one seen; 0 until then */
	_Atomic uintptr_t shim_code;
};
extern struct pyagent_runtime pyagent_rt;

struct pyelf_sym {
	const char *name; /* in */
	bool found;       /* out */
	uint64_t value;   /* out: st_value (add the load bias) */
	uint64_t size;    /* out: st_size */
	bool has_data;    /* out: data holds the first bytes of its initial value */
	uint8_t data[8];  /* out: from the file's section (.rodata, .data) */
	void *copy;       /* in: where to copy more of its initial value (or NULL) */
	size_t copy_len;  /* in: bytes wanted there; out: bytes copied (0: none) */
};

/*
 * Look syms up in .dynsym and .symtab of the ELF file at path (defined symbols only). When
 * rodata_minor is not NULL, also look for a "python3.N" string in read-only data and
 * store N there (-1 if none). Returns 0, -ENOEXEC for a file that is not ELF64, or -errno.
 */
int pyelf_scan(const char *path, struct pyelf_sym *syms, size_t nsyms, int *rodata_minor);

/*
 * Copy the first len bytes of the section named name of the ELF file at path into out:
 * the bytes copied, -ENOENT when it has no such section, -ENOEXEC (not ELF64) or -errno.
 */
int pyelf_section(const char *path, const char *name, void *out, size_t len);

/* asyncio's debug offsets (python-asyncio.c), from the first module that has them. */
struct pyasync_offsets {
	int ready; /* set last (release): the offsets below are valid */
	int32_t task_name, task_coro, ts_running_task;
};
extern struct pyasync_offsets pyasync;

/*
 * In the handler, with the sampled thread's tstate: its running task (one guarded read),
 * described the first time it is seen (RAW_REC_PY_CODE "[task NAME]" written to w), into
 * t->task.frame and t->task.id for the walk; t->task.frame 0 when none is to be added.
 */
void pyasync_sample(struct pyagent_thread *t, struct raw_writer *w, uintptr_t tstate);
/* Bytes past pyagent_rt.ts_len to copy with a thread state, so that pyasync_sample()'s read
   of its running task comes from that copy (no system call of its own): 0 without asyncio. */
size_t pyasync_ts_extra(void);

/* Results of pydebug_apply(). */
enum pydebug_result {
	PYDEBUG_OK = 0,
	PYDEBUG_ABSENT = -1,        /* no _Py_DebugOffsets block where it should be */
	PYDEBUG_INVALID = -2,       /* a block of another version, or offsets that make no sense */
	PYDEBUG_FREE_THREADED = -3, /* a free-threaded build (3.13t, 3.14t) */
};

/*
 * Read the _Py_DebugOffsets block at runtime (&_PyRuntime) of the interpreter hexversion
 * (PY_VERSION_HEX) and take every offset it gives into L (L->minor chooses the block's
 * layout). Returns enum pydebug_result; L is changed only on PYDEBUG_OK.
 */
int pydebug_apply(struct pylayout *L, uintptr_t runtime, uint32_t hexversion);

/* Bytes of _PyRuntime's start pydebug_apply() may read (at most). */
#define PYDEBUG_MAX_BYTES 2048

/* The same from a copy of _PyRuntime's first len bytes (its initial value in the file). */
int pydebug_apply_copy(struct pylayout *L, const void *block, size_t len, uint32_t hexversion);

/* The thread state (python-tstate.c): the interrupted thread's PyThreadState. */

/*
 * The address of the calling thread's PyThreadState, its first pyagent_rt.ts_len bytes
 * copied to ts, or 0 with *why set (an enum raw_py_note_kind, 0 when the thread simply runs
 * no Python). Async-signal-safe.
 */
uintptr_t pytstate_find(struct pyagent_thread *t, struct pymem *m, uint8_t *ts, int *why);

/* The calling thread's attached state by the interpreter's accessor (python-key.c), 0 when
   none or when no accessor was given. Not async-signal-safe: for own walks only. */
uintptr_t pykey_tstate(void);

/* The code-identity table (python-codes.c): the id of the code object at addr. */

/*
 * The id of the code object at addr, copied in code (pyagent_rt.L.co_size bytes); name
 * holds the first bytes of its name string for 3.10/3.11 (NULL if they could not be read).
 * Writes a RAW_REC_PY_CODE the first time. 0 when the object cannot be described.
 */
uint64_t pycodes_lookup(struct pyagent_thread *t, struct raw_writer *w, uintptr_t addr,
			const uint8_t *code, const uint8_t *name, int pid);
/* Bytes of a name string 3.10/3.11 code identity reads (0 for 3.12+, where co_version is). */
size_t pycodes_name_bytes(void);
/* Address of the name string pycodes_lookup() wants for the code copied in code. */
uintptr_t pycodes_name_addr(const uint8_t *code);
/* The name string address of the code object last described at addr, or 0. */
uintptr_t pycodes_cached_name(const struct pyagent_thread *t, uintptr_t addr);

/*
 * Copy the compact str object at addr into out as UTF-8 (at most cap bytes, no NUL): 0 with
 * *len set (*trunc when cut), or -1.
 */
int pycodes_read_str(int pid, uintptr_t addr, char *out, size_t cap, uint32_t *len, bool *trunc);

/* The C callable a frame stands calling (python-callee.c, 3.14+). */

/*
 * After the walk (t->pending[0..npend) with their stack pointers): the copies that tell which
 * frames stand at a call of what, as requests into req (3 * PYCALLEE_FRAMES at most) for the
 * batch that copies the code objects. Returns how many.
 */
unsigned pycallee_plan(struct pyagent_thread *t, int npend, struct pyread_req *req);
/* After that batch (req as planned, ok set): each such frame's callee id in
   t->pending[].callee, RAW_REC_PY_CALLEE records written to w for those not described. */
void pycallee_finish(struct pyagent_thread *t, struct raw_writer *w, const struct pyread_req *req);

/* Forget the GIL's address (python-gil.c), with the interpreter. */
void pyagent_gil_reset(void);

/* Guarded reads (python-read.c). */

/* Guarded copy with the pid already known: 0 or -1. */
int pyread(int pid, void *dst, uintptr_t src, size_t len);

#define PYREAD_BATCH 64 /* iovecs a call (the kernel takes up to 1024) */

/* Per-sample copies of memory runs (struct pymem, python.h). */
void pymem_reset(struct pymem *m, int pid);

/* Copy every request, PYREAD_BATCH a call (counted in m->calls); a request that fails costs
   one more call at most. Returns how many are ok. */
size_t pymem_batch(struct pymem *m, struct pyread_req *req, size_t n);

/*
 * Copy len bytes at addr to dst: from a run copied earlier in this sample, or by copying a
 * new run: [addr, addr + len) and up to extra bytes more below it (dir < 0) or above it
 * (dir > 0), as far as they are readable, in one call. Returns 0, or -1 when [addr,
 * addr + len) is not readable.
 */
int pymem_read(struct pymem *m, void *dst, uintptr_t addr, size_t len, size_t extra, int dir);

#endif
