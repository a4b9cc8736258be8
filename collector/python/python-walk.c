/* SPDX-License-Identifier: MIT */
/* The walk, in the signal handler: the interrupted thread's Python frames, innermost first. */
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>
#include "collector/python/python-private.h"

/*
 * Which thread state: PyGILState keeps each thread's own PyThreadState in a pthread key
 * (_PyRuntime's autoTSSkey, every version 3.10-3.13), so pthread_getspecific() gives the
 * interrupted thread's state whether or not it holds the GIL. pthread_getspecific() takes no
 * lock and allocates nothing (glibc reads the thread's key block), so it is safe here; it is
 * the same call PyGILState_GetThisThreadState() makes, without running interpreter code.
 * tstate_current (3.10, 3.11) would only be right for the thread holding the GIL, and 3.12+
 * keeps the current state in a static TLS variable we cannot reach from a shared library.
 * The state found must name this thread (thread_id == pthread_self()) and the main
 * interpreter; sub-interpreters make a note (their threads' key holds the main state).
 */

/* Per-sample memo: a recursion reads each code object once. */
struct memo {
	uintptr_t addr[PYAGENT_MEMO];
	uint64_t id[PYAGENT_MEMO];
	unsigned n;
};

static uint64_t field(const uint8_t *obj, int32_t off)
{
	uint64_t v;

	memcpy(&v, obj + off, sizeof(v));
	return v;
}

static int note(struct pyagent_thread *t, enum raw_py_note_kind kind)
{
	t->notes[kind]++;
	return -(int)kind;
}

/* The interrupted thread's state, or 0 with *why set. */
static uintptr_t thread_state(const struct pylayout *L, int pid, uintptr_t *interp, int *why)
{
	uint8_t rt[4096], ts[512];
	uint32_t inited, key;
	uintptr_t tstate, head, main_interp;

	if (pyagent_rt.rt_len > sizeof(rt) || pyagent_rt.ts_len > sizeof(ts) ||
	    pyread(pid, rt, pyagent_rt.runtime + pyagent_rt.rt_lo, pyagent_rt.rt_len) < 0) {
		*why = RAW_PY_NOTE_READ_FAILED;
		return 0;
	}
	memcpy(&inited, rt + (L->rt_autotss - (int32_t)pyagent_rt.rt_lo), sizeof(inited));
	memcpy(&key, rt + (L->rt_autotss - (int32_t)pyagent_rt.rt_lo) + L->tss_key, sizeof(key));
	head = (uintptr_t)field(rt, L->rt_interp_head - (int32_t)pyagent_rt.rt_lo);
	main_interp = (uintptr_t)field(rt, L->rt_interp_main - (int32_t)pyagent_rt.rt_lo);
	*why = RAW_PY_NOTE_NO_THREAD_STATE;
	if (!inited || !main_interp)
		return 0;
	tstate = (uintptr_t)pthread_getspecific((pthread_key_t)key);
	if (!tstate)
		return 0;
	if (pyread(pid, ts, tstate, pyagent_rt.ts_len) < 0) {
		*why = RAW_PY_NOTE_READ_FAILED;
		return 0;
	}
	if ((uintptr_t)field(ts, L->ts_thread_id) != (uintptr_t)pthread_self())
		return 0;
	/* new interpreters go to the head of the list: head != main means sub-interpreters */
	if (head != main_interp || (uintptr_t)field(ts, L->ts_interp) != main_interp) {
		*why = RAW_PY_NOTE_SUBINTERPRETER;
		return 0;
	}
	*interp = main_interp;
	if (L->ts_frame >= 0)
		return (uintptr_t)field(ts, L->ts_frame);
	/* 3.11, 3.12: tstate->cframe->current_frame */
	{
		uintptr_t cframe = (uintptr_t)field(ts, L->ts_cframe), frame = 0;

		if (cframe && pyread(pid, &frame, cframe + (uintptr_t)L->cf_current_frame,
				     sizeof(frame)) < 0) {
			*why = RAW_PY_NOTE_READ_FAILED;
			return 0;
		}
		*why = 0;
		return frame;
	}
}

static uint64_t code_id(struct pyagent_thread *t, struct raw_writer *w, struct memo *m,
			uintptr_t addr, const uint8_t *code, int pid)
{
	uint64_t id;
	unsigned i;

	for (i = 0; i < m->n; i++)
		if (m->addr[i] == addr)
			return m->id[i];
	id = pycodes_lookup(t, w, addr, code, pid);
	if (id && m->n < PYAGENT_MEMO) {
		m->addr[m->n] = addr;
		m->id[m->n++] = id;
	}
	return id;
}

/* Byte offset of the instruction the frame runs, from its copy fr; *bad when outside. */
static uint32_t frame_offset(const struct pylayout *L, const uint8_t *fr, uintptr_t code,
			     const uint8_t *co, bool *bad)
{
	int64_t off, size;

	if (L->minor == 10) {
		int32_t lasti;

		memcpy(&lasti, fr + L->fr_instr, sizeof(lasti));
		off = (int64_t)lasti * 2;
		size = INT32_MAX;
	} else {
		off = (int64_t)(field(fr, L->fr_instr) - (code + (uintptr_t)L->co_code));
		size = (int64_t)field(co, L->var_size) * 2;
	}
	/* a frame about to start points one unit before its code: that is its first line */
	if (off == -2)
		off = 0;
	*bad = off < 0 || off >= size;
	return *bad ? 0 : (uint32_t)off;
}

static int walk(struct pyagent_thread *t, struct raw_writer *w, uintptr_t frame, int pid,
		struct raw_py_frame *out, int max, bool *truncated)
{
	const struct pylayout *L = &pyagent_rt.L;
	uint8_t fr[256], co[512];
	struct memo m = { .n = 0 };
	int n = 0, depth;

	if ((size_t)L->fr_size > sizeof(fr) || (size_t)L->co_size > sizeof(co))
		return note(t, RAW_PY_NOTE_UNKNOWN_VERSION);
	for (depth = 0; frame && depth < PYAGENT_MAX_FRAMES; depth++) {
		uintptr_t code;
		uint64_t id;
		bool bad;

		if (n >= max) {
			*truncated = true;
			break;
		}
		if (pyread(pid, fr, frame, (size_t)L->fr_size) < 0) {
			*truncated = true;
			break;
		}
		if (L->minor == 10 && field(fr, PYLAYOUT_OB_TYPE) != pyagent_rt.frame_type) {
			*truncated = true;
			break;
		}
		if (L->minor >= 12 && fr[L->fr_owner] == PYLAYOUT_OWNER_CSTACK) {
			/* the shim frame of a _PyEval_EvalFrameDefault call: the frame inside it
			   was the first that call ran */
			if (n > 0)
				out[n - 1].flags |= RAW_PY_FRAME_ENTRY;
			frame = (uintptr_t)field(fr, L->fr_previous);
			continue;
		}
		code = (uintptr_t)field(fr, L->fr_code);
		if (pyread(pid, co, code, (size_t)L->co_size) < 0 ||
		    field(co, PYLAYOUT_OB_TYPE) != pyagent_rt.code_type) {
			/* 3.13 runs a few frames whose f_executable is not code: skip them */
			if (L->minor >= 13 && code) {
				frame = (uintptr_t)field(fr, L->fr_previous);
				continue;
			}
			*truncated = true;
			break;
		}
		id = code_id(t, w, &m, code, co, pid);
		out[n].code_id = id;
		out[n].offset = frame_offset(L, fr, code, co, &bad);
		out[n].flags = bad ? RAW_PY_FRAME_BAD_OFFSET : 0;
		/* 3.10: every frame is its own eval call; 3.11: the frame says so */
		if (L->minor == 10 || (L->minor == 11 && fr[L->fr_is_entry]))
			out[n].flags |= RAW_PY_FRAME_ENTRY;
		n++;
		frame = (uintptr_t)field(fr, L->fr_previous);
	}
	if (frame && depth >= PYAGENT_MAX_FRAMES)
		*truncated = true;
	if (*truncated && n == 0)
		return note(t, RAW_PY_NOTE_READ_FAILED);
	return n;
}

int pyagent_capture(struct pyagent_thread *t, struct raw_writer *w, struct raw_py_frame *out,
		    int max, bool *truncated)
{
	int state = __atomic_load_n(&pyagent_rt.state, __ATOMIC_ACQUIRE);
	int errsv = errno, pid, why = 0, n;
	uintptr_t frame, interp = 0;
	bool cut = false;

	if (truncated)
		*truncated = false;
	if (state == 0)
		return 0;
	if (state != PYAGENT_FOUND)
		return note(t, RAW_PY_NOTE_UNKNOWN_VERSION);
	pid = (int)getpid();
	frame = thread_state(&pyagent_rt.L, pid, &interp, &why);
	if (!frame) {
		errno = errsv;
		return why ? note(t, (enum raw_py_note_kind)why) : 0;
	}
	n = walk(t, w, frame, pid, out, max, &cut);
	if (cut && truncated)
		*truncated = true;
	errno = errsv;
	return n;
}

int pyagent_thread_finish(struct pyagent_thread *t, struct raw_writer *w, int64_t time_ns)
{
	static const char *const detail[] = {
		[RAW_PY_NOTE_NO_THREAD_STATE] = "thread has no python thread state",
		[RAW_PY_NOTE_UNKNOWN_VERSION] = "python version not supported",
		[RAW_PY_NOTE_SUBINTERPRETER] = "sub-interpreters are not walked",
		[RAW_PY_NOTE_READ_FAILED] = "python frame could not be read",
		[RAW_PY_NOTE_NO_READER] = "process_vm_readv not permitted",
	};
	int kind, ret = 0;

	for (kind = 1; kind <= RAW_PY_NOTE_KIND_MAX; kind++) {
		struct raw_py_note nt = { .time_ns = time_ns, .kind = (uint32_t)kind };
		int r;

		if (!t->notes[kind])
			continue;
		nt.count = t->notes[kind];
		nt.detail.s = detail[kind];
		nt.detail.len = (uint32_t)strlen(detail[kind]);
		r = raw_py_write_note(w, &nt, t->scratch, sizeof(t->scratch));
		if (r < 0 && !ret)
			ret = r;
	}
	return ret;
}

void pyagent_thread_init(struct pyagent_thread *t)
{
	memset(t->notes, 0, sizeof(t->notes));
	memset(t->slots, 0, sizeof(t->slots));
	t->next_id = 1;
	t->codes_written = 0;
	t->codes_failed = 0;
}
