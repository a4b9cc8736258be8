/* SPDX-License-Identifier: MIT */
/* Which PyThreadState is the interrupted thread's: PyGILState's key, or the thread list. */
#include <pthread.h>
#include <string.h>

#include "collector/agent/python/python-private.h"

/*
 * 3.10 to 3.14: PyGILState keeps each thread's own PyThreadState in a pthread key
 * (_PyRuntime's autoTSSkey), so pthread_getspecific() gives the interrupted thread's state
 * whether or not it holds the GIL. pthread_getspecific() takes no lock and allocates nothing
 * (glibc reads the thread's key block), so it is safe here; it is the same call
 * PyGILState_GetThisThreadState() makes, without running interpreter code. tstate_current
 * (3.10, 3.11) would only be right for the thread holding the GIL, and 3.12+ keeps the
 * current state in a static TLS variable we cannot reach from a shared library.
 *
 * 3.15 moved PyGILState's state into such a variable too, and so may later releases: there
 * the thread's state is found in the main interpreter's list of thread states
 * (interp->threads.head, then ->next; _Py_DebugOffsets gives both), as the one whose thread_id
 * is pthread_self() and whose _status says it is bound to its thread and not torn down. The
 * list is walked only when the state found last time (t->tstate) no longer passes that test,
 * so a sample reads one state, as with the key.
 *
 * Either way the state must name this thread (thread_id == pthread_self()) and belong to the
 * main interpreter; while sub-interpreters exist samples get a note instead.
 */

#define MAX_THREADS 1024 /* states looked at in one walk of the list */

static uint64_t field(const uint8_t *obj, int32_t off)
{
	uint64_t v;

	memcpy(&v, obj + off, sizeof(v));
	return v;
}

/* The state copied in ts is this thread's, alive, in the main interpreter. */
static bool ours(const struct pylayout *L, const uint8_t *ts, uintptr_t main_interp)
{
	uint32_t status;

	if ((uintptr_t)field(ts, L->ts_thread_id) != (uintptr_t)pthread_self() ||
	    (uintptr_t)field(ts, L->ts_interp) != main_interp)
		return false;
	if (L->ts_status < 0)
		return true;
	memcpy(&status, ts + L->ts_status, sizeof(status));
	return (status & (PYLAYOUT_TS_BOUND | PYLAYOUT_TS_UNBOUND | PYLAYOUT_TS_CLEARED |
			  PYLAYOUT_TS_FINALIZED)) == PYLAYOUT_TS_BOUND;
}

/* By the thread list of the main interpreter (3.15+). */
static uintptr_t by_list(struct pyagent_thread *t, struct pymem *m, uintptr_t main_interp,
			 uint8_t *ts, int *why)
{
	const struct pylayout *L = &pyagent_rt.L;
	uintptr_t s = t->tstate, found = 0;
	int n;

	if (s && pymem_read(m, ts, s, pyagent_rt.ts_len, pyasync_ts_extra(), 1) == 0 &&
	    ours(L, ts, main_interp)) {
		*why = 0;
		return s;
	}
	t->tstate = 0;
	if (pymem_read(m, &s, main_interp + (uintptr_t)L->is_threads_head, sizeof(s), 0, 0) < 0) {
		*why = RAW_PY_NOTE_READ_FAILED;
		return 0;
	}
	/* a thread with states of its own making (PyThreadState_New()) may have several: the
	   one PyGILState bound to it is the one it runs Python in */
	for (n = 0; s && n < MAX_THREADS; n++) {
		uint32_t status = 0;

		if (pymem_read(m, ts, s, pyagent_rt.ts_len, 0, 0) < 0) {
			*why = RAW_PY_NOTE_READ_FAILED;
			return 0;
		}
		if (ours(L, ts, main_interp)) {
			if (L->ts_status >= 0)
				memcpy(&status, ts + L->ts_status, sizeof(status));
			if (!found || (status & PYLAYOUT_TS_GILSTATE))
				found = s;
			if (status & PYLAYOUT_TS_GILSTATE)
				break;
		}
		s = (uintptr_t)field(ts, L->ts_next);
	}
	if (found && (found == s || pymem_read(m, ts, found, pyagent_rt.ts_len, 0, 0) == 0)) {
		t->tstate = found;
		*why = 0;
		return found;
	}
	*why = RAW_PY_NOTE_NO_THREAD_STATE;
	return 0;
}

uintptr_t pytstate_find(struct pyagent_thread *t, struct pymem *m, uint8_t *ts, int *why)
{
	const struct pylayout *L = &pyagent_rt.L;
	uint8_t *rt = t->runtime;
	uint32_t inited, key;
	uintptr_t tstate, head, main_interp;
	int32_t lo = (int32_t)pyagent_rt.rt_lo;

	*why = RAW_PY_NOTE_READ_FAILED;
	if (pyagent_rt.rt_len > sizeof(t->runtime) ||
	    pymem_read(m, rt, pyagent_rt.runtime + pyagent_rt.rt_lo, pyagent_rt.rt_len, 0, 0) < 0)
		return 0;
	head = (uintptr_t)field(rt, L->rt_interp_head - lo);
	main_interp = (uintptr_t)field(rt, L->rt_interp_main - lo);
	/* No interpreter (not yet made, or finalized; or a program that links libpython and never
	   starts it, as perf does): no Python frame is missed, so no note either */
	*why = 0;
	if (!main_interp)
		return 0;
	*why = RAW_PY_NOTE_NO_THREAD_STATE;
	if (L->rt_autotss < 0) {
		/* new interpreters go to the head of the list: head != main means sub-interpreters
		 */
		if (head != main_interp) {
			*why = RAW_PY_NOTE_SUBINTERPRETER;
			return 0;
		}
		/* a walk of the thread's own frames: its attached state, if it has one */
		tstate = m->own ? pykey_tstate() : 0;
		if (tstate && pymem_read(m, ts, tstate, pyagent_rt.ts_len, 0, 0) == 0 &&
		    ours(L, ts, main_interp)) {
			*why = 0;
			return tstate;
		}
		m->own = false;
		return by_list(t, m, main_interp, ts, why);
	}
	memcpy(&inited, rt + (L->rt_autotss - lo), sizeof(inited));
	memcpy(&key, rt + (L->rt_autotss - lo) + L->tss_key, sizeof(key));
	if (!inited)
		return 0;
	tstate = (uintptr_t)pthread_getspecific((pthread_key_t)key);
	if (!tstate)
		return 0;
	if (pymem_read(m, ts, tstate, pyagent_rt.ts_len, pyasync_ts_extra(), 1) < 0) {
		*why = RAW_PY_NOTE_READ_FAILED;
		return 0;
	}
	if ((uintptr_t)field(ts, L->ts_thread_id) != (uintptr_t)pthread_self())
		return 0;
	if (head != main_interp || (uintptr_t)field(ts, L->ts_interp) != main_interp) {
		*why = RAW_PY_NOTE_SUBINTERPRETER;
		return 0;
	}
	*why = 0;
	return tstate;
}
