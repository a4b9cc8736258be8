/* SPDX-License-Identifier: MIT */
/* Layout probe: prints the offsets pyagent needs, compiled against one CPython's headers. */

/*
 * Not part of any library. tests/unit/test-python-layout.c compiles it against each installed
 * interpreter's headers and compares its output with the table in python-layout.c:
 *   cc -DPy_BUILD_CORE -I$P/include/python3.X -I$P/include/python3.X/internal python-probe.c
 * Every line is "name value"; the names are those of struct pylayout's fields.
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
#endif

#define P(name, value) printf("%s %ld\n", name, (long)(value))

/* Bit position of a string state bitfield, found by setting it in a zeroed object. */
static int state_shift(int which)
{
	PyASCIIObject o;
	unsigned int raw, v;

	memset(&o, 0, sizeof(o));
	if (which == 0)
		o.state.kind = 1;
	else if (which == 1)
		o.state.compact = 1;
	else
		o.state.ascii = 1;
	memcpy(&raw, &o.state, sizeof(raw));
	for (v = 0; v < 32; v++)
		if (raw & (1u << v))
			return (int)v;
	return -1;
}

int main(void)
{
	P("minor", PY_MINOR_VERSION);
#if PY_VERSION_HEX < 0x030C0000
	P("rt_autotss", offsetof(_PyRuntimeState, gilstate.autoTSSkey));
#else
	P("rt_autotss", offsetof(_PyRuntimeState, autoTSSkey));
#endif
	P("rt_interp_head", offsetof(_PyRuntimeState, interpreters.head));
	P("rt_interp_main", offsetof(_PyRuntimeState, interpreters.main));
	P("tss_key", offsetof(Py_tss_t, _key));
	P("is_next", offsetof(PyInterpreterState, next));
	P("ts_interp", offsetof(PyThreadState, interp));
	P("ts_thread_id", offsetof(PyThreadState, thread_id));
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
	return 0;
}
