/* SPDX-License-Identifier: MIT */
/* Raw stream records of the Python analysis (types 16-31): code objects, mixed stacks, notes. */
#ifndef PCOLLECT_COMMON_RAW_PYTHON_H
#define PCOLLECT_COMMON_RAW_PYTHON_H

/*
 * docs/raw-format-python.md describes every field; keep them in step. The encoders are
 * async-signal-safe (no malloc, no lock, no stdio): they build the payload in a caller buffer
 * with struct raw_enc and hand it to raw_writer_record(). The decoders never read past the
 * payload and return -EINVAL on anything malformed.
 *
 * Code ids are per stream: a RAW_REC_PY_CODE record defines an id before any
 * RAW_REC_PY_STACK of the same stream uses it. An id is never redefined in a stream.
 */

#include <stdint.h>
#include "common/raw-stream.h"

enum raw_python_type {
	RAW_REC_PY_CODE = 16,          /* one code object, once per (stream, code id) */
	RAW_REC_PY_STACK = 17,         /* a stack definition: native ips and Python frames */
	RAW_REC_PY_NOTE = 18,          /* why samples of this stream degraded to native-only */
	RAW_REC_PY_THREAD_NAME = 19,   /* a thread's name in Python (threading.Thread.name) */
	RAW_REC_PY_CALLEE = 20,        /* a C callable a Python frame stands calling (3.14+) */
	RAW_REC_PY_STACK_CALLEES = 21, /* the callees of the frames of the stack just defined */
};
_Static_assert((int)RAW_REC_PY_CODE >= (int)RAW_REC_PYTHON_FIRST &&
		       (int)RAW_REC_PY_STACK_CALLEES < (int)RAW_REC_ALLOC_FIRST,
	       "python records left their reserved range");

/* Limits a reader enforces; the agent never writes more. */
#define RAW_PY_MAX_STRING    1024          /* bytes of a file name or qualified name */
#define RAW_PY_MAX_LINETABLE (64u << 10)   /* bytes of a line table */
#define RAW_PY_MAX_FRAMES    RAW_MAX_DEPTH /* Python frames in one stack */

/* Interpreter version in records: 0x030A0000 for 3.10, as PY_VERSION_HEX without patch. */
#define RAW_PY_VERSION(major, minor) (((uint32_t)(major) << 24) | ((uint32_t)(minor) << 16))

/* RAW_REC_PY_CODE flags. */
enum raw_py_code_flags {
	RAW_PY_CODE_NAME_IS_QUALNAME = 1 << 0, /* name is co_qualname (3.11+), else co_name */
	RAW_PY_CODE_NAME_TRUNCATED = 1 << 1,   /* name or filename was cut at RAW_PY_MAX_STRING */
	RAW_PY_CODE_LINETABLE_TRUNCATED = 1 << 2, /* the line table was cut: later offsets
						     decode to no line */
	RAW_PY_CODE_UNREADABLE = 1 << 3,          /* a string could not be read: it is empty */
};

/*
 * RAW_REC_PY_CODE payload:
 *   id:varint addr:varint version:varint flags:varint firstlineno:svarint code_size:varint
 *   filename:string name:string linetable:bytes
 * linetable holds co_linetable's bytes as the interpreter keeps them: the 3.10 format for
 * 3.10 (co_linetable, not co_lnotab), the location table for 3.11+. code_size is the byte
 * size of the bytecode (instruction offsets are below it).
 */
struct raw_py_code {
	uint64_t id;                /* per stream, from 1 */
	uint64_t addr;              /* the code object's address when first seen (diagnostics) */
	uint32_t version;           /* RAW_PY_VERSION(3, minor) */
	uint32_t flags;             /* enum raw_py_code_flags */
	int32_t firstlineno;        /* co_firstlineno */
	uint32_t code_size;         /* bytes of bytecode */
	struct raw_string filename; /* UTF-8 */
	struct raw_string name;     /* UTF-8: co_qualname (3.11+) or co_name (3.10) */
	struct raw_string linetable;
};

/* A Python frame in a stack. */
struct raw_py_frame {
	uint64_t code_id; /* a RAW_REC_PY_CODE id of the same stream */
	uint32_t offset;  /* bytes into the bytecode of the instruction being run */
	uint32_t flags;   /* enum raw_py_frame_flags */
	uint64_t callee;  /* RAW_PY_FRAME_CALLEE: a RAW_REC_PY_CALLEE id of the same stream
			     (carried by RAW_REC_PY_STACK_CALLEES, not RAW_REC_PY_STACK) */
};

enum raw_py_frame_flags {
	/* The first frame run by its C-level _PyEval_EvalFrameDefault call: the frames from
	   one entry frame inwards (up to the next entry frame) belong to one eval frame. */
	RAW_PY_FRAME_ENTRY = 1 << 0,
	RAW_PY_FRAME_BAD_OFFSET = 1 << 1, /* the instruction pointer was outside the code: offset
					     is 0 and the line is the first line */
	/* (The innermost frame only.) The interpreter's cyclic garbage collector was running
	   (gc.collecting) and this thread held the GIL: the collection this line started. */
	RAW_PY_FRAME_GC = 1 << 2,
	/* (3.14+, in memory only: RAW_REC_PY_STACK_CALLEES sets it) The frame stands at a call
	   of the C callable named by the RAW_REC_PY_CALLEE record callee: pfinalize shows it as
	   a frame between this line and the native frames below it. */
	RAW_PY_FRAME_CALLEE = 1 << 3,
};
/* The function pfinalize shows a RAW_PY_FRAME_GC sample's collection as (docs/python.md). */
#define RAW_PY_GC_NAME "[gc]"

/* RAW_REC_PY_STACK flags: those of RAW_REC_STACK (enum raw_stack_flags), plus: */
enum raw_py_stack_flags {
	RAW_PY_STACK_PY_TRUNCATED = 1 << 8, /* the Python walk stopped at its depth limit or on a
					       frame it could not read; outer frames are missing */
};

/*
 * RAW_REC_PY_STACK payload:
 *   id:varint flags:varint n:varint ip[n]:svarint (delta, as RAW_REC_STACK)
 *   npy:varint { code_id:varint offset:varint flags:varint } * npy
 * ips and Python frames are innermost first. The id space is shared with RAW_REC_STACK:
 * RAW_REC_SAMPLE refers to either.
 */
struct raw_py_stack {
	uint64_t id;
	uint32_t flags;
	uint32_t n;   /* native ips */
	uint32_t npy; /* Python frames */
};

/* RAW_REC_PY_NOTE kinds: why a sample has no Python frames though Python is loaded. */
enum raw_py_note_kind {
	RAW_PY_NOTE_NO_THREAD_STATE = 1, /* the thread has no Python thread state */
	RAW_PY_NOTE_UNKNOWN_VERSION = 2, /* an interpreter of a version pyagent does not know */
	RAW_PY_NOTE_SUBINTERPRETER = 3,  /* sub-interpreters exist: Python frames not taken */
	RAW_PY_NOTE_READ_FAILED = 4,     /* a frame or code object could not be read (torn) */
	RAW_PY_NOTE_NO_READER = 5,       /* process_vm_readv is not permitted here */
	RAW_PY_NOTE_FREE_THREADED = 6,   /* a free-threaded build (3.13t, 3.14t): not walked */
	RAW_PY_NOTE_KIND_MAX = 6,
};

/*
 * RAW_REC_PY_NOTE payload:
 *   time:svarint kind:varint count:varint detail:string
 * count samples of this stream met kind up to time (ns since origin). The agent writes one
 * note per kind when the thread ends (and may write earlier ones); a reader keeps the last
 * count per kind.
 */
struct raw_py_note {
	int64_t time_ns;
	uint32_t kind; /* enum raw_py_note_kind */
	uint64_t count;
	struct raw_string detail; /* e.g. "python 3.9" */
};

/*
 * RAW_REC_PY_THREAD_NAME payload:
 *   tid:varint time:svarint name:string
 * From time (ns since origin) on, the thread tid runs as the threading.Thread named name
 * (at most RAW_PY_MAX_STRING bytes of UTF-8). In the thread's stream or its process's; a
 * later record replaces an earlier one.
 */
struct raw_py_thread_name {
	uint32_t tid;
	int64_t time_ns;
	struct raw_string name;
};
#define RAW_PY_THREAD_NAME_SCRATCH (3 * RAW_VARINT_MAX + RAW_PY_MAX_STRING)

/* RAW_REC_PY_CALLEE kinds: how pfinalize spells the callable, as cProfile does. */
enum raw_py_callee_kind {
	/* a builtin_function_or_method of a module (owner: the module's name, may be empty):
	   "{built-in method owner.name}" */
	RAW_PY_CALLEE_FUNCTION = 1,
	/* a method_descriptor, or a builtin_function_or_method bound to an object (owner: the
	   type's tp_name): "{method 'name' of 'owner' objects}" */
	RAW_PY_CALLEE_METHOD = 2,
	RAW_PY_CALLEE_KIND_MAX = 2,
};
#define RAW_PY_CALLEE_MAX_STRING 256        /* bytes of a callee's name or owner */
#define RAW_PY_CALLEE_MAX_IDS    (1u << 20) /* callee ids of one stream a reader takes */

/*
 * RAW_REC_PY_CALLEE payload:
 *   id:varint kind:varint name:string owner:string
 * Defines callee id (per stream, from 1, never redefined) before any stack of the stream
 * uses it. name is the method's ml_name, owner as enum raw_py_callee_kind says (UTF-8).
 */
struct raw_py_callee {
	uint64_t id;
	uint32_t kind; /* enum raw_py_callee_kind */
	struct raw_string name, owner;
};
#define RAW_PY_CALLEE_SCRATCH (4 * RAW_VARINT_MAX + 2 * RAW_PY_CALLEE_MAX_STRING)

/*
 * RAW_REC_PY_STACK_CALLEES payload, right after the RAW_REC_PY_STACK it completes:
 *   stack_id:varint n:varint { frame:varint callee:varint } * n
 * Frame frame (an index into that stack's Python frames, innermost 0, increasing) stands at
 * a call of callee (a RAW_REC_PY_CALLEE id). A record of its own, so that readers before it
 * read the stack as they did.
 */
#define RAW_PY_STACK_CALLEES_SCRATCH(npy) ((size_t)(2 + 2 * (npy)) * RAW_VARINT_MAX)

/* Scratch bytes that always hold a RAW_REC_PY_STACK payload of n ips and npy frames. */
#define RAW_PY_STACK_SCRATCH(n, npy)                                                               \
	((size_t)(3 + (n)) * RAW_VARINT_MAX + (size_t)(1 + 3 * (npy)) * RAW_VARINT_MAX)
/* Scratch bytes that always hold a RAW_REC_PY_CODE payload. */
#define RAW_PY_CODE_SCRATCH (9 * RAW_VARINT_MAX + 2 * RAW_PY_MAX_STRING + RAW_PY_MAX_LINETABLE)

/*
 * Writers: async-signal-safe. scratch (cap bytes) holds the payload while it is built; use
 * the *_SCRATCH sizes. Return what raw_writer_record() returns, or -E2BIG when scratch is too
 * small or a field exceeds its limit (nothing written).
 */
int raw_py_write_code(struct raw_writer *w, const struct raw_py_code *c, uint8_t *scratch,
		      size_t cap);
int raw_py_write_stack(struct raw_writer *w, uint64_t id, uint32_t flags, const uint64_t *ips,
		       uint32_t n, const struct raw_py_frame *py, uint32_t npy, uint8_t *scratch,
		       size_t cap);
int raw_py_write_note(struct raw_writer *w, const struct raw_py_note *note, uint8_t *scratch,
		      size_t cap);
int raw_py_write_thread_name(struct raw_writer *w, const struct raw_py_thread_name *tn,
			     uint8_t *scratch, size_t cap);
int raw_py_write_callee(struct raw_writer *w, const struct raw_py_callee *c, uint8_t *scratch,
			size_t cap);
/* The callees of py[0..npy) (those with RAW_PY_FRAME_CALLEE); nothing written when none. */
int raw_py_write_stack_callees(struct raw_writer *w, uint64_t stack_id,
			       const struct raw_py_frame *py, uint32_t npy, uint8_t *scratch,
			       size_t cap);

/*
 * Readers: decode one payload (struct raw_record.payload / payload_len). Strings point into
 * the payload. Return 0 or -EINVAL.
 */
int raw_py_read_code(const uint8_t *payload, size_t len, struct raw_py_code *c);
/* ips and py must hold RAW_MAX_DEPTH and RAW_PY_MAX_FRAMES entries. */
int raw_py_read_stack(const uint8_t *payload, size_t len, struct raw_py_stack *s, uint64_t *ips,
		      struct raw_py_frame *py);
int raw_py_read_note(const uint8_t *payload, size_t len, struct raw_py_note *note);
int raw_py_read_thread_name(const uint8_t *payload, size_t len, struct raw_py_thread_name *tn);
int raw_py_read_callee(const uint8_t *payload, size_t len, struct raw_py_callee *c);
/* Apply a RAW_REC_PY_STACK_CALLEES to the frames py[0..npy) of the stack stack_id: their
   callee and RAW_PY_FRAME_CALLEE set. -EINVAL (py unchanged) when it is not that stack's. */
int raw_py_read_stack_callees(const uint8_t *payload, size_t len, uint64_t stack_id,
			      struct raw_py_frame *py, uint32_t npy);

#endif
