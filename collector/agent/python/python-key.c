/* SPDX-License-Identifier: MIT */
/* The calling thread's Python frames as one hash, read in place: memory-consumption's key. */
#include <pthread.h>
#include <string.h>

#include "collector/agent/python/python-private.h"

/*
 * An allocation made while a thread runs Python belongs to the Python line running; the
 * agent's call-site cache must tell two lines apart without walking them with guarded reads
 * (pyagent_capture(), a few microseconds). Here the walk is made in place: the frames are the
 * calling thread's own, and they cannot change or go away while that thread is inside an
 * allocation (a frame is only pushed or popped by its thread, and those above the current one
 * are alive while it runs). The thread state comes from PyGILState's key as in the handler
 * (python-tstate.c), or, where there is none (3.15+), from the interpreter's own accessor
 * given to pyagent_key_tstate_fn(). The hash takes each frame's address and the instruction
 * it runs (3.10: its code object and f_lasti): two calls from different lines or through
 * different callers give different hashes.
 */

static uintptr_t (*tstate_fn)(void);

void pyagent_key_tstate_fn(uintptr_t (*fn)(void))
{
	tstate_fn = fn;
}

uintptr_t pykey_tstate(void)
{
	return tstate_fn ? tstate_fn() : 0;
}

static uintptr_t word(uintptr_t addr)
{
	uintptr_t v;

	memcpy(&v, (const void *)addr, sizeof(v));
	return v;
}

static uintptr_t this_tstate(const struct pylayout *L)
{
	const uint8_t *tss;
	uint32_t inited, key;
	uintptr_t ts;

	if (L->rt_autotss < 0)
		return tstate_fn ? tstate_fn() : 0;
	tss = (const uint8_t *)pyagent_rt.runtime + L->rt_autotss;
	memcpy(&inited, tss, sizeof(inited));
	memcpy(&key, tss + L->tss_key, sizeof(key));
	if (!inited)
		return 0;
	ts = (uintptr_t)pthread_getspecific((pthread_key_t)key);
	if (!ts || word(ts + (uintptr_t)L->ts_thread_id) != (uintptr_t)pthread_self())
		return 0;
	return ts;
}

/*
 * Whether the collector runs: an allocation it makes (a finalizer's) is flagged so
 * (RAW_PY_FRAME_GC), one under the same frames a moment before is not. The main interpreter
 * lives while any thread has a state.
 */
static bool collecting(const struct pylayout *L)
{
	uintptr_t interp;
	int32_t on;

	if (L->is_gc_collecting < 0)
		return false;
	interp = word(pyagent_rt.runtime + (uintptr_t)L->rt_interp_main);
	if (!interp)
		return false;
	memcpy(&on, (const void *)(interp + (uintptr_t)L->is_gc_collecting), sizeof(on));
	return on != 0;
}

uint64_t pyagent_key(int max, bool *whole)
{
	const struct pylayout *L = &pyagent_rt.L;
	uintptr_t ts, frame;
	uint64_t h = 0x84222325cbf29ce4ull;
	int n = 0;

	*whole = false;
	if (pyagent_rt.state != PYAGENT_FOUND || !(ts = this_tstate(L)))
		return 0;
	if (collecting(L))
		h = 0x6c62272e07bb0142ull;
	if (L->ts_frame >= 0) {
		frame = word(ts + (uintptr_t)L->ts_frame);
	} else {
		uintptr_t cframe = word(ts + (uintptr_t)L->ts_cframe);

		frame = cframe ? word(cframe + (uintptr_t)L->cf_current_frame) : 0;
	}
	for (; frame && !(frame & 7) && n < max; n++) {
		uint64_t instr;

		if (L->minor == 10) {
			int32_t lasti;

			memcpy(&lasti, (const void *)(frame + (uintptr_t)L->fr_instr),
			       sizeof(lasti));
			instr = word(frame + (uintptr_t)L->fr_code) ^ (uint64_t)(uint32_t)lasti;
		} else {
			instr = word(frame + (uintptr_t)L->fr_instr);
		}
		h = (h ^ frame) * 0x100000001b3ull;
		h = (h ^ instr) * 0xff51afd7ed558ccdull;
		h ^= h >> 29;
		frame = word(frame + (uintptr_t)L->fr_previous);
	}
	*whole = frame == 0;
	return n ? h | 1 : 0;
}
