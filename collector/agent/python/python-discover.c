/* SPDX-License-Identifier: MIT */
/* Finding the interpreter in a loaded module: _PyRuntime, its version, its layout. */
#include <errno.h>
#include <string.h>
#include "collector/agent/python/python-private.h"

struct pyagent_runtime pyagent_rt;

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
	int32_t lo = L->rt_autotss >= 0 && L->rt_autotss < L->rt_interp_head ? L->rt_autotss
									     : L->rt_interp_head;
	int32_t hi = max32(L->rt_interp_main, L->rt_autotss) + 8;
	int32_t ts = max32(max32(L->ts_interp, L->ts_thread_id), max32(L->ts_frame, L->ts_cframe));

	ts = max32(ts, max32(L->ts_next, L->ts_status));
	/* 3.10, 3.11: the GIL holder too (python-walk.c), close to the fields above */
	if (L->rt_tstate_current >= 0) {
		lo = lo < L->rt_tstate_current ? lo : L->rt_tstate_current;
		hi = max32(hi, L->rt_tstate_current + 8);
	}
	rt->rt_lo = (size_t)lo;
	rt->rt_len = (size_t)(hi - lo);
	rt->ts_len = (size_t)ts + 8;
}

/* Samplers read pyagent_rt while a later dlopen() may write it: state goes in last. */
static int publish(struct pyagent_runtime *rt, int state)
{
	if (state == PYAGENT_UNSUPPORTED && !rt->note) {
		rt->note = RAW_PY_NOTE_UNKNOWN_VERSION;
		rt->why = "a version the agent does not walk";
	}
	rt->state = 0;
	pyagent_rt = *rt;
	__atomic_store_n(&pyagent_rt.state, state, __ATOMIC_RELEASE);
	return state;
}

const char *const pyagent_dynsym_names[PYAGENT_DYNSYMS] = { "_PyRuntime", "Py_Version",
							    "PyCode_Type", "PyFrame_Type" };

/*
 * The symbols from the image's dynamic table, when they suffice: 3.11 and 3.12, whose
 * layout is the agent's own tables', need no initial value of _PyRuntime from the file, and
 * Py_Version (const, not relocated) is read where it is mapped. 3.13+ read _Py_DebugOffsets
 * from the file's copy (the image may not be initialised yet); 3.10 has no Py_Version.
 */
static bool from_image(const struct pyagent_dynsyms *dyn, uintptr_t bias, struct pyelf_sym *syms)
{
	uint32_t hex = 0;
	size_t k;

	if (!dyn || !dyn->found[0] || !dyn->found[1] || !dyn->found[2] ||
	    pyagent_read(&hex, bias + dyn->value[1], sizeof(hex)) < 0 || (hex >> 24) != 3 ||
	    ((hex >> 16) & 0xff) < 11 || ((hex >> 16) & 0xff) > 12)
		return false;
	for (k = 0; k < PYAGENT_DYNSYMS; k++) {
		syms[k].found = dyn->found[k];
		syms[k].value = dyn->value[k];
	}
	memcpy(syms[1].data, &hex, sizeof(hex));
	syms[1].has_data = true;
	syms[0].copy_len = 0;
	return true;
}

int pyagent_on_module(const char *path, uintptr_t bias)
{
	return pyagent_on_image(path, bias, NULL);
}

int pyagent_on_image(const char *path, uintptr_t bias, const struct pyagent_dynsyms *dyn)
{
	struct pyelf_sym syms[PYAGENT_DYNSYMS] = {
		{ .name = "_PyRuntime" },
		{ .name = "Py_Version" },
		{ .name = "PyCode_Type" },
		{ .name = "PyFrame_Type" },
	};
	static uint8_t
		block[PYDEBUG_MAX_BYTES]; /* only outside the handler, one caller at a time */
	struct pyagent_runtime rt;
	const struct pylayout *L;
	uint32_t hex = 0;
	int rodata_minor = -1, ret;

	if (pyagent_rt.state)
		return PYAGENT_NOT_PYTHON;
	/* _PyRuntime's initial value starts with _Py_DebugOffsets (3.13+): from the file too */
	syms[0].copy = block;
	syms[0].copy_len = sizeof(block);
	ret = from_image(dyn, bias, syms) ? 0 : pyelf_scan(path, syms, PYAGENT_DYNSYMS, NULL);
	if (ret < 0)
		return ret == -ENOEXEC ? PYAGENT_NOT_PYTHON : ret;
	if (!syms[0].found || !syms[2].found)
		return PYAGENT_NOT_PYTHON;

	memset(&rt, 0, sizeof(rt));
	rt.minor = -1;
	rt.runtime = bias + syms[0].value;
	rt.code_type = bias + syms[2].value;
	rt.frame_type = syms[3].found ? bias + syms[3].value : 0;
	snprintf(rt.path, sizeof(rt.path), "%s", path);
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
	/* a release newer than the tables: what _Py_DebugOffsets gives over the newest layout */
	if (!L && syms[1].found && rt.minor > pylayout_newest()->minor) {
		L = pylayout_newest();
		rt.later = true;
	}
	/* 3.10 is the last without Py_Version: anything else without it is older */
	if (!L || (!syms[1].found && rt.minor != 10) || (rt.minor == 10 && !rt.frame_type))
		return publish(&rt, PYAGENT_UNSUPPORTED);
	rt.L = *L;
	if (rt.later) {
		rt.L.minor = rt.minor;
		/* not published: PyGILState's key (gone in 3.15) and co_version. The thread list
		   and the name string do instead (python-tstate.c, python-codes.c). */
		rt.L.rt_autotss = -1;
		rt.L.co_version = -1;
	}
	if (rt.minor >= 13) {
		/* the file's copy: the image need not be initialised, nor mapped where told */
		int r = syms[0].copy_len ? pydebug_apply_copy(&rt.L, block, syms[0].copy_len, hex)
					 : pydebug_apply(&rt.L, rt.runtime, hex);

		if (r == PYDEBUG_FREE_THREADED) {
			rt.note = RAW_PY_NOTE_FREE_THREADED;
			rt.why = "a free-threaded build, whose frames the agent does not walk yet";
		}
		if (r != PYDEBUG_OK)
			return publish(&rt, PYAGENT_UNSUPPORTED);
	}
	if ((size_t)rt.L.co_size > PYAGENT_CODE_BYTES || rt.L.fr_size > 256 ||
	    (size_t)rt.L.str_compact_size + 32 > PYAGENT_NAME_BYTES)
		return publish(&rt, PYAGENT_UNSUPPORTED);
	set_spans(&rt);
	/* 3.15 builds _asyncio, and its debug offsets, into the interpreter */
	if (rt.minor >= 15)
		pyagent_on_asyncio(path, true);
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

const char *pyagent_unsupported_why(void)
{
	return pyagent_rt.state == PYAGENT_UNSUPPORTED ? pyagent_rt.why : NULL;
}

void pyagent_reset(void)
{
	__atomic_store_n(&pyagent_rt.state, 0, __ATOMIC_RELEASE);
	pyagent_gil_reset();
	pyagent_thread_names_reset();
	__atomic_store_n(&pyasync.ready, 0, __ATOMIC_RELEASE);
	memset(&pyagent_rt, 0, sizeof(pyagent_rt));
}
