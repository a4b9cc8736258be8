/* SPDX-License-Identifier: MIT */
/* Layout probe: prints the offsets pyagent needs, compiled against one CPython's headers. */

/*
 * Not part of any library. scripts/python-layouts compiles it against a version's headers and
 * makes its output that version's row in python-layout-rows.def; tests/unit/test-python-layout.c
 * compiles it against each installed interpreter's headers and compares with the rows:
 *   cc -DPy_BUILD_CORE -I$INC -I$INC/internal -I$INC/.. python-probe.c  (INC: include/python3.N)
 * Every line is "name value"; the names are those of struct pylayout's fields, and "dbg_" +
 * those of struct pydebug_map (3.13+), "obj_" + those of struct pyobj_layout. A field
 * printed here needs its field there.
 */
#include <Python.h>
#include <frameobject.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include "internal/pycore_runtime.h"
#include "internal/pycore_interp.h"
#if PY_VERSION_HEX >= 0x030B0000
#include "internal/pycore_frame.h"
#include "internal/pycore_code.h"
#include "internal/pycore_dict.h"
#include "internal/pycore_object.h"
#endif
#if PY_VERSION_HEX >= 0x030E0000
#include "internal/pycore_debug_offsets.h"
#endif

#define P(name, value) printf("%s %ld\n", name, (long)(value))

/* Position of the one bit set in the 32 bits at p (a bit field set in a zeroed struct). */
static int set_bit(const void *p)
{
	unsigned int raw, v;

	memcpy(&raw, p, sizeof(raw));
	for (v = 0; v < 32; v++)
		if (raw & (1u << v))
			return (int)v;
	return -1;
}

/* Bit position of a string state bitfield, found by setting it in a zeroed object. */
static int state_shift(int which)
{
	PyASCIIObject o;

	memset(&o, 0, sizeof(o));
	if (which == 0)
		o.state.kind = 1;
	else if (which == 1)
		o.state.compact = 1;
	else
		o.state.ascii = 1;
	return set_bit(&o.state);
}

#if PY_VERSION_HEX >= 0x030C0000
/* Bit position of PyThreadState._status.active, found the same way. */
static int active_shift(void)
{
	PyThreadState ts;

	memset(&ts, 0, sizeof(ts));
	ts._status.active = 1;
	return set_bit(&ts._status);
}
#endif

#if PY_VERSION_HEX >= 0x030D0000
/* Where each field pyagent reads sits in _Py_DebugOffsets, in 8-byte words (python-debug.c). */
#define D(name, member) P("dbg_" name, offsetof(_Py_DebugOffsets, member) / 8)
static void debug_offsets(void)
{
	/* words to read: up to the last field used (the gc section follows the unicode one) */
	size_t str = offsetof(_Py_DebugOffsets, unicode_object.asciiobject_size),
	       gc = offsetof(_Py_DebugOffsets, gc.collecting);

	D("version", version);
	D("free_threaded", free_threaded);
	D("interpreters_head", runtime_state.interpreters_head);
	D("is_next", interpreter_state.next);
	D("is_threads_head", interpreter_state.threads_head);
	D("ts_size", thread_state.size);
	D("ts_next", thread_state.next);
	D("ts_interp", thread_state.interp);
	D("ts_current_frame", thread_state.current_frame);
	D("ts_thread_id", thread_state.thread_id);
	D("ts_status", thread_state.status);
	D("fr_size", interpreter_frame.size);
	D("fr_previous", interpreter_frame.previous);
	D("fr_executable", interpreter_frame.executable);
	D("fr_instr_ptr", interpreter_frame.instr_ptr);
	D("fr_localsplus", interpreter_frame.localsplus);
	D("fr_owner", interpreter_frame.owner);
#if PY_VERSION_HEX >= 0x030E0000
	D("fr_stackpointer", interpreter_frame.stackpointer);
#else
	P("dbg_fr_stackpointer", -1);
#endif
	D("co_size", code_object.size);
	D("co_filename", code_object.filename);
	D("co_name", code_object.name);
	D("co_qualname", code_object.qualname);
	D("co_linetable", code_object.linetable);
	D("co_firstlineno", code_object.firstlineno);
	D("co_code_adaptive", code_object.co_code_adaptive);
	D("ob_type", pyobject.ob_type);
	D("bytes_ob_size", bytes_object.ob_size);
	D("bytes_ob_sval", bytes_object.ob_sval);
	D("str_state", unicode_object.state);
	D("str_length", unicode_object.length);
	D("str_ascii_size", unicode_object.asciiobject_size);
	D("is_gil", interpreter_state.gil_runtime_state);
	D("is_gc", interpreter_state.gc);
	D("gc_collecting", gc.collecting);
	P("dbg_words", (gc > str ? gc : str) / 8 + 1);
}
#endif

/* What reading an object's attribute takes (python-thread.c): frames' globals and first
   local, types, instance dicts and their keys. 3.10's dict keys are not in its headers
   (Objects/dict-common.h): their offsets are that file's. */
static void object_offsets(void)
{
#if PY_VERSION_HEX < 0x030B0000
	P("obj_fr_globals", offsetof(PyFrameObject, f_globals));
	P("obj_fr_localsplus", offsetof(PyFrameObject, f_localsplus));
#else
	P("obj_fr_globals", offsetof(_PyInterpreterFrame, f_globals));
	P("obj_fr_localsplus", offsetof(_PyInterpreterFrame, localsplus));
#endif
	P("obj_tp_basicsize", offsetof(PyTypeObject, tp_basicsize));
	P("obj_tp_flags", offsetof(PyTypeObject, tp_flags));
	P("obj_tp_dictoffset", offsetof(PyTypeObject, tp_dictoffset));
	P("obj_ht_cached_keys", offsetof(PyHeapTypeObject, ht_cached_keys));
#if PY_VERSION_HEX >= 0x030B0000
	P("obj_managed_dict", -3 * (long)sizeof(PyObject *)); /* MANAGED_DICT_OFFSET */
	P("obj_flag_managed_dict", Py_TPFLAGS_MANAGED_DICT);
	P("obj_values", offsetof(PyDictValues, values));
#else
	P("obj_managed_dict", -1);
	P("obj_flag_managed_dict", 0);
	P("obj_values", 0);
#endif
#if PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030C0000
	P("obj_managed_values", -4 * (long)sizeof(PyObject *)); /* _PyObject_ValuesPointer */
#else
	P("obj_managed_values", -1);
#endif
#if PY_VERSION_HEX >= 0x030C0000 && PY_VERSION_HEX < 0x030D0000
	P("obj_dorv_tagged", 1); /* PyDictOrValues: values pointer - 1 (odd), or a dict */
#else
	P("obj_dorv_tagged", 0);
#endif
#if PY_VERSION_HEX >= 0x030D0000
	P("obj_flag_inline_values", Py_TPFLAGS_INLINE_VALUES);
	P("obj_values_valid", offsetof(PyDictValues, valid));
#else
	P("obj_flag_inline_values", 0);
	P("obj_values_valid", -1);
#endif
	P("obj_ma_keys", offsetof(PyDictObject, ma_keys));
	P("obj_ma_values", offsetof(PyDictObject, ma_values));
#if PY_VERSION_HEX < 0x030B0000
	P("obj_dk_size", 8);
	P("obj_dk_log2_size", -1);
	P("obj_dk_log2_index_bytes", -1);
	P("obj_dk_kind", -1);
	P("obj_dk_nentries", 32);
	P("obj_dk_indices", 40);
	P("obj_entry_size", 24);
	P("obj_uentry_size", -1);
#else
	P("obj_dk_size", -1);
	P("obj_dk_log2_size", offsetof(PyDictKeysObject, dk_log2_size));
	P("obj_dk_log2_index_bytes", offsetof(PyDictKeysObject, dk_log2_index_bytes));
	P("obj_dk_kind", offsetof(PyDictKeysObject, dk_kind));
	P("obj_dk_nentries", offsetof(PyDictKeysObject, dk_nentries));
	P("obj_dk_indices", offsetof(PyDictKeysObject, dk_indices));
	P("obj_entry_size", sizeof(PyDictKeyEntry));
	P("obj_uentry_size", sizeof(PyDictUnicodeEntry));
#endif
}

int main(void)
{
	P("minor", PY_MINOR_VERSION);
#if PY_VERSION_HEX < 0x030C0000
	P("rt_autotss", offsetof(_PyRuntimeState, gilstate.autoTSSkey));
#elif PY_VERSION_HEX < 0x030F0000
	P("rt_autotss", offsetof(_PyRuntimeState, autoTSSkey));
#else
	P("rt_autotss", -1); /* 3.15 keeps PyGILState's thread state in a static TLS variable */
#endif
	P("rt_interp_head", offsetof(_PyRuntimeState, interpreters.head));
	P("rt_interp_main", offsetof(_PyRuntimeState, interpreters.main));
	P("tss_key", offsetof(Py_tss_t, _key));
	P("is_next", offsetof(PyInterpreterState, next));
	P("ts_interp", offsetof(PyThreadState, interp));
	P("ts_thread_id", offsetof(PyThreadState, thread_id));
	P("ts_next", offsetof(PyThreadState, next));
#if PY_VERSION_HEX >= 0x030C0000
	P("ts_status", offsetof(PyThreadState, _status));
#else
	P("ts_status", -1);
#endif
#if PY_VERSION_HEX >= 0x030B0000
	P("is_threads_head", offsetof(PyInterpreterState, threads.head));
#else
	P("is_threads_head", offsetof(PyInterpreterState, tstate_head));
#endif
#if PY_VERSION_HEX < 0x030B0000
	P("rt_tstate_current", offsetof(_PyRuntimeState, gilstate.tstate_current));
	P("ts_frame", offsetof(PyThreadState, frame));
	P("ts_cframe", -1);
	P("cf_current_frame", -1);
	P("fr_previous", offsetof(PyFrameObject, f_back));
	P("fr_code", offsetof(PyFrameObject, f_code));
	P("fr_instr", offsetof(PyFrameObject, f_lasti));
	P("fr_owner", -1);
	P("fr_is_entry", -1);
	P("fr_size", offsetof(PyFrameObject, f_lineno));
#else
#if PY_VERSION_HEX < 0x030C0000
	P("rt_tstate_current", offsetof(_PyRuntimeState, gilstate.tstate_current));
#else
	P("rt_tstate_current", -1);
#endif
#if PY_VERSION_HEX < 0x030D0000
	P("ts_frame", -1);
	P("ts_cframe", offsetof(PyThreadState, cframe));
	P("cf_current_frame", offsetof(_PyCFrame, current_frame));
	P("fr_code", offsetof(_PyInterpreterFrame, f_code));
	P("fr_instr", offsetof(_PyInterpreterFrame, prev_instr));
#else
	P("ts_frame", offsetof(PyThreadState, current_frame));
	P("ts_cframe", -1);
	P("cf_current_frame", -1);
	P("fr_code", offsetof(_PyInterpreterFrame, f_executable));
	P("fr_instr", offsetof(_PyInterpreterFrame, instr_ptr));
#endif
	P("fr_previous", offsetof(_PyInterpreterFrame, previous));
	P("fr_owner", offsetof(_PyInterpreterFrame, owner));
#if PY_VERSION_HEX < 0x030C0000
	P("fr_is_entry", offsetof(_PyInterpreterFrame, is_entry));
#else
	P("fr_is_entry", -1);
#endif
	P("fr_size", offsetof(_PyInterpreterFrame, localsplus));
#endif
#if PY_VERSION_HEX >= 0x030E0000
	P("fr_code_tag", 3); /* f_executable is a _PyStackRef: Py_TAG_BITS */
#else
	P("fr_code_tag", 0);
#endif
	P("co_filename", offsetof(PyCodeObject, co_filename));
	P("co_name", offsetof(PyCodeObject, co_name));
#if PY_VERSION_HEX >= 0x030B0000
	P("co_qualname", offsetof(PyCodeObject, co_qualname));
	P("co_code", offsetof(PyCodeObject, co_code_adaptive));
	P("co_firsttraceable", offsetof(PyCodeObject, _co_firsttraceable));
	P("co_size", offsetof(PyCodeObject, co_code_adaptive));
#else
	P("co_qualname", -1);
	P("co_code", offsetof(PyCodeObject, co_code));
	P("co_firsttraceable", -1);
	P("co_size", sizeof(PyCodeObject));
#endif
#if PY_VERSION_HEX >= 0x030C0000
	P("co_version", offsetof(PyCodeObject, co_version));
#else
	P("co_version", -1);
#endif
	P("co_firstlineno", offsetof(PyCodeObject, co_firstlineno));
	P("co_linetable", offsetof(PyCodeObject, co_linetable));
	P("var_size", offsetof(PyVarObject, ob_size));
	P("bytes_sval", offsetof(PyBytesObject, ob_sval));
	P("str_length", offsetof(PyASCIIObject, length));
	P("str_hash", offsetof(PyASCIIObject, hash));
	P("str_state", offsetof(PyASCIIObject, state));
	P("str_kind_shift", state_shift(0));
	P("str_compact_shift", state_shift(1));
	P("str_ascii_shift", state_shift(2));
	P("str_ascii_size", sizeof(PyASCIIObject));
	P("str_compact_size", sizeof(PyCompactUnicodeObject));
	/* The GIL: in _PyRuntime up to 3.11, in each interpreter from 3.12 (the main one's). */
#if PY_VERSION_HEX < 0x030C0000
	P("gil", offsetof(_PyRuntimeState, ceval.gil));
#else
	P("gil", offsetof(PyInterpreterState, _gil));
#endif
	P("gil_cond", offsetof(struct _gil_runtime_state, cond));
	P("gil_mutex", offsetof(struct _gil_runtime_state, mutex));
	P("gil_switch_cond", offsetof(struct _gil_runtime_state, switch_cond));
	P("gil_switch_mutex", offsetof(struct _gil_runtime_state, switch_mutex));
	/* The collector's flag, and whether a thread holds the GIL (python-walk.c, [gc]). */
	P("is_gc_collecting", offsetof(PyInterpreterState, gc.collecting));
#if PY_VERSION_HEX >= 0x030C0000
	P("ts_active_shift", active_shift());
#else
	P("ts_active_shift", -1);
#endif
	/* The value stack's top, kept across calls from 3.14 on (python-callee.c). */
#if PY_VERSION_HEX >= 0x030E0000
	P("fr_stackpointer", offsetof(_PyInterpreterFrame, stackpointer));
#else
	P("fr_stackpointer", -1);
#endif
	object_offsets();
#if PY_VERSION_HEX >= 0x030D0000
	debug_offsets();
#endif
	return 0;
}
