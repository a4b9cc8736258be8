/* SPDX-License-Identifier: MIT */
/* The Python records of one raw stream: code objects, mixed stacks' Python frames, notes. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/grow.h"
#include "finalizer/python/python.h"
#include "finalizer/str-pool.h"

void pystream_init(struct pystream *ps)
{
	memset(ps, 0, sizeof(*ps));
	pycode_table_init(&ps->codes);
}

void pystream_release(struct pystream *ps)
{
	size_t k;

	pycode_table_release(&ps->codes);
	free(ps->frames);
	for (k = 0; k < ps->ncallees; k++)
		free(ps->callees[k]);
	free(ps->callees);
	free(ps->callee_frame);
	for (k = 0; k <= RAW_PY_NOTE_KIND_MAX; k++)
		free(ps->note_detail[k]);
	pystream_init(ps);
}

static int frames_reserve(struct pystream *ps, size_t more)
{
	return GROW(ps->frames, ps->nframes + more, ps->frames_cap) ? -ENOMEM : 0;
}

static int take_note(struct pystream *ps, const uint8_t *payload, size_t len)
{
	struct raw_py_note n;
	char *d;

	if (raw_py_read_note(payload, len, &n) < 0 || n.kind == 0 ||
	    n.kind > RAW_PY_NOTE_KIND_MAX) {
		ps->rejected++;
		return n.kind > RAW_PY_NOTE_KIND_MAX ? 0 : -EINVAL;
	}
	/* Counts are cumulative: a later note of a kind replaces an earlier one. */
	ps->notes[n.kind] = n.count;
	d = str_dup_mem(n.detail.s, n.detail.len);
	if (!d)
		return -ENOMEM;
	free(ps->note_detail[n.kind]);
	ps->note_detail[n.kind] = d;
	return 0;
}

/*
 * A callee (3.14+: the C callable a frame stands calling) named as cProfile names it: a
 * module's function "{built-in method builtins.sorted}" ("{built-in method name}" without a
 * module name), a method "{method 'get' of 'dict' objects}"; a method bound to a type (a
 * class method: cProfile finds no such method in type's) "{built-in method fromkeys}".
 */
static int take_callee(struct pystream *ps, const uint8_t *payload, size_t len)
{
	struct raw_py_callee c;
	char buf[2 * RAW_PY_CALLEE_MAX_STRING + 32];
	size_t k;

	if (raw_py_read_callee(payload, len, &c) < 0 || c.id > RAW_PY_CALLEE_MAX_IDS) {
		ps->rejected++;
		return 0;
	}
	if (c.kind == RAW_PY_CALLEE_METHOD && !(c.owner.len == 4 && !memcmp(c.owner.s, "type", 4)))
		snprintf(buf, sizeof(buf), "{method '%.*s' of '%.*s' objects}", (int)c.name.len,
			 c.name.s, (int)c.owner.len, c.owner.s);
	else if (c.kind == RAW_PY_CALLEE_FUNCTION && c.owner.len)
		snprintf(buf, sizeof(buf), "{built-in method %.*s.%.*s}", (int)c.owner.len,
			 c.owner.s, (int)c.name.len, c.name.s);
	else
		snprintf(buf, sizeof(buf), "{built-in method %.*s}", (int)c.name.len, c.name.s);
	if (c.id > ps->ncallees) {
		if (GROW(ps->callees, c.id, ps->callees_cap))
			return -ENOMEM;
		for (k = ps->ncallees; k < c.id; k++)
			ps->callees[k] = NULL;
		ps->ncallees = c.id;
	}
	/* an id is never redefined: a second definition is damage, the first one stays */
	if (ps->callees[c.id - 1]) {
		ps->rejected++;
		return 0;
	}
	ps->callees[c.id - 1] = str_dup_mem(buf, strlen(buf));
	return ps->callees[c.id - 1] ? 0 : -ENOMEM;
}

const char *pystream_callee(const struct pystream *ps, uint64_t id)
{
	return id && id <= ps->ncallees ? ps->callees[id - 1] : NULL;
}

int pystream_take(struct pystream *ps, unsigned type, const uint8_t *payload, size_t len,
		  struct raw_py_stack *s, uint64_t *ips, size_t *py_off)
{
	int ret;

	switch (type) {
	case RAW_REC_PY_CODE: {
		struct raw_py_code rc;

		ret = pycode_table_add_record(&ps->codes, payload, len);
		if (ret == -EINVAL)
			ps->rejected++;
		else if (!ret && raw_py_read_code(payload, len, &rc) == 0)
			ps->version = rc.version;
		return ret;
	}
	case RAW_REC_PY_STACK:
		if (frames_reserve(ps, RAW_PY_MAX_FRAMES))
			return -ENOMEM;
		if (raw_py_read_stack(payload, len, s, ips, ps->frames + ps->nframes) < 0) {
			ps->rejected++;
			return -EINVAL;
		}
		*py_off = ps->nframes;
		ps->nframes += s->npy;
		ps->last_stack = s->id;
		ps->last_off = *py_off;
		ps->last_npy = s->npy;
		ps->has_last = true;
		return 1;
	case RAW_REC_PY_STACK_CALLEES:
		/* it follows its stack at once: anything else is damage */
		if (!ps->has_last ||
		    raw_py_read_stack_callees(payload, len, ps->last_stack,
					      ps->frames + ps->last_off, ps->last_npy) < 0)
			ps->rejected++;
		ps->has_last = false;
		return 0;
	case RAW_REC_PY_NOTE:
		ps->has_last = false;
		return take_note(ps, payload, len);
	case RAW_REC_PY_CALLEE:
		return take_callee(ps, payload, len);
	default:
		return 0;
	}
}

void pystream_frame_info(const struct pystream *ps, const struct raw_py_frame *f,
			 struct pyframe_info *out)
{
	const struct pycode *c = pycode_table_get(&ps->codes, f->code_id);

	memset(out, 0, sizeof(*out));
	out->line = -1;
	if (!c) {
		out->name = "[python]";
		return;
	}
	out->known = true;
	out->name = c->name[0] ? c->name : "[python]";
	out->file = c->filename[0] ? c->filename : NULL;
	out->firstlineno = c->firstlineno > 0 ? c->firstlineno : 0;
	/* an instruction pointer outside the code: the frame is on its first line */
	out->line =
		(f->flags & RAW_PY_FRAME_BAD_OFFSET) ? out->firstlineno : pycode_line(c, f->offset);
}

const char *pynote_kind_name(unsigned kind)
{
	static const char *const names[] = {
		[RAW_PY_NOTE_NO_THREAD_STATE] = "no-thread-state",
		[RAW_PY_NOTE_UNKNOWN_VERSION] = "unknown-version",
		[RAW_PY_NOTE_SUBINTERPRETER] = "subinterpreter",
		[RAW_PY_NOTE_READ_FAILED] = "read-failed",
		[RAW_PY_NOTE_NO_READER] = "no-reader",
		[RAW_PY_NOTE_FREE_THREADED] = "free-threaded",
	};

	return kind >= 1 && kind <= RAW_PY_NOTE_KIND_MAX ? names[kind] : NULL;
}
