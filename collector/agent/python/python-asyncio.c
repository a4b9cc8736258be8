/* SPDX-License-Identifier: MIT */
/* asyncio's running task (3.14+): Py_AsyncioModuleDebugOffsets, and a frame for the task. */
#include <errno.h>
#include <string.h>
#include "collector/agent/python/python-private.h"

/*
 * CPython 3.14+ publish the running task for debuggers: _asynciomodule.c's
 * Py_AsyncioModuleDebugOffsets, in an ELF section of its own (".AsyncioDebug"), in the
 * _asyncio extension module (3.14, lib-dynload) or in the interpreter (3.15). Its words:
 *   task: size, task_name, task_awaited_by, task_is_task, task_awaited_by_is_set,
 *         task_coro, task_node;
 *   interpreter state: size, asyncio_tasks_head;
 *   thread state: size, asyncio_running_loop, asyncio_running_task, asyncio_tasks_head.
 * The C Task stores itself in the thread state's asyncio_running_task while it steps its
 * coroutine, so one pointer per sample tells the task, copied with the thread state (the
 * same system call, pyasync_ts_extra()); its name is read only when the
 * thread's task changes (struct pyasync_thread). The sample gets a frame "[task NAME]"
 * (file "<pcollect task>") outward of the task's coroutine frame: the frame pcollect's task
 * driver (api/python/pcollect/_tasks.py) has there, so preport -group-by task reads both.
 */

#define SECTION       ".AsyncioDebug"
#define SECTION_WORDS 13
#define TASK_FILE     "<pcollect task>"
#define DRIVER_FILE   "pcollect/_tasks.py"

/* PyGenObject (3.14, 3.15; _PyGenObject_HEAD): gi_qualname after ob_base, gi_weakreflist,
   gi_name; gi_iframe after the exception state, finalizer and four flag bytes. The agent's
   debug-offset maps do not take _Py_DebugOffsets.gen_object yet: a task whose frame there
   runs no code object gets no frame, a qualname that is no str names it "Task-*". */
#define GEN_QUALNAME 0x20
#define GEN_IFRAME   0x48

struct pyasync_offsets pyasync;

static bool plausible(const uint64_t *w)
{
	return w[0] >= 64 && w[0] <= 4096 && w[1] + 8 <= w[0] && w[5] + 8 <= w[0] && w[9] >= 64 &&
	       w[9] <= 65536 && w[11] + 8 <= w[9];
}

int pyagent_on_asyncio(const char *path, bool interpreter)
{
	const char *base = strrchr(path, '/');
	uint64_t w[SECTION_WORDS];
	int r;

	base = base ? base + 1 : path;
	if (__atomic_load_n(&pyasync.ready, __ATOMIC_ACQUIRE) ||
	    (!interpreter && strncmp(base, "_asyncio", 8) != 0))
		return 0;
	r = pyelf_section(path, SECTION, w, sizeof(w));
	if (r < 0)
		return r;
	if ((size_t)r < sizeof(w) || !plausible(w))
		return -ENOENT;
	pyasync.task_name = (int32_t)w[1];
	pyasync.task_coro = (int32_t)w[5];
	pyasync.ts_running_task = (int32_t)w[11];
	__atomic_store_n(&pyasync.ready, 1, __ATOMIC_RELEASE);
	return 1;
}

/* Whether the str at addr is "Task-" and digits: asyncio's default name. */
static bool default_name(const char *s, uint32_t len)
{
	uint32_t i;

	if (len <= 5 || memcmp(s, "Task-", 5) != 0)
		return false;
	for (i = 5; i < len; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return true;
}

static uint64_t word_at(const uint8_t *p, int32_t off)
{
	uint64_t v;

	memcpy(&v, p + off, sizeof(v));
	return v;
}

/*
 * Describe task into slot: its coroutine's frame, whether pcollect's driver runs it, and a
 * RAW_REC_PY_CODE named "[task NAME]" (asyncio's name; for a default "Task-N", the
 * coroutine's __qualname__, as the driver names it). Guarded reads only.
 */
static int describe(struct pyagent_thread *t, struct raw_writer *w, uintptr_t task,
		    struct pyasync_slot *slot)
{
	const struct pylayout *L = &pyagent_rt.L;
	int pid = t->mem.pid;
	uint8_t co[PYAGENT_CODE_BYTES];
	uint64_t name_obj, coro, qual, exe, name_type = 0, qual_type = 0;
	struct raw_py_code c;
	char *name = t->name + 6, *file = t->filename;
	size_t cap = sizeof(t->name) - 7;
	uint32_t len = 0, flen = 0;
	bool trunc = false;

	if (pyread(pid, &name_obj, task + (uintptr_t)pyasync.task_name, 8) ||
	    pyread(pid, &coro, task + (uintptr_t)pyasync.task_coro, 8) || !coro ||
	    pyread(pid, &qual, coro + GEN_QUALNAME, 8) ||
	    pyread(pid, &exe, coro + GEN_IFRAME + (uintptr_t)L->fr_code, 8))
		return -1;
	exe &= ~(uint64_t)3; /* a _PyStackRef: its tag bits */
	slot->task = task;
	slot->frame = coro + GEN_IFRAME;
	slot->skip = true;
	/* The coroutine's frame must run a code object (else these offsets are not this
	   build's: no frame is added), and not the driver's wrapper coroutine (file
	   pcollect/_tasks.py): the driver's own frame names the task there */
	if (pyread(pid, co, exe, (size_t)L->co_size) ||
	    word_at(co, PYLAYOUT_OB_TYPE) != pyagent_rt.code_type)
		return 0;
	if (!pycodes_read_str(pid, (uintptr_t)word_at(co, L->co_filename), file,
			      sizeof(t->filename), &flen, &trunc) &&
	    flen >= sizeof(DRIVER_FILE) - 1 &&
	    !memcmp(file + flen - (sizeof(DRIVER_FILE) - 1), DRIVER_FILE, sizeof(DRIVER_FILE) - 1))
		return 0;
	slot->skip = false;
	trunc = false;
	/* A str name shares its type with the qualname (always a str); else the counter */
	if (name_obj && qual && !pyread(pid, &name_type, name_obj + PYLAYOUT_OB_TYPE, 8) &&
	    !pyread(pid, &qual_type, qual + PYLAYOUT_OB_TYPE, 8) && name_type == qual_type &&
	    pycodes_read_str(pid, name_obj, name, cap, &len, &trunc) == 0 &&
	    !default_name(name, len)) {
		/* asyncio's name */
	} else if (!qual || pycodes_read_str(pid, qual, name, cap, &len, &trunc) < 0 || !len) {
		memcpy(name, "Task-*", 6);
		len = 6;
	}
	memcpy(t->name, "[task ", 6);
	t->name[6 + len] = ']';
	memset(&c, 0, sizeof(c));
	c.id = t->next_id;
	c.addr = task;
	c.version = pyagent_rt.version;
	c.flags = RAW_PY_CODE_NAME_IS_QUALNAME | (trunc ? RAW_PY_CODE_NAME_TRUNCATED : 0);
	c.filename.s = TASK_FILE;
	c.filename.len = sizeof(TASK_FILE) - 1;
	c.name.s = t->name;
	c.name.len = len + 7;
	c.linetable.s = "";
	if (raw_py_write_code(w, &c, t->scratch, sizeof(t->scratch)) < 0) {
		t->codes_failed++;
		slot->task = 0;
		slot->skip = true;
		return -1;
	}
	t->codes_written++;
	slot->id = t->next_id++;
	slot->seq = w->seq;
	return 0;
}

size_t pyasync_ts_extra(void)
{
	size_t end;

	if (!__atomic_load_n(&pyasync.ready, __ATOMIC_ACQUIRE) || pyagent_rt.minor < 14)
		return 0;
	end = (size_t)pyasync.ts_running_task + 8;
	return end > pyagent_rt.ts_len ? end - pyagent_rt.ts_len : 0;
}

void pyasync_sample(struct pyagent_thread *t, struct raw_writer *w, uintptr_t tstate)
{
	struct pyasync_thread *a = &t->task;
	struct pyasync_slot *slot;
	uint64_t task = 0;
	bool ok;

	a->frame = 0;
	ok = __atomic_load_n(&pyasync.ready, __ATOMIC_ACQUIRE) && pyagent_rt.minor >= 14 &&
	     pymem_read(&t->mem, &task, tstate + (uintptr_t)pyasync.ts_running_task, sizeof(task),
			0, 0) == 0;
	/* the thread's own state may be read in place (t->mem.own), not the task it names */
	t->mem.own = false;
	if (!ok || !task)
		return;
	slot = &a->slots[(task >> 4) & (PYASYNC_SLOTS - 1)];
	/* Chunks that stand alone (w->clock: -ring-buffer) each define the codes they name. */
	if (slot->task != task || (w->clock && slot->seq != w->seq))
		if (describe(t, w, (uintptr_t)task, slot) < 0)
			return;
	if (slot->skip)
		return;
	a->frame = slot->frame;
	a->id = slot->id;
}
