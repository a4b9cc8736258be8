/* SPDX-License-Identifier: MIT */
/* The interpreter's GIL: which condition and mutex a thread waiting for it blocks on. */
#include "collector/agent/python/python-private.h"

/*
 * A thread that wants the GIL locks its mutex and waits on its condition (take_gil() in
 * Python/ceval_gil.c, 3.10 to 3.15), and one that gives it up may wait on switch_cond for
 * another to take it. Those objects sit in the GIL's struct _gil_runtime_state: in _PyRuntime
 * up to 3.11 (ceval.gil), in the main interpreter's state from 3.12 (_gil; 3.13+ say where
 * in _Py_DebugOffsets), which is itself inside _PyRuntime (_main_interpreter) and so never
 * moves once the interpreter is up. Their addresses come from the layout, not from symbols:
 * a stripped interpreter (Debian's) needs only _PyRuntime, which it exports.
 */

static uintptr_t gil_base; /* the GIL's address, 0 until the interpreter has one */

static uintptr_t base_now(void)
{
	const struct pylayout *L = &pyagent_rt.L;
	uintptr_t interp;

	if (L->minor < 12)
		return pyagent_rt.runtime + (uintptr_t)L->gil;
	/* interpreters.main: NULL before Py_Initialize(), then _PyRuntime's own main state. */
	interp = __atomic_load_n((uintptr_t *)(pyagent_rt.runtime + (uintptr_t)L->rt_interp_main),
				 __ATOMIC_RELAXED);
	return interp ? interp + (uintptr_t)L->gil : 0;
}

bool pyagent_is_gil(uintptr_t addr)
{
	const struct pylayout *L = &pyagent_rt.L;
	uintptr_t base = __atomic_load_n(&gil_base, __ATOMIC_RELAXED), d;

	if (__atomic_load_n(&pyagent_rt.state, __ATOMIC_ACQUIRE) != PYAGENT_FOUND || L->gil <= 0 ||
	    L->rt_interp_main < 0 || !addr)
		return false;
	if (!base) {
		base = base_now();
		if (!base)
			return false;
		__atomic_store_n(&gil_base, base, __ATOMIC_RELAXED);
	}
	if (addr < base)
		return false;
	d = addr - base;
	return d == (uintptr_t)L->gil_cond || d == (uintptr_t)L->gil_mutex ||
	       d == (uintptr_t)L->gil_switch_cond || d == (uintptr_t)L->gil_switch_mutex;
}

void pyagent_gil_reset(void)
{
	__atomic_store_n(&gil_base, 0, __ATOMIC_RELAXED);
}
