/* SPDX-License-Identifier: MIT */
/* Finding the interpreter in a loaded module: _PyRuntime, its version, its layout. */
#include <errno.h>
#include <string.h>
#include "collector/python/python-private.h"

struct pyagent_runtime pyagent_rt;

/* CPython 3.13's _Py_DebugOffsets, as far as we use it (Include/internal/pycore_runtime.h). */
struct debug_offsets_313 {
	char cookie[8]; /* "xdebugpy" */
	uint64_t version; /* PY_VERSION_HEX */
	uint64_t free_threaded;
	struct {
		uint64_t size, finalizing, interpreters_head;
	} runtime_state;
	struct {
		uint64_t size, id, next, threads_head, gc, imports_modules, sysdict, builtins,
			ceval_gil, gil_runtime_state, gil_runtime_state_enabled,
			gil_runtime_state_locked, gil_runtime_state_holder;
	} interpreter_state;
	struct {
		uint64_t size, prev, next, interp, current_frame, thread_id, native_thread_id,
			datastack_chunk, status;
	} thread_state;
	struct {
		uint64_t size, previous, executable, instr_ptr, localsplus, owner;
	} interpreter_frame;
	struct {
		uint64_t size, filename, name, qualname, linetable, firstlineno, argcount,
			localsplusnames, localspluskinds, co_code_adaptive;
	} code_object;
	struct {
		uint64_t size, ob_type;
	} pyobject;
	struct {
		uint64_t size, tp_name, tp_repr, tp_flags;
	} type_object;
	struct {
		uint64_t size, ob_item, ob_size;
	} tuple_object, list_object;
	struct {
		uint64_t size, ma_keys, ma_values;
	} dict_object;
	struct {
		uint64_t size, ob_fval;
	} float_object;
	struct {
		uint64_t size, lv_tag, ob_digit;
	} long_object;
	struct {
		uint64_t size, ob_size, ob_sval;
	} bytes_object;
	struct {
		uint64_t size, state, length, asciiobject_size;
	} unicode_object;
};

static bool small(uint64_t v)
{
	return v < 65536;
}

/*
 * 3.13 publishes its offsets at the start of _PyRuntime: take them over the built-in table,
 * so a 3.13.x whose structures moved still walks. Returns false when the block is not there
 * or describes something we cannot walk (a free-threaded build).
 */
static bool apply_debug_offsets(struct pylayout *L, uintptr_t runtime, uint32_t hexversion)
{
	struct debug_offsets_313 d;

	if (pyagent_read(&d, runtime, sizeof(d)) < 0 || memcmp(d.cookie, "xdebugpy", 8) != 0)
		return false;
	if ((d.version >> 16) != (hexversion >> 16) || d.free_threaded)
		return false;
	if (!small(d.runtime_state.interpreters_head) || !small(d.interpreter_state.next) ||
	    !small(d.thread_state.interp) || !small(d.thread_state.current_frame) ||
	    !small(d.thread_state.thread_id) || !small(d.interpreter_frame.previous) ||
	    !small(d.interpreter_frame.executable) || !small(d.interpreter_frame.instr_ptr) ||
	    !small(d.interpreter_frame.owner) || !small(d.interpreter_frame.localsplus) ||
	    !small(d.code_object.filename) || !small(d.code_object.qualname) ||
	    !small(d.code_object.name) || !small(d.code_object.linetable) ||
	    !small(d.code_object.firstlineno) || !small(d.code_object.co_code_adaptive) ||
	    !small(d.bytes_object.ob_sval) || !small(d.unicode_object.asciiobject_size))
		return false;
	L->rt_interp_head = (int32_t)d.runtime_state.interpreters_head;
	L->rt_interp_main = L->rt_interp_head + 8; /* interpreters.main follows .head */
	L->is_next = (int32_t)d.interpreter_state.next;
	L->ts_interp = (int32_t)d.thread_state.interp;
	L->ts_frame = (int32_t)d.thread_state.current_frame;
	L->ts_thread_id = (int32_t)d.thread_state.thread_id;
	L->fr_previous = (int32_t)d.interpreter_frame.previous;
	L->fr_code = (int32_t)d.interpreter_frame.executable;
	L->fr_instr = (int32_t)d.interpreter_frame.instr_ptr;
	L->fr_owner = (int32_t)d.interpreter_frame.owner;
	L->fr_size = (int32_t)d.interpreter_frame.localsplus;
	L->co_filename = (int32_t)d.code_object.filename;
	L->co_name = (int32_t)d.code_object.name;
	L->co_qualname = (int32_t)d.code_object.qualname;
	L->co_linetable = (int32_t)d.code_object.linetable;
	L->co_firstlineno = (int32_t)d.code_object.firstlineno;
	L->co_code = (int32_t)d.code_object.co_code_adaptive;
	L->co_size = L->co_code;
	L->bytes_sval = (int32_t)d.bytes_object.ob_sval;
	L->str_ascii_size = (int32_t)d.unicode_object.asciiobject_size;
	return true;
}

/* "python3.N" in the file name (libpython3.10.so.1.0, python3.10): N, or -1. */
static int minor_from_path(const char *path)
{
	const char *base = strrchr(path, '/'), *p;
	int minor = -1;

	base = base ? base + 1 : path;
	p = strstr(base, "python3.");
	if (!p)
		return -1;
	p += 8;
	if (*p >= '0' && *p <= '9') {
		minor = *p++ - '0';
		if (*p >= '0' && *p <= '9')
			minor = minor * 10 + (*p - '0');
	}
	return minor;
}

static int32_t max32(int32_t a, int32_t b)
{
	return a > b ? a : b;
}

static void set_spans(struct pyagent_runtime *rt)
{
	const struct pylayout *L = &rt->L;
	int32_t lo = L->rt_interp_head < L->rt_autotss ? L->rt_interp_head : L->rt_autotss;
	int32_t hi = max32(L->rt_interp_main, L->rt_autotss) + 8;
	int32_t ts = max32(max32(L->ts_interp, L->ts_thread_id), max32(L->ts_frame, L->ts_cframe));

	rt->rt_lo = (size_t)lo;
	rt->rt_len = (size_t)(hi - lo);
	rt->ts_len = (size_t)ts + 8;
}

/* Samplers read pyagent_rt while a later dlopen() may write it: state goes in last. */
static int publish(struct pyagent_runtime *rt, int state)
{
	rt->state = 0;
	pyagent_rt = *rt;
	__atomic_store_n(&pyagent_rt.state, state, __ATOMIC_RELEASE);
	return state;
}

int pyagent_on_module(const char *path, uintptr_t bias)
{
	struct pyelf_sym syms[] = {
		{ .name = "_PyRuntime" },
		{ .name = "Py_Version" },
		{ .name = "PyCode_Type" },
		{ .name = "PyFrame_Type" },
	};
	struct pyagent_runtime rt;
	const struct pylayout *L;
	uint32_t hex = 0;
	int rodata_minor = -1, ret;

	if (pyagent_rt.state)
		return PYAGENT_NOT_PYTHON;
	ret = pyelf_scan(path, syms, 4, NULL);
	if (ret < 0)
		return ret == -ENOEXEC ? PYAGENT_NOT_PYTHON : ret;
	if (!syms[0].found || !syms[2].found)
		return PYAGENT_NOT_PYTHON;

	memset(&rt, 0, sizeof(rt));
	rt.minor = -1;
	rt.runtime = bias + syms[0].value;
	rt.code_type = bias + syms[2].value;
	rt.frame_type = syms[3].found ? bias + syms[3].value : 0;
	strncpy(rt.path, path, sizeof(rt.path) - 1);
	if (syms[1].found) {
		/* Py_Version is const: the file has it, the image need not be mapped yet */
		if (syms[1].has_data)
			memcpy(&hex, syms[1].data, sizeof(hex));
		else if (pyagent_read(&hex, bias + syms[1].value, sizeof(hex)) < 0)
			hex = 0;
		if ((hex >> 24) == 3)
			rt.minor = (int)((hex >> 16) & 0xff);
	} else {
		/* 3.10 and older have no Py_Version */
		rt.minor = minor_from_path(path);
		/* only now: scanning every module's .rodata would slow every start */
		if (rt.minor < 0 && pyelf_scan(path, syms, 0, &rodata_minor) == 0)
			rt.minor = rodata_minor;
		hex = rt.minor >= 0 ? RAW_PY_VERSION(3, rt.minor) : 0;
	}
	rt.version = rt.minor >= 0 ? RAW_PY_VERSION(3, rt.minor) : 0;
	L = rt.minor >= 0 ? pylayout_find(rt.minor) : NULL;
	/* 3.10 is the last without Py_Version: anything else without it is older */
	if (!L || (!syms[1].found && rt.minor != 10) || (rt.minor == 10 && !rt.frame_type)) {
		return publish(&rt, PYAGENT_UNSUPPORTED);
	}
	rt.L = *L;
	if (rt.minor >= 13 && !apply_debug_offsets(&rt.L, rt.runtime, hex)) {
		return publish(&rt, PYAGENT_UNSUPPORTED);
	}
	set_spans(&rt);
	return publish(&rt, PYAGENT_FOUND);
}

bool pyagent_active(void)
{
	return __atomic_load_n(&pyagent_rt.state, __ATOMIC_ACQUIRE) != 0;
}

uint32_t pyagent_version(void)
{
	return pyagent_rt.version;
}

void pyagent_reset(void)
{
	__atomic_store_n(&pyagent_rt.state, 0, __ATOMIC_RELEASE);
	memset(&pyagent_rt, 0, sizeof(pyagent_rt));
}
