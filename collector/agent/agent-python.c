/* SPDX-License-Identifier: MIT */
/* The agent's Python support: interpreter discovery, per-thread walkers, mixed stack records. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "collector/agent/agent-private.h"
#include "common/hash.h"

/*
 * pyagent (collector/agent/python/) does the walking; this file ties it to the agent's threads.
 * Discovery runs with every module scan (start, fork, dlopen): the first module that holds
 * _PyRuntime wins. Each live thread then gets a struct agent_py, allocated outside the
 * handler; the handler only reads the pointer. A stack with Python frames is written as one
 * RAW_REC_PY_STACK and deduplicated, like native stacks, in the thread's stack table under a
 * key that holds the native ips, a separator no code address can take, then two words per
 * Python frame.
 */

/*
 * Thread names in Python (collector/agent/python/python-thread.c) are read outside the
 * handler, which only notes each thread's outermost Python frame: by the control thread
 * every poll (a name given or changed later shows within a poll) and at the thread's end.
 * One lock serializes those reads (they share pyagent's caches) and each thread's py_name.
 */
static pthread_mutex_t names_lock = PTHREAD_MUTEX_INITIALIZER;

/* | stack flags << 16 | number of native ips: above every user-space code address */
#define PY_KEY_SEPARATOR 0xfffffffe00000000ull

/* Give t its Python state if it has none; false when memory is short. */
static bool py_attach(struct agent_thread *t)
{
	struct agent_py *py, *expected = NULL;

	if (atomic_load(&t->py))
		return true;
	py = calloc(1, sizeof(*py));
	if (!py)
		return false;
	pyagent_thread_init(&py->pt);
	/* The thread itself and a module scan in another thread may both get here. */
	if (!atomic_compare_exchange_strong(&t->py, &expected, py))
		free(py);
	return true;
}

/* t starts a new stream: what its name was read from belongs to the thread before. */
static void name_forget(struct agent_thread *t)
{
	pthread_mutex_lock(&names_lock);
	atomic_store(&t->py_bottom, 0);
	atomic_store(&t->py_hint_frame, 0);
	memset(&t->py_tname, 0, sizeof(t->py_tname));
	t->py_name[0] = '\0';
	pthread_mutex_unlock(&names_lock);
}

/*
 * Read t's name in Python (names_lock held) into buf: true when it is new or changed (then
 * also kept in t->py_name). The main thread's Thread is threading's _main_thread.
 */
static bool name_read(struct agent_thread *t, char *buf, size_t size)
{
	uintptr_t frame = atomic_load_explicit(&t->py_bottom, memory_order_relaxed);
	uintptr_t hint = atomic_load_explicit(&t->py_hint_frame, memory_order_acquire);
	int r;

	/* The handler found the Thread of this frame already: taken, the frame may be gone. */
	if (frame && hint == frame && t->py_tname.frame != frame) {
		struct pyagent_tname h = t->py_hint;

		atomic_thread_fence(memory_order_acquire);
		if (atomic_load_explicit(&t->py_hint_frame, memory_order_relaxed) == hint)
			t->py_tname = h;
	}
	if (t->tid == agent.pid)
		r = pyagent_main_thread_name(buf, size);
	else
		r = pyagent_thread_name(&t->py_tname, frame, buf, size);
	if (r < 0 || strcmp(buf, t->py_name) == 0)
		return false;
	snprintf(t->py_name, sizeof(t->py_name), "%s", buf);
	return true;
}

void agent_python_fork_child(void)
{
	pthread_mutex_init(&names_lock, NULL);
}

void agent_python_names(void)
{
	static uint8_t scratch[RAW_PY_THREAD_NAME_SCRATCH];
	char buf[sizeof(((struct agent_thread *)0)->py_name)];
	size_t i, n;

	if (!pyagent_active())
		return;
	pthread_mutex_lock(&names_lock);
	n = atomic_load(&agent.nthreads);
	for (i = 0; i < n; i++) {
		struct agent_thread *t = agent.threads[i];
		struct raw_py_thread_name tn;
		struct raw_writer *w;
		sigset_t old;

		if (!t || atomic_load(&t->state) != AGENT_THREAD_LIVE ||
		    !name_read(t, buf, sizeof(buf)))
			continue;
		pthread_mutex_lock(&agent.lock);
		w = agent_proc_begin(&old);
		tn = (struct raw_py_thread_name){ (uint32_t)t->tid,
						  raw_header_now(&agent.proc.hdr),
						  { buf, (uint32_t)strlen(buf) } };
		if (w && raw_py_write_thread_name(w, &tn, scratch, sizeof(scratch)))
			agent_log("thread %d: cannot record its python name", (int)t->tid);
		agent_proc_end(&old);
		pthread_mutex_unlock(&agent.lock);
	}
	pthread_mutex_unlock(&names_lock);
}

void agent_python_thread_begin(struct agent_thread *t)
{
	struct agent_py *py;

	name_forget(t);
	/* Paired with the fence in agent_python_modules_done(): one of the two sees the other. */
	atomic_thread_fence(memory_order_seq_cst);
	/* A new stream (its timer is not armed yet): a walker already there, left by a module
	   scan that ran meanwhile or by the slot's last thread, starts over. */
	py = atomic_load(&t->py);
	if (py) {
		pyagent_thread_init(&py->pt);
		py->frames_key = 0;
	} else if (pyagent_active() && !py_attach(t))
		agent_log("thread %d: no memory for python frames: sampled as native only",
			  (int)t->tid);
}

void agent_python_thread_free(struct agent_thread *t)
{
	free(atomic_exchange(&t->py, NULL));
}

void agent_python_thread_restart(struct agent_thread *t)
{
	struct agent_py *py = atomic_load(&t->py);

	name_forget(t);
	if (py) {
		pyagent_thread_init(&py->pt);
		py->frames_key = 0;
	}
}

void agent_python_thread_finish(struct agent_thread *t)
{
	struct agent_py *py = atomic_load(&t->py);

	char buf[sizeof(t->py_name)];

	if (py && pyagent_thread_finish(&py->pt, &t->w, raw_header_now(&t->hdr)))
		agent_log("thread %d: cannot record its python notes", (int)t->tid);
	if (!py || !pyagent_active())
		return;
	/* A name given since the last poll: in the thread's own stream, its writer held. */
	pthread_mutex_lock(&names_lock);
	if (name_read(t, buf, sizeof(buf))) {
		struct raw_py_thread_name tn = { (uint32_t)t->tid,
						 raw_header_now(&t->hdr),
						 { buf, (uint32_t)strlen(buf) } };

		if (raw_py_write_thread_name(&t->w, &tn, py->scratch, sizeof(py->scratch)))
			agent_log("thread %d: cannot record its python name", (int)t->tid);
	}
	atomic_store(&t->py_bottom, 0);
	pthread_mutex_unlock(&names_lock);
}

void agent_python_module(const char *path, uint64_t base, const struct pyagent_dynsyms *dyn)
{
	AGENT_BUSY;
	int r;

	if (pyagent_active())
		return;
	r = pyagent_on_image(path, (uintptr_t)base, dyn);
	if (r == PYAGENT_FOUND || r == PYAGENT_UNSUPPORTED)
		mem_python_found(path);
	if (r == PYAGENT_FOUND)
		agent_log("python 3.%u found in '%s'", (pyagent_version() >> 16) & 0xff, path);
	else if (r == PYAGENT_UNSUPPORTED)
		agent_log("python interpreter in '%s' not walked (%s): native stacks only", path,
			  pyagent_unsupported_why());
}

void agent_python_modules_done(void)
{
	size_t i, n;

	if (!pyagent_active())
		return;
	atomic_thread_fence(memory_order_seq_cst);
	n = atomic_load(&agent.nthreads);
	for (i = 0; i < n; i++) {
		struct agent_thread *t = agent.threads[i];

		if (t && atomic_load(&t->state) == AGENT_THREAD_LIVE && !py_attach(t))
			agent_log("thread %d: no memory for python frames: sampled as native only",
				  (int)t->tid);
	}
}

/* The id of the mixed stack in t's stream, writing its record the first time; 0: none. */
static uint64_t py_stack_id(struct agent_thread *t, struct agent_py *py, const uint64_t *ips,
			    uint32_t n, uint32_t flags, uint32_t npy, uint64_t *hashp)
{
	uint32_t depth = n + 1 + 2 * npy, i;
	uint64_t hash, id;

	agent_ring_check(t);
	memcpy(py->key, ips, n * sizeof(uint64_t));
	py->key[n] = PY_KEY_SEPARATOR | (uint64_t)(flags & 0xffff) << 16 | (n & 0xffff);
	for (i = 0; i < npy; i++) {
		/* code ids stay far below 2^40; a callee id (few) above them */
		py->key[n + 1 + 2 * i] = py->frames[i].code_id ^ py->frames[i].callee << 40;
		py->key[n + 2 + 2 * i] = (uint64_t)py->frames[i].flags << 32 | py->frames[i].offset;
	}
	hash = stack_table_hash(py->key, depth, flags);
	if (hashp)
		*hashp = hash;
	id = stack_table_find(&t->stacks, hash, py->key, depth);
	if (id)
		return id;
	id = stack_table_add(&t->stacks, hash, py->key, depth);
	if (!id) {
		stack_table_reset(&t->stacks);
		id = stack_table_add(&t->stacks, hash, py->key, depth);
		if (!id)
			return 0;
	}
	if (raw_py_write_stack(&t->w, id, flags, ips, n, py->frames, npy, py->scratch,
			       sizeof(py->scratch)) ||
	    raw_py_write_stack_callees(&t->w, id, py->frames, npy, py->scratch,
				       sizeof(py->scratch))) {
		stack_table_reset(&t->stacks);
		return 0;
	}
	return id;
}

/*
 * agent_python_capture(); pid: the process's id, 0 when not known. Given, the thread captures
 * its own frames from inside an allocation (agent_python_stack()), which reads them in place.
 */
static uint64_t capture(struct agent_thread *t, int pid)
{
	struct agent_py *py = atomic_load_explicit(&t->py, memory_order_acquire);
	uint64_t h = 0;
	int i;

	if (!py || !pyagent_active())
		return 0;
	py->frames_key = 0;
	py->cut = false;
	/* Writes the code records its frames need, so it runs before the stack record. */
	py->npy = pid ? pyagent_capture_pid(&py->pt, &t->w, py->frames, PYAGENT_MAX_FRAMES,
					    &py->cut, pid, true)
		      : pyagent_capture(&py->pt, &t->w, py->frames, PYAGENT_MAX_FRAMES, &py->cut);
	if (py->pt.bottom != atomic_load_explicit(&t->py_bottom, memory_order_relaxed)) {
		struct pyagent_tname seen = { 0 };

		atomic_store_explicit(&t->py_bottom, py->pt.bottom, memory_order_relaxed);
		/* A new outermost frame (once or twice a thread): its Thread, while it lives. */
		if (py->pt.bottom && !pyagent_thread_self(py->pt.bottom, &seen)) {
			atomic_store_explicit(&t->py_hint_frame, 0, memory_order_relaxed);
			atomic_signal_fence(memory_order_seq_cst);
			t->py_hint = seen;
			atomic_store_explicit(&t->py_hint_frame, py->pt.bottom,
					      memory_order_release);
		}
	}
	for (i = 0; i < py->npy; i++)
		h = hash_combine(h, hash_combine(py->frames[i].code_id,
						 (uint64_t)py->frames[i].flags << 32 |
							 py->frames[i].offset));
	return py->npy > 0 ? h | 1 : 0;
}

uint64_t agent_python_capture(struct agent_thread *t)
{
	return capture(t, 0);
}

/* The mixed stack of native ips[0..n) and the frames agent_python_capture() took. */
static uint64_t py_stack_captured(struct agent_thread *t, const uint64_t *ips, uint32_t n,
				  uint32_t flags, uint64_t *hashp)
{
	struct agent_py *py = atomic_load_explicit(&t->py, memory_order_acquire);

	if (!py || py->npy <= 0)
		return 0; /* no Python frames; a reason, if any, is counted for the notes */
	if (py->cut)
		flags |= RAW_PY_STACK_PY_TRUNCATED;
	return py_stack_id(t, py, ips, n, flags, (uint32_t)py->npy, hashp);
}

uint64_t agent_python_stack_id(struct agent_thread *t, uint32_t n, uint32_t flags)
{
	return py_stack_captured(t, t->ips, n, flags, NULL);
}

uint64_t agent_python_sample(struct agent_thread *t, uint32_t n, uint32_t flags)
{
	if (!agent_python_capture(t))
		return 0;
	return agent_python_stack_id(t, n, flags);
}

/*
 * Frames that another allocation under the same Python frames may take again: the key holds
 * every frame's address and instruction and whether the collector runs, which is all a
 * capture reads from the thread's own frames, except the C callable a frame stands calling
 * (3.14+): a line calling different callables has one key, so such frames are read each time.
 * Code ids stay valid until the stream starts over (agent_python_thread_begin(), _restart())
 * or, with -ring-buffer, a new chunk must define its codes again.
 */
static bool frames_reusable(const struct agent_py *py)
{
	int i;

	for (i = 0; i < py->npy; i++)
		if (py->frames[i].flags & RAW_PY_FRAME_CALLEE)
			return false;
	return py->npy > 0;
}

uint64_t agent_python_stack(struct agent_thread *t, const uint64_t *ips, uint32_t n, uint32_t flags,
			    uint64_t *hashp, uint64_t key)
{
	struct agent_py *py = atomic_load_explicit(&t->py, memory_order_acquire);

	if (!py || !key || py->frames_key != key || (t->w.clock && py->frames_seq != t->w.seq)) {
		/* A fork child's id is set by the agent's fork handler before the child runs. */
		if (!capture(t, (int)agent.pid))
			return 0;
		if (key && frames_reusable(py)) {
			py->frames_key = key;
			py->frames_seq = t->w.seq;
		}
	}
	return py_stack_captured(t, ips, n, flags, hashp);
}
