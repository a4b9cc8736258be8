/* SPDX-License-Identifier: MIT */
/* asyncio tasks' suspensions (WAIT records) and pool tasks' origins, as the Python module asks. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "collector/agent/agent-private.h"

#define TASK_FRAMES 64 /* suspended coroutine frames taken of one await chain */

/*
 * The task's coroutines are suspended: no walk of the thread reaches them. The driver
 * (api/python/pcollect/_tasks.py) names their code objects and offsets; they go on top of
 * the thread's own Python frames (the driver's, under the task's name), so the wait sits at
 * the await line, under the task, under the event loop that ran it.
 */
/*
 * arg: "w START DURATION FRAMES": one suspension (a WAIT record); "s TIME COUNT TOTAL
 * FRAMES": COUNT shorter ones of the same await, TOTAL ns in all, told at TIME (a WAIT_SUM).
 * Times are CLOCK_MONOTONIC ns; FRAMES "CODE:OFFSET ..." in hex, innermost first.
 */
int agent_task_wait(const char *arg)
{
	struct agent_thread *t = agent_self;
	struct raw_py_frame extra[TASK_FRAMES];
	uintptr_t code[TASK_FRAMES];
	uint32_t off[TASK_FRAMES];
	uint64_t start, dur, count = 0, id = 0;
	bool sum;
	struct agent_py *py;
	char *end;
	int n = 0, k;
	sigset_t old;

	if (!t || !arg || atomic_load(&t->state) != AGENT_THREAD_LIVE || !pyagent_active())
		return -1;
	py = atomic_load_explicit(&t->py, memory_order_acquire);
	if (!py)
		return -1;
	if (*arg != 'w' && *arg != 's')
		return -1;
	sum = *arg == 's';
	start = strtoull(arg + 1, &end, 10);
	if (sum)
		count = strtoull(end, &end, 10);
	dur = strtoull(end, &end, 10);
	while (n < TASK_FRAMES && *end) {
		code[n] = (uintptr_t)strtoull(end, &end, 16);
		if (*end != ':')
			break;
		off[n++] = (uint32_t)strtoul(end + 1, &end, 16);
	}
	if (start < t->hdr.origin_ns)
		return -1;
	agent_in_agent++;
	if (!agent_wait_writer_take(t, &old)) {
		agent_in_agent--;
		return -1;
	}
	k = pyagent_code_frames(&py->pt, &t->w, code, off, n, extra);
	if (agent_python_capture(t) && k > 0 && py->npy + k <= PYAGENT_MAX_FRAMES) {
		memmove(py->frames + k, py->frames, (size_t)py->npy * sizeof(*py->frames));
		memcpy(py->frames, extra, (size_t)k * sizeof(*extra));
		py->npy += k;
	}
	/* Python frames alone: the native ones here are the driver's call into us (ctypes,
	   libffi), which the task's await never made. */
	id = agent_python_stack_id(t, 0, 0);
	if (id && (sum ? raw_writer_wait_sum(&t->w, (int64_t)(start - t->hdr.origin_ns), id,
					     RAW_WAIT_TASK, 0, count, dur)
		       : raw_writer_wait(&t->w, (int64_t)(start - t->hdr.origin_ns), id, dur,
					 RAW_WAIT_TASK, 0)))
		id = 0;
	agent_wait_writer_give(t, &old);
	agent_in_agent--;
	return id ? 0 : -1;
}

/*
 * A thread pool's task (concurrent.futures, multiprocessing.pool.ThreadPool): the Python
 * module takes the submitting thread's stack at submit (its id in that thread's stream,
 * which an int holds for any stream a run can write), and the worker that runs the task
 * names it as its origin from the task's start to its end (RAW_ORIGIN_TASK): preport -stitch
 * puts the task under the submit call, each task under its own one.
 */
int agent_origin_take(void)
{
	struct agent_thread *t = agent_self;
	uint64_t id;

	if (!t || atomic_load(&t->state) != AGENT_THREAD_LIVE || agent_in_vfork_child())
		return 0;
	/* Kept per (this frame, Python frames with their offsets): a submit in a loop costs the
	   read of its Python frames, not an unwind each (the native frames under the same
	   Python frames at the same depth are the interpreter's same calls). */
	id = agent_origin_stack_at(t, 0, (uintptr_t)__builtin_return_address(0),
				   (uintptr_t)__builtin_frame_address(0));
	return id <= INT_MAX ? (int)id : 0;
}

/* arg: "TID STACK" (decimal) the task's origin, NULL: its end (the worker's own work). */
int agent_origin_task(const char *arg)
{
	struct agent_thread *t = agent_self;
	unsigned long long tid = 0, stack = 0;
	char *end;

	if (!t || atomic_load(&t->state) != AGENT_THREAD_LIVE || agent_in_vfork_child())
		return -1;
	if (arg) {
		tid = strtoull(arg, &end, 10);
		stack = strtoull(end, &end, 10);
		if (!tid || !stack || tid > INT_MAX || *end)
			return -1;
	}
	/* Nothing new (a worker's second task from the same call site): no record. */
	if (t->origin_tid == (pid_t)tid && t->origin_stack == stack)
		return 0;
	t->origin_tid = (pid_t)tid;
	t->origin_stack = stack;
	agent_origin_write(t, (pid_t)tid, stack, RAW_ORIGIN_TASK);
	return 0;
}
