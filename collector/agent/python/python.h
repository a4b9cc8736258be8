/* SPDX-License-Identifier: MIT */
/* pyagent: Python frames for the agent's samples, taken in its signal handler. */
#ifndef PCOLLECT_COLLECTOR_PYTHON_H
#define PCOLLECT_COLLECTOR_PYTHON_H

/*
 * Use (docs/python.md has the whole story):
 *   outside the handler, for every module mapped (at start and after each dlopen):
 *       pyagent_on_module(path, load_bias);
 *   per thread, before its timer is armed: allocate a struct pyagent_thread (~250 KB: it
 *       holds its buffers; calloc() it, so that only the pages used cost memory) and
 *       pyagent_thread_init() it;
 *   in the handler, after the native unwind, if pyagent_active():
 *       n = pyagent_capture(t, w, py, PYAGENT_MAX_FRAMES);
 *       n > 0: write the stack with raw_py_write_stack() (RAW_REC_PY_STACK) instead of
 *              RAW_REC_STACK, deduplicated on ips and py[0..n);
 *       n <= 0: write the native stack as usual (n < 0 is -enum raw_py_note_kind);
 *   when the thread ends (outside the handler): pyagent_thread_finish(t, w, time).
 * The capture writes RAW_REC_PY_CODE records to w itself, before returning the frames that
 * use them, so call it before the stack record is written.
 */

#include <stdbool.h>
#include <stdint.h>
#include "common/raw-python.h"
#include "common/raw-stream.h"

#define PYAGENT_MAX_FRAMES 256         /* Python frames walked per sample */
#define PYAGENT_CODE_SLOTS 1024        /* code objects remembered per thread (a power of two) */
#define PYAGENT_CODE_WAYS  4           /* slots a code may take: its set (python-codes.c) */
#define PYAGENT_MEMO       64          /* distinct code objects read in one batch per sample */
#define PYAGENT_CODE_BYTES 256         /* bytes of a code object copied (its fixed fields) */
#define PYAGENT_NAME_BYTES 128         /* bytes of a name string copied (3.10/3.11 identity) */
#define PYAGENT_WINDOW     (16u << 10) /* most bytes of the frame stack copied in one call */

/* Return values of pyagent_on_module(). */
enum pyagent_module {
	PYAGENT_NOT_PYTHON = 0, /* no interpreter in this module */
	PYAGENT_FOUND = 1,      /* an interpreter pyagent can walk: pyagent_active() is true */
	PYAGENT_UNSUPPORTED = 2 /* an interpreter of another version: samples get a note */
};

/*
 * Look for an interpreter (_PyRuntime) in the ELF file at path, mapped with load bias bias.
 * Not async-signal-safe (opens and maps the file); call it outside the handler for each
 * module, including those dlopen()ed later. The first interpreter found wins; later ones
 * are ignored (returns PYAGENT_NOT_PYTHON). Returns enum pyagent_module, or a negative errno
 * when the file cannot be read.
 */
int pyagent_on_module(const char *path, uintptr_t bias);

/* _PyRuntime, Py_Version, PyCode_Type, PyFrame_Type: the interpreter's exported symbols. */
#define PYAGENT_DYNSYMS 4
extern const char *const pyagent_dynsym_names[PYAGENT_DYNSYMS];

/* Those of a module's dynamic symbols (pyagent_dynsym_names' order), file-relative values. */
struct pyagent_dynsyms {
	uint64_t value[PYAGENT_DYNSYMS];
	bool found[PYAGENT_DYNSYMS];
};

/*
 * pyagent_on_module() with the module's dynamic symbols already looked up in its mapped
 * image (dyn, or NULL): when they give _PyRuntime, PyCode_Type and Py_Version of a 3.11 or
 * 3.12 interpreter, its file is not read (at start, /usr/bin/python3.11's 6.8 MB); else the
 * file is, as pyagent_on_module() reads it.
 */
int pyagent_on_image(const char *path, uintptr_t bias, const struct pyagent_dynsyms *dyn);

/* An interpreter was found (of any version: unknown versions make notes). */
bool pyagent_active(void);

/* Version of the interpreter found as RAW_PY_VERSION(3, minor), 0 if none. */
uint32_t pyagent_version(void);

/* Why the interpreter found is not walked (PYAGENT_UNSUPPORTED), for the log; else NULL. */
const char *pyagent_unsupported_why(void);

/* Forget the interpreter (tests; the agent after the module that held it is unloaded). */
void pyagent_reset(void);

/*
 * Whether addr is the condition or mutex of the interpreter's GIL (python-gil.c): a thread
 * blocked on it waits for the GIL. Cheap (no system call); false until an interpreter of a
 * known layout is found and initialised.
 */
bool pyagent_is_gil(uintptr_t addr);

struct pyagent_code_slot {
	uintptr_t addr; /* code object address, 0 = free */
	uint64_t sig;   /* hash of what identifies the object at addr (python-codes.c) */
	uint64_t id;    /* RAW_REC_PY_CODE id written for it */
	uintptr_t name; /* its name string's address (3.10/3.11: read with it next time) */
	uint32_t seq;   /* the chunk its record went into (-ring-buffer: written again in each) */
	uint32_t used;  /* the thread's code_clock when last used: the set's oldest is replaced */
};

/* Copies of memory runs made in one sample (python-read.c). */
#define PYMEM_RUNS   8
#define PYMEM_PIECES 16 /* iovecs of one run: its pages */
#define PYMEM_BYTES  (40u << 10)
struct pymem_run {
	uintptr_t lo, hi;    /* [lo, hi) copied */
	const uint8_t *data; /* the copy of lo */
};
struct pymem {
	int pid;
	bool own; /* pymem_read() copies in place, what was asked only (pyagent_capture_pid()) */
	unsigned nruns;
	size_t used;    /* bytes of buf taken */
	unsigned calls; /* system calls made (tests, benchmarks) */
	struct pymem_run run[PYMEM_RUNS];
	uint8_t buf[PYMEM_BYTES];
};

/* One copy of a batch: len bytes at addr into dst; ok is set by the read (python-read.c). */
struct pyread_req {
	uintptr_t addr;
	size_t len;
	void *dst;
	bool ok;
};

/* What one frame of a sample gives before its code object is read (python-walk.c). */
struct pyagent_pending {
	uintptr_t code;  /* address of the code object */
	uintptr_t instr; /* instruction pointer (3.11+) or f_lasti (3.10) */
	uintptr_t frame; /* the frame's address */
	uintptr_t sp;    /* 3.14+: its stackpointer, 0 when not taken */
	uint64_t callee; /* the RAW_REC_PY_CALLEE id of the C callable it calls, 0 none */
	uint32_t flags;  /* enum raw_py_frame_flags known from the frame */
	uint32_t slot;   /* index of its code in the sample's batch */
};

/* The C callable a frame stands calling (3.14+, python-callee.c). */
#define PYCALLEE_FRAMES 8  /* frames a sample looks at: the innermost and those calling C */
#define PYCALLEE_WORDS  16 /* value stack words copied below a frame's stackpointer */
#define PYCALLEE_SLOTS  64 /* callables remembered per thread (a power of two) */
#define PYCALLEE_TYPES  8  /* type objects whose kind is remembered per thread */
#define PYCALLEE_OBJ    6  /* words of a callable object copied */
struct pyagent_callee_slot {
	uintptr_t ml;    /* its PyMethodDef, 0 = free */
	uintptr_t owner; /* m_module, or the descriptor's d_type, or 0 (a bound method) */
	uint32_t kind;   /* enum raw_py_callee_kind */
	uint64_t id;     /* RAW_REC_PY_CALLEE id written for it */
};
struct pyagent_callees {
	uint64_t next_id;
	struct pyagent_callee_slot slots[PYCALLEE_SLOTS];
	uintptr_t type[PYCALLEE_TYPES]; /* type objects seen, 0 = free */
	uint8_t type_kind[PYCALLEE_TYPES];
	/* the sample being taken */
	unsigned n;
	uint32_t at[PYCALLEE_FRAMES]; /* index of the pending frame */
	uint16_t instr[PYCALLEE_FRAMES];
	uint32_t words[PYCALLEE_FRAMES]; /* of stack[i] copied, ending at the stackpointer */
	uint64_t stack[PYCALLEE_FRAMES][PYCALLEE_WORDS];
	uint64_t obj[PYCALLEE_FRAMES][PYCALLEE_OBJ];
	/* the callable the frame at each rank had last sample, copied with the stack on the
	   guess that it is the same (a frame sampled in one call again): 0 none */
	uintptr_t guess[PYCALLEE_FRAMES];
	uint8_t guess_req[PYCALLEE_FRAMES];             /* its request's index in req, 0 none */
	struct pyread_req req[3 * PYCALLEE_FRAMES + 1]; /* + 1: the collector's flag, last */
};

/* asyncio's running task (3.14+, python-asyncio.c): tasks described, per thread. */
#define PYASYNC_SLOTS 16 /* tasks remembered (a power of two) */
struct pyasync_slot {
	uintptr_t task;  /* the Task object, 0 = free */
	uintptr_t frame; /* its coroutine's frame (the "[task NAME]" frame goes outward of it) */
	uint64_t id;     /* RAW_REC_PY_CODE id of its "[task NAME]" code */
	uint32_t seq;    /* the chunk its record went into (-ring-buffer) */
	bool skip;       /* no frame added: pcollect's task driver runs it (its own frame names
			    the task), or its coroutine's frame runs no code object */
};
struct pyasync_thread {
	uintptr_t frame; /* this sample: the running task's coroutine frame, 0 none */
	uint64_t id;     /* this sample: its "[task NAME]" code id */
	struct pyasync_slot slots[PYASYNC_SLOTS];
};

/*
 * Look for Py_AsyncioModuleDebugOffsets (section .AsyncioDebug) in the module at path: the
 * _asyncio extension module (3.14), or the interpreter (interpreter true: 3.15 builds it in).
 * Outside the handler. 1 found, 0 not looked at (another module, or found before), or a
 * negative errno (-ENOENT: no such section).
 */
int pyagent_on_asyncio(const char *path, bool interpreter);

/* Per-thread state; owned by the agent, only used by that thread. */
struct pyagent_thread {
	uintptr_t bottom; /* the outermost Python frame of the last walk that reached it, 0 */
	uintptr_t tstate; /* 3.15+: this thread's PyThreadState found last time, 0 none */
	uint32_t window;  /* bytes of frame stack the last walk used below its first frame */
	uint32_t calls;   /* system calls the last capture made (tests, benchmarks) */
	uint64_t next_id; /* next code id of this stream */
	uint64_t notes[RAW_PY_NOTE_KIND_MAX + 1]; /* samples degraded, per enum raw_py_note_kind */
	uint64_t codes_written;                   /* RAW_REC_PY_CODE records written */
	uint64_t codes_failed;                    /* code records that could not be written */
	uint32_t code_clock;                      /* code lookups that hit or wrote (slots' used) */
	struct pyagent_code_slot slots[PYAGENT_CODE_SLOTS];
	char filename[RAW_PY_MAX_STRING];
	char name[RAW_PY_MAX_STRING];
	uint8_t linetable[RAW_PY_MAX_LINETABLE];
	uint8_t scratch[RAW_PY_CODE_SCRATCH];
	/* the sample being taken */
	struct pymem mem;
	uint8_t runtime[4096]; /* the span of _PyRuntime read */
	struct pyagent_pending pending[PYAGENT_MAX_FRAMES];
	/* code objects, their names, then the callees' copies and the collector's flag */
	struct pyread_req req[2 * PYAGENT_MEMO + 3 * PYCALLEE_FRAMES + 1];
	struct pyagent_callees callees;
	struct pyasync_thread task;
	uintptr_t code_addr[PYAGENT_MEMO];
	uintptr_t name_at[PYAGENT_MEMO]; /* name string read with each code object, 0 none */
	uint8_t code[PYAGENT_MEMO][PYAGENT_CODE_BYTES];
	uint8_t names[PYAGENT_MEMO][PYAGENT_NAME_BYTES];
};

/* Clear t for a new stream (also in a fork child: code ids restart with the new stream). */
void pyagent_thread_init(struct pyagent_thread *t);

/*
 * Walk the calling thread's Python frames. Async-signal-safe and fault-proof: every read of
 * the interpreter's memory is a guarded copy, the walk stops after max frames. Writes a
 * RAW_REC_PY_CODE record to w for each code object this stream has not described yet.
 * Fills out[0..n) innermost first and returns n (0: a thread state with no frames running),
 * or -enum raw_py_note_kind (also counted in t->notes) when this sample has no Python frames
 * for that reason. A walk cut short returns the frames read so far, innermost first, and sets
 * *truncated (may be NULL).
 */
int pyagent_capture(struct pyagent_thread *t, struct raw_writer *w, struct raw_py_frame *out,
		    int max, bool *truncated);
/*
 * The same where the caller knows the process's id (getpid() is a system call each time).
 * own: the calling thread walks its own frames from inside a call of its own (an allocation),
 * so they cannot change meanwhile, as for pyagent_key(): the runtime, its thread state and its
 * frames are read in place; what they point to (code objects, names, tasks, other threads'
 * states) is still read by guarded copies.
 */
int pyagent_capture_pid(struct pyagent_thread *t, struct raw_writer *w, struct raw_py_frame *out,
			int max, bool *truncated, int pid, bool own);

/*
 * A key of the calling thread's Python frames, cheaply (the frames' guarded reads of a walk,
 * no code object read, nothing written): a hash of every frame's code object address and
 * instruction pointer (f_lasti in 3.10), so two calls made from the same Python lines get
 * the same key. 0, or -1 when the thread has no Python frame or they cannot be read.
 * Outside the handler or in it; for an MPI call site's key (collector/agent/agent-mpi.c).
 */
int pyagent_stack_key(struct pyagent_thread *t, uint64_t *key);

/*
 * Frames of code objects the program names itself (code[i], a code object's address, at byte
 * offset[i] of its bytecode): an asyncio task's suspended coroutines, which no thread's walk
 * reaches (collector/agent/agent-task.c). Writes the RAW_REC_PY_CODE records they need to w;
 * fills out[0..k) in the same order, leaving out the addresses that hold no code object, and
 * returns k, or -1 when no interpreter is walked. Outside the handler, our signal blocked.
 */
int pyagent_code_frames(struct pyagent_thread *t, struct raw_writer *w, const uintptr_t *code,
			const uint32_t *offset, int n, struct raw_py_frame *out);

/* Write one RAW_REC_PY_NOTE per kind met in this stream. Outside the handler. */
int pyagent_thread_finish(struct pyagent_thread *t, struct raw_writer *w, int64_t time_ns);

/*
 * The calling thread's Python frames (at most max, innermost first) and whether the collector
 * runs, as one hash, read in place, without guarded reads: only for a thread inside a call of
 * its own (an allocation), whose frames cannot change meanwhile. 0 when it runs no Python (or
 * the interpreter is not one pyagent walks). *whole: the hash holds every frame, not only the
 * max innermost. A few ns per frame: memory-consumption's call-site key.
 */
uint64_t pyagent_key(int max, bool *whole);
/* Where the interpreter keeps no PyGILState key (3.15+): its accessor of the calling thread's
   attached state (PyThreadState_GetUnchecked), for pyagent_key(). */
void pyagent_key_tstate_fn(uintptr_t (*fn)(void));

/*
 * A thread's name in Python (python-thread.c): the _name of its threading.Thread, read from
 * memory (no Python code runs, no GIL is taken). Outside the handler; the callers of these
 * functions serialize them (they share a cache).
 */
struct pyagent_tname {
	uintptr_t frame;   /* the outermost frame looked at last */
	uintptr_t self;    /* the Thread object it runs, 0 none (not threading's _bootstrap) */
	uintptr_t type;    /* its type, to tell it from another object at its address later */
	uintptr_t globals; /* the frame's globals: threading's module dict */
};

/*
 * The Thread object whose Thread._bootstrap runs in frame, into st (frame, self, type,
 * globals): 0, or -1 when the frame runs none. Async-signal-safe (guarded reads only): the
 * handler calls it when a thread's outermost frame changes, so that a thread too short for
 * the control thread's look still has its Thread known at its end, its frames gone.
 */
int pyagent_thread_self(uintptr_t frame, struct pyagent_tname *st);

/*
 * The name of the threading.Thread whose Thread._bootstrap runs in frame, a thread's
 * outermost Python frame (struct pyagent_thread.bottom), into out (NUL-terminated, cut at
 * cap): 0, or -1 when the frame runs no Thread or it cannot be read. st (zeroed at first)
 * remembers the object: frame 0 reads the name of the Thread found before (at the thread's
 * end). A name the program changed since is read as it is now.
 */
int pyagent_thread_name(struct pyagent_tname *st, uintptr_t frame, char *out, size_t cap);
/* The main thread's (threading's _main_thread), once pyagent_thread_name() found a Thread. */
int pyagent_main_thread_name(char *out, size_t cap);
/* Forget what they learned (the interpreter is forgotten, or a fork child starts over). */
void pyagent_thread_names_reset(void);

/*
 * Guarded copy of len bytes at src into dst: 0, or -1 when any byte is not readable (no
 * fault, no signal). Async-signal-safe. Exposed for tests and for other agent code that must
 * read memory it does not trust.
 */
int pyagent_read(void *dst, uintptr_t src, size_t len);

#endif
