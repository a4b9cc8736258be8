/* SPDX-License-Identifier: MIT */
/* pyfinal: Python code objects, line tables and mixed stacks for the finalizer. */
#ifndef PCOLLECT_FINALIZER_PYTHON_H
#define PCOLLECT_FINALIZER_PYTHON_H

/*
 * Use (docs/python.md): per stream, a struct pycode_table; feed it every RAW_REC_PY_CODE
 * payload (pycode_table_add_record); for each RAW_REC_PY_STACK (raw_py_read_stack()) name
 * the Python frames with pycode_table_get() + pycode_line(), and order them among the native
 * frames with pymerge_stack().
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "common/raw-python.h"

/* ---- line tables --------------------------------------------------------------------- */

/*
 * The source line of the instruction at byte offset offset of a code object of version
 * (RAW_PY_VERSION), whose co_linetable bytes are table[0..len) and co_firstlineno firstlineno:
 * what PyCode_Addr2Line() answers, or -1 when the instruction has no line (or the offset is
 * past the table). 3.10 uses its (bytecode delta, line delta) pairs; 3.11+ the location table.
 * Returns -2 for a version it does not know.
 */
int pyline_find(uint32_t version, const uint8_t *table, size_t len, int firstlineno,
		uint32_t offset);

/* One address range of a line table: bytes [start, end) run line (-1: none). */
struct pyline_range {
	uint32_t start, end;
	int line;
};

/*
 * Decode the whole table into out[0..cap), in order, empty ranges left out (as co_lines()
 * yields them). Returns the number of ranges (which may exceed cap: only cap are stored), -1
 * for a table that ends inside an entry, -2 for an unknown version.
 */
int pyline_ranges(uint32_t version, const uint8_t *table, size_t len, int firstlineno,
		  struct pyline_range *out, size_t cap);

/* ---- code objects of one stream --------------------------------------------------------- */

struct pycode {
	uint64_t id;
	uint32_t version;
	uint32_t flags; /* enum raw_py_code_flags */
	int firstlineno;
	uint32_t code_size; /* bytes */
	char *filename;     /* NUL-terminated UTF-8, owned by the table */
	char *name;         /* qualified name (3.11+) or name (3.10) */
	uint8_t *linetable;
	size_t linetable_len;
};

struct pycode_table {
	struct pycode **by_id; /* index id; NULL where no record came */
	size_t cap;
	size_t count;
	uint64_t rejected; /* records that did not decode or redefined an id */
};

void pycode_table_init(struct pycode_table *t);
void pycode_table_release(struct pycode_table *t);
/* Decode and keep one RAW_REC_PY_CODE payload. 0, -EINVAL (counted in rejected), -ENOMEM. */
int pycode_table_add_record(struct pycode_table *t, const uint8_t *payload, size_t len);
/* The code with this id, or NULL (never described: show "[python]" and no line). */
const struct pycode *pycode_table_get(const struct pycode_table *t, uint64_t id);
/* The line of a frame of code c at byte offset offset: -1 when unknown. */
int pycode_line(const struct pycode *c, uint32_t offset);

/* ---- the Python records of one stream ------------------------------------------------ */

/*
 * Everything a stream's Python records say: its code objects, the Python frames of its mixed
 * stacks (back to back; a stack refers to them by offset and count), and its notes.
 */
struct pystream {
	struct pycode_table codes;
	struct raw_py_frame *frames;
	size_t nframes, frames_cap;
	uint64_t notes[RAW_PY_NOTE_KIND_MAX + 1];    /* last count of each kind */
	char *note_detail[RAW_PY_NOTE_KIND_MAX + 1]; /* its detail text, NULL if none */
	uint32_t version;  /* RAW_PY_VERSION of the code records, 0 if none */
	uint64_t rejected; /* Python records that did not decode */
	/* RAW_REC_PY_CALLEE: callee id - 1 -> its name as cProfile spells it (NULL: none) */
	char **callees;
	uint32_t *callee_frame; /* and its frame, once the frames are made (UINT32_MAX: none) */
	size_t ncallees, callees_cap, callee_frame_cap;
	/* the last RAW_REC_PY_STACK taken: what a RAW_REC_PY_STACK_CALLEES completes */
	uint64_t last_stack;
	size_t last_off;
	uint32_t last_npy;
	bool has_last;
};

void pystream_init(struct pystream *ps);
void pystream_release(struct pystream *ps);

/*
 * Take one record of the Python range (types 16-31). A RAW_REC_PY_STACK is decoded into *s
 * and ips (RAW_MAX_DEPTH entries), its Python frames appended to ps->frames from *py_off, and
 * 1 is returned: the caller keeps the stack. Code and note records are kept here (0); a type
 * this version does not know is skipped (0). -EINVAL for a malformed record (counted in
 * rejected), -ENOMEM.
 */
int pystream_take(struct pystream *ps, unsigned type, const uint8_t *payload, size_t len,
		  struct raw_py_stack *s, uint64_t *ips, size_t *py_off);

/* The name of callee id of ps as cProfile spells it, or NULL when the stream has none. */
const char *pystream_callee(const struct pystream *ps, uint64_t id);

/* What the report shows for one Python frame. */
struct pyframe_info {
	const char *name; /* qualified name (3.10: name); "[python]" for unknown code */
	const char *file; /* co_filename, NULL for unknown code */
	int firstlineno;  /* of the definition, 0 when unknown */
	int line;         /* of the instruction, -1 when unknown */
	bool known;       /* the code object was described */
};

/* Describe frame f of stream ps (strings owned by ps). */
void pystream_frame_info(const struct pystream *ps, const struct raw_py_frame *f,
			 struct pyframe_info *out);

/* The name of a note kind in the database ("no-thread-state", ...), NULL if unknown. */
const char *pynote_kind_name(unsigned kind);

/* ---- merging native and Python frames ------------------------------------------------- */

/* Is this native function the eval loop (its name, or a .cold / .part piece of it)? */
bool pymerge_is_eval(const char *function_name);

enum pymerge_mode {
	PYMERGE_USER_ONLY = 0,   /* Python frames replace the eval loop; once a stack has Python
				    frames, the interpreter's own native frames are hidden */
	PYMERGE_ALL = 1,         /* everything: each eval frame stays, outside its Python frames */
	PYMERGE_PYTHON_ONLY = 2, /* only Python frames (stacks without any keep their native) */
};

struct pymerge_item {
	bool python; /* true: py[index], false: native[index] */
	uint32_t index;
};

/* Native frame kinds, one per native frame (innermost first). */
enum pymerge_native_flags {
	PYMERGE_NATIVE_EVAL = 1 << 0,   /* _PyEval_EvalFrameDefault (pymerge_is_eval) */
	PYMERGE_NATIVE_INTERP = 1 << 1, /* a function of the interpreter's module (libpython or
					   the python executable) */
};

enum pymerge_result_flags {
	PYMERGE_UNMATCHED_PY = 1 << 0,   /* more Python entry groups than eval frames: the extra
					    (outer) ones were put at the outer end */
	PYMERGE_UNMATCHED_EVAL = 1 << 1, /* more eval frames than Python groups */
};

/*
 * Merge one stack. native[i] holds enum pymerge_native_flags for native frame i (innermost
 * first, n of them); pyflags[j] the enum raw_py_frame_flags of Python frame j (innermost
 * first, npy of them). Python frames are cut into groups, each ending (outwards) at a frame
 * flagged RAW_PY_FRAME_ENTRY (or the outermost frame); the k-th eval frame from the inside
 * ran the k-th group. Writes the merged stack, innermost first, to out (cap >= n + npy is
 * always enough) and returns its length; *result (may be NULL) gets enum
 * pymerge_result_flags.
 */
size_t pymerge_stack(const uint32_t *native, size_t n, const uint32_t *pyflags, size_t npy,
		     enum pymerge_mode mode, struct pymerge_item *out, size_t cap,
		     uint32_t *result);

#endif
