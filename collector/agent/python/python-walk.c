/* SPDX-License-Identifier: MIT */
/* The walk, in the signal handler: the interrupted thread's Python frames, innermost first. */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include "collector/agent/python/python-private.h"
#include "common/hash.h"

/*
 * A sample costs what its system calls cost (~1.2 us each, python-read.c), so the walk makes
 * a fixed handful whatever the depth:
 *   1. the thread state (python-tstate.c): the span of _PyRuntime we need, then the state;
 *   2. the frames, from the innermost along f_back / previous. 3.11+ frames live in the
 *      thread's frame stack, one contiguous block per chunk, callers below callees: the first
 *      frame's read copies the t->window bytes below it too (as much as the last sample's
 *      frames spanned), so the frames after it are copies already. The frames a
 *      _PyEval_EvalFrameDefault call keeps on the C stack (3.12+) are copied with a few KiB
 *      above them, where the next outer one is; a frame outside every run copied so far
 *      (a generator's, in its object; 3.10's, heap objects) starts a run of its own, with a
 *      few KiB below it where its neighbours often are;
 *   3. the code objects of all frames, in one call (an iovec each), with the name strings of
 *      those described before (3.10/3.11 code identity, python-codes.c);
 *   4. the names of code objects not seen before, in one more.
 * When the thread holds the GIL, step 3 also copies the collector's flag (the interpreter's
 * gc.collecting): no call of its own. A sample taken while it is set marks its innermost
 * frame RAW_PY_FRAME_GC, which pfinalize shows as a "[gc]" frame under that line.
 * Every copy is a guarded read: a freed or torn frame gives bytes that fail the checks below
 * or a read that fails, never a fault.
 */

#define C_STACK_SPAN (8ul << 20) /* above our own stack pointer: the interrupted C stack */
#define C_STACK_READ 4096        /* bytes copied above an entry frame on the C stack */
#define WINDOW_FIRST 4096        /* frame stack copied below the first frame of a thread */
#define WINDOW_SLACK 1024        /* copied beyond what the last walk used */

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

/* On the C stack this handler runs on (above our own frame): the interrupted thread's. */
static bool on_c_stack(uintptr_t a)
{
	uintptr_t sp = (uintptr_t)__builtin_frame_address(0);

	return a > sp && a - sp < C_STACK_SPAN;
}

/*
 * 3.12+: whether the frame copied in fr is an entry frame of _PyEval_EvalFrameDefault (its
 * owner says so), or has their code: a sample can land while such a frame, on the C stack,
 * is being set up, or read one left there by a call that has returned, whose owner byte
 * another frame's data has replaced. Their code (the interpreter's trampoline) is never a
 * Python function's.
 */
static bool is_shim(const uint8_t *fr, uintptr_t tag)
{
	const struct pylayout *L = &pyagent_rt.L;
	uintptr_t code = (uintptr_t)field(fr, L->fr_code) & tag;
	uintptr_t shim = atomic_load_explicit(&pyagent_rt.shim_code, memory_order_relaxed);

	if ((uint8_t)fr[L->fr_owner] >= PYLAYOUT_OWNER_CSTACK) {
		if (!shim && code)
			atomic_store_explicit(&pyagent_rt.shim_code, code, memory_order_relaxed);
		return true;
	}
	return shim && code == shim;
}

/* The innermost frame of the state copied in ts; 0 with *why set when it cannot be had. */
static uintptr_t first_frame(struct pyagent_thread *t, const uint8_t *ts, int *why)
{
	const struct pylayout *L = &pyagent_rt.L;
	uintptr_t cframe, frame = 0;

	if (L->ts_frame >= 0)
		return (uintptr_t)field(ts, L->ts_frame);
	/* 3.11, 3.12: tstate->cframe->current_frame; the cframe lives on the C stack, beside the
	   entry frames of 3.12 */
	cframe = (uintptr_t)field(ts, L->ts_cframe);
	if (cframe && pymem_read(&t->mem, &frame, cframe + (uintptr_t)L->cf_current_frame,
				 sizeof(frame), C_STACK_READ, 1) < 0)
		*why = RAW_PY_NOTE_READ_FAILED;
	return frame;
}

/*
 * Step 2: follow the frames from frame, filling t->pending (at most max). Returns how many;
 * *cut when the walk stopped at a frame it could not read or at max.
 */
static int walk_frames(struct pyagent_thread *t, uintptr_t frame, int max, bool *cut)
{
	const struct pylayout *L = &pyagent_rt.L;
	uintptr_t first = frame, lowest = frame, last = 0, tag = ~(uintptr_t)L->fr_code_tag;
	uint8_t fr[256];
	int n = 0, depth;

	for (depth = 0; frame && depth < PYAGENT_MAX_FRAMES; depth++) {
		struct pyagent_pending *p;
		size_t extra = 0;
		int dir = -1;

		if (n >= max) {
			*cut = true;
			break;
		}
		if (depth == 0)
			extra = t->window;
		else if (on_c_stack(frame))
			extra = C_STACK_READ, dir = 1;
		else
			extra = WINDOW_FIRST;
		if (pymem_read(&t->mem, fr, frame, (size_t)L->fr_size, extra, dir) < 0) {
			*cut = true;
			break;
		}
		if (L->minor == 10 && field(fr, PYLAYOUT_OB_TYPE) != pyagent_rt.frame_type) {
			*cut = true;
			break;
		}
		if (frame < lowest && first - frame < PYAGENT_WINDOW)
			lowest = frame;
		if (L->minor >= 12 && is_shim(fr, tag)) {
			/* the frame a _PyEval_EvalFrameDefault call pushed: the frame inside it was
			   the first that call ran */
			if (n > 0)
				t->pending[n - 1].flags |= RAW_PY_FRAME_ENTRY;
			frame = (uintptr_t)field(fr, L->fr_previous);
			continue;
		}
		p = &t->pending[n++];
		last = frame;
		p->code = (uintptr_t)field(fr, L->fr_code) & tag;
		p->flags = 0;
		p->frame = frame;
		p->callee = 0;
		p->sp = L->fr_stackpointer >= 0 ? (uintptr_t)field(fr, L->fr_stackpointer) : 0;
		if (L->minor == 10) {
			int32_t lasti;

			memcpy(&lasti, fr + L->fr_instr, sizeof(lasti));
			p->instr = (uintptr_t)(intptr_t)lasti;
			p->flags = RAW_PY_FRAME_ENTRY; /* every 3.10 frame is its own eval call */
		} else {
			p->instr = (uintptr_t)field(fr, L->fr_instr);
			if (L->minor == 11 && fr[L->fr_is_entry])
				p->flags = RAW_PY_FRAME_ENTRY;
		}
		frame = (uintptr_t)field(fr, L->fr_previous);
	}
	if (frame && depth >= PYAGENT_MAX_FRAMES)
		*cut = true;
	/* the thread's outermost frame: where its Thread object is found (python-thread.c) */
	if (!frame && last)
		t->bottom = last;
	/* how much of the frame stack the next sample copies with its first frame */
	{
		uint64_t span = first - lowest + WINDOW_SLACK;

		t->window = (uint32_t)(span < WINDOW_FIRST     ? WINDOW_FIRST
				       : span > PYAGENT_WINDOW ? PYAGENT_WINDOW
							       : span);
	}
	return n;
}

/*
 * Step 3 and 4: the code objects of the pending frames, and their names where identity needs
 * them (3.10/3.11). A code object described before has its name string read in the same call,
 * at the address it had then; only a name that moved (a new object at that address) or a code
 * object not seen before costs the second call. Fills req[i] (code i) and req[PYAGENT_MEMO + i]
 * (its name): ok says what was read.
 */
static unsigned read_codes(struct pyagent_thread *t, int n, struct pyread_req *req,
			   struct pyread_req *extra, unsigned nextra)
{
	const struct pylayout *L = &pyagent_rt.L;
	size_t name_len = pycodes_name_bytes();
	uint8_t of[PYAGENT_MEMO], name_ok[PYAGENT_MEMO];
	unsigned ncodes = 0, nreq, nmiss = 0, i, k;
	int j;

	for (j = 0; j < n; j++) {
		uintptr_t a = t->pending[j].code;

		for (k = 0; k < ncodes && t->code_addr[k] != a; k++)
			;
		if (k == ncodes && ncodes < PYAGENT_MEMO)
			t->code_addr[ncodes++] = a;
		t->pending[j].slot = k; /* == PYAGENT_MEMO: too many codes, read alone */
	}
	for (i = 0; i < ncodes; i++) {
		req[i].addr = t->code_addr[i];
		req[i].len = (size_t)L->co_size;
		req[i].dst = t->code[i];
		name_ok[i] = 0;
	}
	nreq = ncodes;
	for (i = 0; name_len && i < ncodes; i++) {
		t->name_at[i] = pycodes_cached_name(t, t->code_addr[i]);
		if (!t->name_at[i])
			continue;
		req[nreq] = (struct pyread_req){ t->name_at[i], name_len, t->names[i], false };
		of[nreq++ - ncodes] = (uint8_t)i;
	}
	/* the callees' copies, then the collector's flag last: a failure stops a batch, and so
	   costs the others nothing */
	memcpy(req + nreq, extra, nextra * sizeof(*extra));
	pymem_batch(&t->mem, req, nreq + nextra);
	for (k = 0; k < nextra; k++)
		extra[k].ok = req[nreq + k].ok;
	for (k = ncodes; k < nreq; k++)
		name_ok[of[k - ncodes]] = req[k].ok;
	for (i = 0; i < ncodes; i++)
		if (req[i].ok && field(t->code[i], PYLAYOUT_OB_TYPE) != pyagent_rt.code_type)
			req[i].ok = false;
	if (!name_len)
		return ncodes;
	/* the names not read yet, or read where the name no longer is */
	for (i = 0; i < ncodes; i++) {
		uintptr_t real = req[i].ok ? pycodes_name_addr(t->code[i]) : 0;

		if (real && real == t->name_at[i] && name_ok[i])
			continue;
		name_ok[i] = 0;
		if (!real)
			continue;
		req[PYAGENT_MEMO + nmiss] =
			(struct pyread_req){ real, name_len, t->names[i], false };
		of[nmiss++] = (uint8_t)i;
	}
	pymem_batch(&t->mem, req + PYAGENT_MEMO, nmiss);
	for (k = 0; k < nmiss; k++)
		name_ok[of[k]] = req[PYAGENT_MEMO + k].ok;
	for (i = 0; i < ncodes; i++)
		req[PYAGENT_MEMO + i].ok = name_ok[i];
	return ncodes;
}

/* Byte offset of the instruction the frame p runs; *bad when outside its code. */
static uint32_t frame_offset(const struct pylayout *L, const struct pyagent_pending *p,
			     const uint8_t *co, bool *bad)
{
	int64_t off, size;

	if (L->minor == 10) {
		off = (int64_t)(intptr_t)p->instr * 2;
		size = INT32_MAX;
	} else {
		off = (int64_t)(p->instr - (p->code + (uintptr_t)L->co_code));
		size = (int64_t)field(co, L->var_size) * 2;
	}
	/* a frame about to start points one unit before its code: that is its first line */
	if (off == -2)
		off = 0;
	*bad = off < 0 || off >= size;
	return *bad ? 0 : (uint32_t)off;
}

/*
 * Where the collector's flag is, when the thread whose state (at tstate) is copied in ts
 * holds the GIL; 0 when it does not, or when the layout does not say. The flag is the
 * interpreter's, set by whichever thread collects, which holds the GIL meanwhile: another
 * thread runs then only without it (in a C call that released it), and must not be shown in
 * the collector. 3.10, 3.11 name the holder in _PyRuntime (gilstate.tstate_current, in the
 * span of it copied already); 3.12+ mark the holder's own state active.
 */
static uintptr_t gc_flag_addr(const struct pyagent_thread *t, const uint8_t *ts, uintptr_t tstate)
{
	const struct pylayout *L = &pyagent_rt.L;
	int32_t lo = (int32_t)pyagent_rt.rt_lo;
	uintptr_t interp = (uintptr_t)field(t->runtime, L->rt_interp_main - lo);
	uint32_t status;

	if (L->is_gc_collecting < 0 || !interp)
		return 0;
	if (L->rt_tstate_current >= 0)
		return (uintptr_t)field(t->runtime, L->rt_tstate_current - lo) == tstate
			       ? interp + (uintptr_t)L->is_gc_collecting
			       : 0;
	if (L->ts_active_shift < 0 || L->ts_status < 0)
		return 0;
	memcpy(&status, ts + L->ts_status, sizeof(status));
	return (status >> L->ts_active_shift) & 1 ? interp + (uintptr_t)L->is_gc_collecting : 0;
}

static int walk(struct pyagent_thread *t, struct raw_writer *w, uintptr_t tstate, uintptr_t frame,
		struct raw_py_frame *out, int max, bool *cut, uintptr_t gc_at)
{
	const struct pylayout *L = &pyagent_rt.L;
	struct pyread_req *req = t->req, *extra = t->callees.req;
	int32_t collecting = 0;
	unsigned nextra;
	uint64_t ids[PYAGENT_MEMO];
	uint8_t alone[PYAGENT_CODE_BYTES];
	unsigned ncodes, i;
	int npend, n = 0, j;

	if ((size_t)L->fr_size > 256 || (size_t)L->co_size > PYAGENT_CODE_BYTES)
		return note(t, RAW_PY_NOTE_UNKNOWN_VERSION);
	npend = walk_frames(t, frame, max, cut);
	/* the frames and the running task were the last reads made in place (own walks) */
	pyasync_sample(t, w, tstate);
	t->mem.own = false;
	nextra = pycallee_plan(t, npend, extra);
	if (npend && gc_at)
		extra[nextra++] =
			(struct pyread_req){ gc_at, sizeof(collecting), &collecting, false };
	ncodes = read_codes(t, npend, req, extra, nextra);
	pycallee_finish(t, w, extra);
	for (i = 0; i < ncodes; i++)
		ids[i] = 0;
	for (j = 0; j < npend; j++) {
		const struct pyagent_pending *p = &t->pending[j];
		const uint8_t *co = alone, *name = NULL;
		uint64_t id;
		bool bad, ok;

		if (p->slot < ncodes) {
			co = t->code[p->slot];
			ok = req[p->slot].ok;
			if (ok && pycodes_name_bytes())
				name = req[PYAGENT_MEMO + p->slot].ok ? t->names[p->slot] : NULL;
		} else {
			ok = pymem_read(&t->mem, alone, p->code, (size_t)L->co_size, 0, 0) == 0 &&
			     field(alone, PYLAYOUT_OB_TYPE) == pyagent_rt.code_type;
		}
		if (!ok) {
			/* 3.13+ run a few frames whose f_executable is not code: leave them out */
			if (L->minor >= 13 && p->code) {
				if (n > 0)
					out[n - 1].flags |= p->flags & RAW_PY_FRAME_ENTRY;
				continue;
			}
			*cut = true;
			break;
		}
		if (p->slot < ncodes && ids[p->slot])
			id = ids[p->slot];
		else
			id = pycodes_lookup(t, w, p->code, co, name, t->mem.pid);
		if (p->slot < ncodes)
			ids[p->slot] = id;
		out[n].code_id = id;
		out[n].offset = frame_offset(L, p, co, &bad);
		out[n].flags = p->flags | (bad ? RAW_PY_FRAME_BAD_OFFSET : 0);
		out[n].callee = p->callee;
		if (p->callee)
			out[n].flags |= RAW_PY_FRAME_CALLEE;
		n++;
		/* the running task's name, outward of its coroutine (python-asyncio.c) */
		if (t->task.frame && p->frame == t->task.frame && n < max)
			out[n++] = (struct raw_py_frame){ .code_id = t->task.id };
	}
	if (*cut && n == 0)
		return note(t, RAW_PY_NOTE_READ_FAILED);
	if (n > 0 && npend && gc_at && extra[nextra - 1].ok && collecting)
		out[0].flags |= RAW_PY_FRAME_GC;
	return n;
}

int pyagent_capture(struct pyagent_thread *t, struct raw_writer *w, struct raw_py_frame *out,
		    int max, bool *truncated)
{
	return pyagent_capture_pid(t, w, out, max, truncated, (int)getpid(), false);
}

int pyagent_capture_pid(struct pyagent_thread *t, struct raw_writer *w, struct raw_py_frame *out,
			int max, bool *truncated, int pid, bool own)
{
	int state = __atomic_load_n(&pyagent_rt.state, __ATOMIC_ACQUIRE);
	int errsv = errno, why = 0, n;
	uint8_t ts[512];
	uintptr_t frame, tstate;
	bool cut = false;

	if (truncated)
		*truncated = false;
	t->calls = 0;
	if (state == 0)
		return 0;
	if (state != PYAGENT_FOUND)
		return note(t, (enum raw_py_note_kind)pyagent_rt.note);
	if (pyagent_rt.ts_len > sizeof(ts))
		return note(t, RAW_PY_NOTE_UNKNOWN_VERSION);
	pymem_reset(&t->mem, pid);
	/* in place: the thread's own state (by PyGILState's key, or the interpreter's accessor),
	   not another's from the list (pytstate_find()) */
	t->mem.own = own;
	tstate = pytstate_find(t, &t->mem, ts, &why);
	frame = tstate ? first_frame(t, ts, &why) : 0;
	if (!frame) {
		t->mem.own = false;
		t->calls = t->mem.calls;
		errno = errsv;
		return why ? note(t, (enum raw_py_note_kind)why) : 0;
	}
	n = walk(t, w, tstate, frame, out, max, &cut, gc_flag_addr(t, ts, tstate));
	t->mem.own = false;
	if (cut && truncated)
		*truncated = true;
	t->calls = t->mem.calls;
	errno = errsv;
	return n;
}

int pyagent_stack_key(struct pyagent_thread *t, uint64_t *key)
{
	int errsv = errno, why = 0, n, i;
	uint8_t ts[512];
	uintptr_t frame;
	bool cut = false;
	uint64_t h = 0x9e3779b97f4a7c15ull;

	if (__atomic_load_n(&pyagent_rt.state, __ATOMIC_ACQUIRE) != PYAGENT_FOUND ||
	    pyagent_rt.ts_len > sizeof(ts))
		return -1;
	pymem_reset(&t->mem, (int)getpid());
	frame = pytstate_find(t, &t->mem, ts, &why) ? first_frame(t, ts, &why) : 0;
	n = frame ? walk_frames(t, frame, PYAGENT_MAX_FRAMES, &cut) : 0;
	errno = errsv;
	if (n <= 0)
		return -1;
	/* The code objects' addresses and instructions: no code object is read. */
	for (i = 0; i < n; i++)
		h = hash_combine(hash_combine(h, t->pending[i].code), t->pending[i].instr);
	*key = h;
	return 0;
}

int pyagent_thread_finish(struct pyagent_thread *t, struct raw_writer *w, int64_t time_ns)
{
	static const char *const detail[] = {
		[RAW_PY_NOTE_NO_THREAD_STATE] = "thread has no python thread state",
		[RAW_PY_NOTE_UNKNOWN_VERSION] = "python version not supported",
		[RAW_PY_NOTE_SUBINTERPRETER] = "sub-interpreters are not walked",
		[RAW_PY_NOTE_READ_FAILED] = "python frame could not be read",
		[RAW_PY_NOTE_NO_READER] = "process_vm_readv not permitted",
		[RAW_PY_NOTE_FREE_THREADED] = "free-threaded python is sampled as native code",
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
	t->tstate = 0;
	t->bottom = 0;
	t->window = WINDOW_FIRST;
	t->calls = 0;
	memset(&t->task, 0, sizeof(t->task));
	memset(&t->callees, 0, sizeof(t->callees));
	t->callees.next_id = 1;
}

int pyagent_code_frames(struct pyagent_thread *t, struct raw_writer *w, const uintptr_t *code,
			const uint32_t *offset, int n, struct raw_py_frame *out)
{
	const struct pylayout *L = &pyagent_rt.L;
	size_t name_len = pycodes_name_bytes();
	int pid = (int)getpid(), i, k = 0;

	if (pyagent_rt.state != PYAGENT_FOUND || (size_t)L->co_size > PYAGENT_CODE_BYTES)
		return -1;
	for (i = 0; i < n; i++) {
		uint8_t *co = t->code[0], *name = NULL;
		uint64_t id;

		/* Named by the program: read as the walk reads one, checked the same. */
		if (pyread(pid, co, code[i], (size_t)L->co_size) ||
		    field(co, PYLAYOUT_OB_TYPE) != pyagent_rt.code_type)
			continue;
		if (name_len && !pyread(pid, t->names[0], pycodes_name_addr(co), name_len))
			name = t->names[0];
		id = pycodes_lookup(t, w, code[i], co, name, pid);
		if (!id)
			continue;
		out[k].code_id = id;
		out[k].offset = offset[i];
		out[k].flags = 0;
		k++;
	}
	return k;
}
