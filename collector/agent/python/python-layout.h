/* SPDX-License-Identifier: MIT */
/* Per-version byte offsets into CPython's runtime, thread, frame, code and string objects. */
#ifndef PCOLLECT_COLLECTOR_PYTHON_LAYOUT_H
#define PCOLLECT_COLLECTOR_PYTHON_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

/*
 * Every field is a byte offset (or a size, or a bit position for str_*_shift), -1 where the
 * version has no such field. The names are those python-probe.c prints: each version's row
 * (python-layout-rows.def) is that probe's output against the version's headers, written by
 * scripts/python-layouts in the order the fields stand here (all int32_t), and
 * tests/unit/test-python-layout.c checks it again wherever the headers are installed. A new
 * field: declare it here, print it in the probe, run the script.
 */
struct pylayout {
	int32_t minor;             /* 3.minor */
	int32_t rt_autotss;        /* _PyRuntime: the Py_tss_t of PyGILState's thread states */
	int32_t rt_interp_head;    /* _PyRuntime.interpreters.head */
	int32_t rt_interp_main;    /* _PyRuntime.interpreters.main */
	int32_t tss_key;           /* Py_tss_t._key (a pthread_key_t) */
	int32_t is_next;           /* PyInterpreterState.next */
	int32_t is_threads_head;   /* PyInterpreterState.threads.head (3.10: tstate_head) */
	int32_t ts_interp;         /* PyThreadState.interp */
	int32_t ts_thread_id;      /* PyThreadState.thread_id (pthread_self()) */
	int32_t ts_next;           /* PyThreadState.next */
	int32_t ts_status;         /* 3.12+ PyThreadState._status (bit fields, PYLAYOUT_TS_*) */
	int32_t rt_tstate_current; /* 3.10, 3.11: _PyRuntime.gilstate.tstate_current */
	int32_t ts_frame;          /* 3.10 frame, 3.13 current_frame */
	int32_t ts_cframe;         /* 3.11, 3.12: cframe */
	int32_t cf_current_frame;  /* 3.11, 3.12: _PyCFrame.current_frame */
	int32_t fr_previous;       /* f_back / previous */
	int32_t fr_code;           /* f_code / f_executable */
	int32_t fr_instr;          /* 3.10 f_lasti (int, code units), prev_instr, instr_ptr */
	int32_t fr_owner;          /* 3.11+ owner (char) */
	int32_t fr_is_entry;       /* 3.11 is_entry (bool) */
	int32_t fr_size;           /* bytes of a frame to copy: all the fields above */
	int32_t fr_code_tag;       /* 3.14+: tag bits of f_executable (a _PyStackRef) */
	int32_t co_filename;
	int32_t co_name;
	int32_t co_qualname; /* 3.11+ */
	int32_t co_code;     /* 3.10 co_code (bytes object), 3.11+ co_code_adaptive (inline) */
	int32_t co_firsttraceable; /* 3.11+ */
	int32_t co_size;           /* bytes of a code object to copy: all the fields above */
	int32_t co_version;        /* 3.12+: unique per code object created */
	int32_t co_firstlineno;
	int32_t co_linetable;
	int32_t var_size;   /* PyVarObject.ob_size (code units of 3.11+ code) */
	int32_t bytes_sval; /* PyBytesObject.ob_sval */
	int32_t str_length; /* PyASCIIObject.length (code points) */
	int32_t str_hash;
	int32_t str_state;
	int32_t str_kind_shift;    /* bit of state.kind (3 bits) */
	int32_t str_compact_shift; /* bit of state.compact */
	int32_t str_ascii_shift;   /* bit of state.ascii */
	int32_t str_ascii_size;    /* sizeof(PyASCIIObject): compact ASCII data follows */
	int32_t str_compact_size;  /* sizeof(PyCompactUnicodeObject): other compact data follows */
	int32_t gil;               /* the GIL (struct _gil_runtime_state): 3.10, 3.11 in
				      _PyRuntime (ceval.gil), 3.12+ in PyInterpreterState (_gil) */
	int32_t gil_cond;          /* its cond, mutex, switch_cond and switch_mutex */
	int32_t gil_mutex;
	int32_t gil_switch_cond;
	int32_t gil_switch_mutex;
	int32_t is_gc_collecting; /* PyInterpreterState.gc.collecting (int): the collector runs */
	int32_t ts_active_shift;  /* 3.12+: bit of PyThreadState._status.active, set while the
				     thread is attached, which (GIL builds) is while it holds the
				     GIL; 3.10, 3.11 compare rt_tstate_current instead */
	int32_t fr_stackpointer;  /* 3.14+: _PyInterpreterFrame.stackpointer, which the
				     interpreter stores before every call that may escape */
};

/*
 * Frame owners from this value up mark the frame a _PyEval_EvalFrameDefault call pushes on
 * the C stack (3.12, 3.13: FRAME_OWNED_BY_CSTACK = 3; 3.14+: FRAME_OWNED_BY_INTERPRETER = 3,
 * with FRAME_OWNED_BY_CSTACK moved to 4): not a Python function's frame.
 */
#define PYLAYOUT_OWNER_CSTACK 3
#define PYLAYOUT_OB_TYPE      8 /* PyObject.ob_type, every version */
/* PyThreadState._status bits (3.12+): a state in use by its thread has BOUND alone of these. */
#define PYLAYOUT_TS_BOUND     (1u << 1)
#define PYLAYOUT_TS_UNBOUND   (1u << 2)
#define PYLAYOUT_TS_GILSTATE  (1u << 3) /* bound_gilstate: the thread's own state */
#define PYLAYOUT_TS_CLEARED   (1u << 6)
#define PYLAYOUT_TS_FINALIZED (1u << 7)

/* The built-in layout of 3.minor, or NULL. */
const struct pylayout *pylayout_find(int minor);
/* The newest version with a built-in layout (a later one starts from it: python-debug.c). */
const struct pylayout *pylayout_newest(void);

/*
 * Where the fields pyagent takes from _Py_DebugOffsets (3.13+, at the start of _PyRuntime)
 * sit in that block, in 8-byte words from its start. Each minor release appends fields to
 * the block's sub-structures, so these move between versions; python-probe.c prints them
 * ("dbg_" + the field), rows in python-layout-rows.def as for struct pylayout.
 */
struct pydebug_map {
	int32_t minor;
	int32_t version, free_threaded, interpreters_head, is_next, is_threads_head;
	int32_t ts_size, ts_next, ts_interp, ts_current_frame, ts_thread_id, ts_status;
	int32_t fr_size, fr_previous, fr_executable, fr_instr_ptr, fr_localsplus, fr_owner;
	int32_t fr_stackpointer; /* 3.14+; -1 where the block has none */
	int32_t co_size, co_filename, co_name, co_qualname, co_linetable, co_firstlineno,
		co_code_adaptive;
	int32_t ob_type, bytes_ob_size, bytes_ob_sval, str_state, str_length, str_ascii_size;
	int32_t is_gil;               /* interpreter_state.gil_runtime_state */
	int32_t is_gc, gc_collecting; /* interpreter_state.gc, gc.collecting */
	int32_t words;                /* words to read: every field above lies below */
};

/* The map of 3.minor; for a release newer than every map, the newest (NULL below 3.13). */
const struct pydebug_map *pydebug_map_find(int minor);

/*
 * What reading an attribute of an object takes (python-thread.c: a threading.Thread's name),
 * a row per minor version as for struct pylayout ("obj_" + the field in the probe). Offsets
 * into frames, type objects, dicts and their keys; -1 where the version has no such field,
 * flags 0 where it has no such flag.
 */
struct pyobj_layout {
	int32_t minor;
	int32_t fr_globals;    /* frame's f_globals (the module's dict) */
	int32_t fr_localsplus; /* frame's first local (3.14+: a _PyStackRef) */
	int32_t tp_basicsize;  /* PyTypeObject fields */
	int32_t tp_flags;
	int32_t tp_dictoffset;       /* 3.10: where an instance keeps its dict */
	int32_t ht_cached_keys;      /* PyHeapTypeObject: the shared keys of its instances */
	int32_t managed_dict;        /* 3.11+: from the object, its dict (3.12: or values) */
	int32_t flag_managed_dict;   /* Py_TPFLAGS_MANAGED_DICT */
	int32_t values;              /* PyDictValues.values */
	int32_t managed_values;      /* 3.11: from the object, its values */
	int32_t dorv_tagged;         /* 3.12: managed_dict holds values - 1 when odd */
	int32_t flag_inline_values;  /* 3.13+: Py_TPFLAGS_INLINE_VALUES (at tp_basicsize) */
	int32_t values_valid;        /* 3.13+: PyDictValues.valid */
	int32_t ma_keys, ma_values;  /* PyDictObject */
	int32_t dk_size;             /* 3.10: PyDictKeysObject.dk_size (Py_ssize_t) */
	int32_t dk_log2_size;        /* 3.11+ (uint8_t) */
	int32_t dk_log2_index_bytes; /* 3.11+ (uint8_t) */
	int32_t dk_kind;             /* 3.11+ (uint8_t): 0 general entries, else unicode */
	int32_t dk_nentries, dk_indices;
	int32_t entry_size;  /* PyDictKeyEntry: hash, key, value */
	int32_t uentry_size; /* 3.11+ PyDictUnicodeEntry: key, value */
};

/* The object layout of 3.minor; for a release newer than every row, the newest. */
const struct pyobj_layout *pyobj_layout_find(int minor);

/* Field names and offsets into struct pylayout, for tests and diagnostics; NULL-terminated. */
struct pylayout_field {
	const char *name;
	size_t offset;
};
extern const struct pylayout_field pylayout_fields[];
extern const struct pylayout_field pydebug_map_fields[];
extern const struct pylayout_field pyobj_layout_fields[];

#endif
