/* SPDX-License-Identifier: MIT */
/* _Py_DebugOffsets (3.13+): the layout an interpreter publishes about itself, taken at start. */
#include <string.h>

#include "collector/agent/python/python-private.h"

/*
 * CPython 3.13 and later start _PyRuntime with a block of offsets meant for out-of-process
 * debuggers (Include/internal/pycore_debug_offsets.h): cookie "xdebugpy", PY_VERSION_HEX, a
 * free-threading flag, then sub-structures of 8-byte offsets. It is initialised data, so it
 * can be read as soon as the module is mapped, before the interpreter starts. Where it gives a
 * field, it wins over the built-in table, so a patch release whose structures moved still
 * walks. Each minor release appends fields to the sub-structures, so where a field sits in the
 * block is itself per version (struct pydebug_map); a release newer than every map is read
 * with the newest one and accepted only if every value passes the checks below.
 */

#define MAX_WORDS (PYDEBUG_MAX_BYTES / 8)

static bool small(uint64_t v)
{
	return v < 65536;
}

static uint64_t word(const uint64_t *w, int32_t i)
{
	return w[i];
}

/* Every offset we use is plausible: inside its object, below the fields that follow it. */
static bool plausible(const uint64_t *w, const struct pydebug_map *m)
{
	uint64_t ts = word(w, m->ts_size), fr = word(w, m->fr_localsplus),
		 code = word(w, m->co_code_adaptive), str = word(w, m->str_ascii_size);
	const int32_t idx[] = {
		m->interpreters_head, m->is_next,          m->is_threads_head, m->ts_next,
		m->ts_interp,         m->ts_current_frame, m->ts_thread_id,    m->ts_status,
		m->fr_previous,       m->fr_executable,    m->fr_instr_ptr,    m->fr_owner,
		m->co_filename,       m->co_name,          m->co_qualname,     m->co_linetable,
		m->co_firstlineno,    m->bytes_ob_sval,    m->str_state,       m->str_length,
	};
	size_t i;

	for (i = 0; i < sizeof(idx) / sizeof(idx[0]); i++)
		if (!small(word(w, idx[i])))
			return false;
	if (!small(ts) || !small(fr) || !small(code) || !small(str))
		return false;
	return word(w, m->ts_interp) < ts && word(w, m->ts_current_frame) < ts &&
	       word(w, m->ts_thread_id) < ts && word(w, m->ts_next) < ts &&
	       word(w, m->ts_status) < ts && word(w, m->fr_previous) < fr &&
	       word(w, m->fr_executable) < fr && word(w, m->fr_instr_ptr) < fr &&
	       word(w, m->fr_owner) < fr && fr <= word(w, m->fr_size) &&
	       word(w, m->co_filename) < code && word(w, m->co_name) < code &&
	       word(w, m->co_qualname) < code && word(w, m->co_linetable) < code &&
	       word(w, m->co_firstlineno) < code && code <= word(w, m->co_size) &&
	       word(w, m->ob_type) == PYLAYOUT_OB_TYPE && word(w, m->bytes_ob_size) == 16 &&
	       word(w, m->str_state) < str && word(w, m->str_length) < str && str >= 24 &&
	       str <= 128;
}

int pydebug_apply(struct pylayout *L, uintptr_t runtime, uint32_t hexversion)
{
	const struct pydebug_map *m = pydebug_map_find(L->minor);
	uint64_t w[MAX_WORDS];

	if (!m || m->words > MAX_WORDS ||
	    pyagent_read(w, runtime, (size_t)m->words * sizeof(w[0])) < 0)
		return PYDEBUG_ABSENT;
	return pydebug_apply_copy(L, w, (size_t)m->words * sizeof(w[0]), hexversion);
}

int pydebug_apply_copy(struct pylayout *L, const void *block, size_t len, uint32_t hexversion)
{
	const struct pydebug_map *m = pydebug_map_find(L->minor);
	uint64_t w[MAX_WORDS];
	int32_t head;

	if (!m || m->words > MAX_WORDS || len < (size_t)m->words * sizeof(w[0]))
		return PYDEBUG_ABSENT;
	memcpy(w, block, (size_t)m->words * sizeof(w[0]));
	if (memcmp(w, "xdebugpy", 8) != 0)
		return PYDEBUG_ABSENT;
	if ((word(w, m->version) >> 16) != (hexversion >> 16))
		return PYDEBUG_INVALID;
	if (word(w, m->free_threaded))
		return PYDEBUG_FREE_THREADED;
	if (!plausible(w, m))
		return PYDEBUG_INVALID;
	head = (int32_t)word(w, m->interpreters_head);
	/* interpreters.main follows .head (struct pyinterpreters), which the block leaves out */
	if (L->rt_interp_head != head)
		L->rt_interp_main = head + 8;
	L->rt_interp_head = head;
	L->is_next = (int32_t)word(w, m->is_next);
	L->is_threads_head = (int32_t)word(w, m->is_threads_head);
	L->ts_next = (int32_t)word(w, m->ts_next);
	L->ts_interp = (int32_t)word(w, m->ts_interp);
	L->ts_frame = (int32_t)word(w, m->ts_current_frame);
	L->ts_thread_id = (int32_t)word(w, m->ts_thread_id);
	L->ts_status = (int32_t)word(w, m->ts_status);
	L->fr_previous = (int32_t)word(w, m->fr_previous);
	L->fr_code = (int32_t)word(w, m->fr_executable);
	L->fr_instr = (int32_t)word(w, m->fr_instr_ptr);
	L->fr_owner = (int32_t)word(w, m->fr_owner);
	L->fr_size = (int32_t)word(w, m->fr_localsplus);
	/* the value stack's top: inside the frame's fixed part, or not taken */
	L->fr_stackpointer = -1;
	if (m->fr_stackpointer >= 0 && word(w, m->fr_stackpointer) + 8 <= (uint64_t)L->fr_size)
		L->fr_stackpointer = (int32_t)word(w, m->fr_stackpointer);
	L->co_filename = (int32_t)word(w, m->co_filename);
	L->co_name = (int32_t)word(w, m->co_name);
	L->co_qualname = (int32_t)word(w, m->co_qualname);
	L->co_linetable = (int32_t)word(w, m->co_linetable);
	L->co_firstlineno = (int32_t)word(w, m->co_firstlineno);
	L->co_code = (int32_t)word(w, m->co_code_adaptive);
	L->co_size = L->co_code;
	L->var_size = (int32_t)word(w, m->bytes_ob_size);
	L->bytes_sval = (int32_t)word(w, m->bytes_ob_sval);
	L->str_state = (int32_t)word(w, m->str_state);
	L->str_length = (int32_t)word(w, m->str_length);
	L->str_ascii_size = (int32_t)word(w, m->str_ascii_size);
	/* The GIL is far into the interpreter's state: only its order of size is checked. */
	if (word(w, m->is_gil) < (1u << 20))
		L->gil = (int32_t)word(w, m->is_gil);
	/* So is the collector's state; its flag lies in its first few hundred bytes. */
	if (word(w, m->is_gc) < (1u << 20) && word(w, m->gc_collecting) < 4096)
		L->is_gc_collecting = (int32_t)(word(w, m->is_gc) + word(w, m->gc_collecting));
	else
		L->is_gc_collecting = -1;
	return PYDEBUG_OK;
}
