/* SPDX-License-Identifier: MIT */
/* The C callable a Python frame stands calling (3.14+), read from its value stack. */
#include <string.h>
#include "collector/agent/python/python-private.h"

/*
 * From 3.14 on, the interpreter stores a frame's stack pointer (frame->stackpointer) before
 * every call that may escape, and a CALL keeps its callable on the value stack until the
 * call returns: at CALL oparg the callable is stack_pointer[-2 - oparg] (callable,
 * self_or_null, the arguments), at CALL_KW stack_pointer[-3 - oparg] (then kwnames), at
 * CALL_FUNCTION_EX stack_pointer[-4] (callable, null, args, kwargs). 3.10-3.13 keep no such
 * pointer in the frame while it calls (3.13's stacktop is stale), so nothing is named there.
 *
 * A sample looks at its innermost frame and at every frame whose callee is C (the frame
 * inside it is the first of its own eval call: RAW_PY_FRAME_ENTRY). The instruction (2
 * bytes) and the PYCALLEE_WORDS words below the stack pointer are copied by the call that
 * copies the code objects (pycallee_plan: no call of their own), with the first words of the
 * callable each frame's rank had last sample: a frame sampled in one call again (most
 * samples of a long call) costs nothing more. The others' callables are copied by one more
 * call (pycallee_finish), made only when some frame stands at a call whose callee may be C. A
 * callable is named when its type is builtin_function_or_method or method_descriptor (read once per
 * type object and remembered): by its PyMethodDef and owner, remembered per thread, so a callable
 * met before costs no read more. Every read is guarded; a stale stack pointer (a frame sampled in
 * the eval loop before it stored it) gives a word whose type is not one of those, or the callable
 * of that frame's last call there.
 */

/* CPython's objects, the same in 3.14 and 3.15 (x86_64, GIL builds). */
#define OB_TYPE       1 /* words into an object */
#define CF_ML         2 /* PyCFunctionObject: m_ml, m_self, m_module */
#define CF_SELF       3
#define CF_MODULE     4
#define MD_TYPE       2 /* PyMethodDescrObject: d_common.d_type ... d_method */
#define MD_METHOD     5
#define TP_NAME       24 /* bytes into a PyTypeObject: tp_name (const char *) */
#define NAME_BYTES    96 /* of a type's or method's name read at most */
#define TYPE_NAME_CMP 32

enum type_kind { TYPE_OTHER = 1, TYPE_CFUNCTION, TYPE_DESCRIPTOR, TYPE_STR };

/* The CALL family of 3.minor: opcode (specialised forms included) and the callable's depth
   below the stack pointer before oparg. Opcodes from Lib/_opcode_metadata.py; the calls
   that run Python (CALL_PY_*, bound methods, CALL_ALLOC_AND_ENTER_INIT) and those done in
   the eval loop itself (CALL_LEN, CALL_ISINSTANCE, CALL_LIST_APPEND, ...) are left out. */
struct call_op {
	uint8_t minor, op, depth;
};
static const struct call_op call_ops[] = {
	/* 3.14: CALL, CALL_BUILTIN_FAST, _WITH_KEYWORDS, _O, CALL_METHOD_DESCRIPTOR_FAST,
	   _WITH_KEYWORDS, _NOARGS, _O, CALL_NON_PY_GENERAL, INSTRUMENTED_CALL; CALL_KW,
	   CALL_KW_NON_PY, INSTRUMENTED_CALL_KW; CALL_FUNCTION_EX, INSTRUMENTED_ */
	{ 14, 52, 2 },
	{ 14, 147, 2 },
	{ 14, 148, 2 },
	{ 14, 149, 2 },
	{ 14, 156, 2 },
	{ 14, 157, 2 },
	{ 14, 158, 2 },
	{ 14, 159, 2 },
	{ 14, 160, 2 },
	{ 14, 250, 2 },
	{ 14, 55, 3 },
	{ 14, 152, 3 },
	{ 14, 251, 3 },
	{ 14, 4, 4 },
	{ 14, 252, 4 },
	/* 3.15: the same, and CALL_EX_NON_PY_GENERAL */
	{ 15, 50, 2 },
	{ 15, 148, 2 },
	{ 15, 149, 2 },
	{ 15, 150, 2 },
	{ 15, 159, 2 },
	{ 15, 160, 2 },
	{ 15, 161, 2 },
	{ 15, 162, 2 },
	{ 15, 163, 2 },
	{ 15, 249, 2 },
	{ 15, 53, 3 },
	{ 15, 155, 3 },
	{ 15, 250, 3 },
	{ 15, 4, 4 },
	{ 15, 151, 4 },
	{ 15, 251, 4 },
};

static unsigned call_depth(int minor, unsigned op)
{
	size_t i;

	for (i = 0; i < sizeof(call_ops) / sizeof(call_ops[0]); i++)
		if (call_ops[i].minor == minor && call_ops[i].op == op)
			return call_ops[i].depth;
	return 0;
}

unsigned pycallee_plan(struct pyagent_thread *t, int npend, struct pyread_req *req)
{
	const struct pylayout *L = &pyagent_rt.L;
	struct pyagent_callees *c = &t->callees;
	unsigned nreq = 0, i;
	int j;

	c->n = 0;
	if (L->fr_stackpointer < 0)
		return 0;
	for (j = 0; j < npend && c->n < PYCALLEE_FRAMES; j++) {
		struct pyagent_pending *p = &t->pending[j];
		uintptr_t lo, base = p->frame + (uintptr_t)L->fr_size;

		p->callee = 0;
		if (j > 0 && !(t->pending[j - 1].flags & RAW_PY_FRAME_ENTRY))
			continue; /* it calls a Python function, run by the same eval call */
		if (!p->sp || p->sp & 7 || p->sp <= base || p->sp - base > PYAGENT_WINDOW)
			continue;
		lo = p->sp - base > PYCALLEE_WORDS * 8 ? p->sp - PYCALLEE_WORDS * 8 : base;
		i = c->n;
		c->at[i] = (uint32_t)j;
		c->words[i] = (uint32_t)((p->sp - lo) / 8);
		req[nreq++] =
			(struct pyread_req){ p->instr, sizeof(c->instr[i]), &c->instr[i], false };
		req[nreq++] =
			(struct pyread_req){ lo, p->sp - lo,
					     &c->stack[i][PYCALLEE_WORDS - c->words[i]], false };
		c->n++;
	}
	/* the callables of last sample's frames at these ranks, after the copies above: a
	   guess that fails (the object freed, its page gone) costs the rest of the batch one
	   more call, and only the rest */
	for (i = 0; i < c->n; i++) {
		c->guess_req[i] = 0;
		if (!c->guess[i])
			continue;
		c->guess_req[i] = (uint8_t)nreq;
		req[nreq++] =
			(struct pyread_req){ c->guess[i], sizeof(c->obj[i]), c->obj[i], false };
	}
	return nreq;
}

/* A C string at addr into out (cap > 1 bytes, NUL-terminated, cut): its length, or -1. */
static int read_cstr(int pid, uintptr_t addr, char *out, size_t cap)
{
	size_t n = cap - 1, room = 4096 - (addr & 4095);

	if (pyread(pid, out, addr, n) < 0 && (n <= room || pyread(pid, out, addr, n = room) < 0))
		return -1;
	out[n] = 0;
	return (int)strlen(out);
}

/* What the type object at type is (enum type_kind), remembered per thread; 0 unreadable. */
static unsigned type_kind(struct pyagent_callees *c, int pid, uintptr_t type)
{
	static const char *const names[] = { [TYPE_CFUNCTION] = "builtin_function_or_method",
					     [TYPE_DESCRIPTOR] = "method_descriptor",
					     [TYPE_STR] = "str" };
	char name[TYPE_NAME_CMP];
	uintptr_t at;
	unsigned i, k, free = PYCALLEE_TYPES;

	for (i = 0; i < PYCALLEE_TYPES; i++) {
		if (c->type[i] == type)
			return c->type_kind[i];
		if (!c->type[i] && free == PYCALLEE_TYPES)
			free = i;
	}
	if (pyread(pid, &at, type + TP_NAME, sizeof(at)) < 0 ||
	    read_cstr(pid, at, name, sizeof(name)) < 0)
		return 0;
	for (k = TYPE_CFUNCTION; k <= TYPE_STR && strcmp(name, names[k]); k++)
		;
	if (k > TYPE_STR)
		k = TYPE_OTHER;
	/* the builtin types are static: once full, a new one replaces the last */
	c->type[free < PYCALLEE_TYPES ? free : PYCALLEE_TYPES - 1] = type;
	c->type_kind[free < PYCALLEE_TYPES ? free : PYCALLEE_TYPES - 1] = (uint8_t)k;
	return k;
}

/* The name of the type of the object at obj into out: its length, or -1. */
static int type_name_of(int pid, uintptr_t obj, char *out, size_t cap)
{
	uintptr_t type, at;

	if (pyread(pid, &type, obj + OB_TYPE * 8, sizeof(type)) < 0 ||
	    pyread(pid, &at, type + TP_NAME, sizeof(at)) < 0)
		return -1;
	return read_cstr(pid, at, out, cap);
}

/* Describe a callable not met before in a RAW_REC_PY_CALLEE record: its id, or 0. */
static uint64_t describe(struct pyagent_thread *t, struct raw_writer *w, const uint64_t *obj,
			 unsigned tk, struct pyagent_callee_slot *s)
{
	struct pyagent_callees *c = &t->callees;
	int pid = t->mem.pid, nlen, olen = 0;
	char name[NAME_BYTES], owner[NAME_BYTES];
	struct raw_py_callee rc;
	uintptr_t at;

	owner[0] = 0;
	if (pyread(pid, &at, s->ml, sizeof(at)) < 0 ||
	    (nlen = read_cstr(pid, at, name, sizeof(name))) <= 0)
		return 0;
	if (tk == TYPE_DESCRIPTOR) {
		if (pyread(pid, &at, s->owner + TP_NAME, sizeof(at)) < 0 ||
		    (olen = read_cstr(pid, at, owner, sizeof(owner))) < 0)
			return 0;
	} else if (s->owner) {
		uint32_t len;
		bool cut;
		uintptr_t type;

		/* m_module: the module's name, a str (cProfile leaves anything else out) */
		if (pyread(pid, &type, s->owner + OB_TYPE * 8, sizeof(type)) == 0 &&
		    type_kind(c, pid, type) == TYPE_STR &&
		    pycodes_read_str(pid, s->owner, owner, sizeof(owner) - 1, &len, &cut) == 0)
			olen = (int)len;
	} else if (obj[CF_SELF]) {
		/* bound to an object: cProfile names the method of its type */
		if ((olen = type_name_of(pid, obj[CF_SELF], owner, sizeof(owner))) < 0)
			return 0;
		/* a module's function without m_module: a built-in method */
		if (!strcmp(owner, "module"))
			olen = 0, s->kind = RAW_PY_CALLEE_FUNCTION;
	}
	rc = (struct raw_py_callee){ .id = c->next_id, .kind = s->kind };
	rc.name = (struct raw_string){ name, (uint32_t)nlen };
	rc.owner = (struct raw_string){ owner, (uint32_t)olen };
	if (raw_py_write_callee(w, &rc, t->scratch, sizeof(t->scratch)) < 0)
		return 0;
	return c->next_id++;
}

/* The id of the callable copied in obj (its type tk), describing it the first time; 0. */
static uint64_t callee_id(struct pyagent_thread *t, struct raw_writer *w, const uint64_t *obj,
			  unsigned tk)
{
	struct pyagent_callees *c = &t->callees;
	struct pyagent_callee_slot key = { 0 }, *s;
	unsigned h;

	if (tk == TYPE_DESCRIPTOR) {
		key.ml = obj[MD_METHOD];
		key.owner = obj[MD_TYPE];
		key.kind = RAW_PY_CALLEE_METHOD;
	} else {
		key.ml = obj[CF_ML];
		key.owner = obj[CF_MODULE];
		/* a module's function has m_module (its name); a method bound to an object not */
		key.kind =
			key.owner || !obj[CF_SELF] ? RAW_PY_CALLEE_FUNCTION : RAW_PY_CALLEE_METHOD;
	}
	if (key.ml < 4096 || (tk == TYPE_DESCRIPTOR && key.owner < 4096))
		return 0;
	h = (unsigned)((key.ml >> 4) ^ (key.owner >> 4) ^ key.kind) & (PYCALLEE_SLOTS - 1);
	s = &c->slots[h];
	if (s->ml == key.ml && s->owner == key.owner && s->id &&
	    (s->kind == key.kind || key.kind == RAW_PY_CALLEE_METHOD))
		return s->id;
	key.id = describe(t, w, obj, tk, &key);
	if (key.id)
		*s = key;
	return key.id;
}

void pycallee_finish(struct pyagent_thread *t, struct raw_writer *w, const struct pyread_req *req)
{
	const struct pylayout *L = &pyagent_rt.L;
	struct pyagent_callees *c = &t->callees;
	struct pyread_req objs[PYCALLEE_FRAMES], miss[PYCALLEE_FRAMES];
	uint32_t which[PYCALLEE_FRAMES];
	uintptr_t tag = ~(uintptr_t)L->fr_code_tag;
	unsigned i, k, n = 0;

	for (i = 0; i < c->n; i++) {
		unsigned depth;
		uintptr_t obj = 0, guess = c->guess[i];

		c->guess[i] = 0;
		if (!req[2 * i].ok || !req[2 * i + 1].ok)
			continue;
		depth = call_depth(L->minor, c->instr[i] & 0xff);
		if (!depth || (depth += c->instr[i] >> 8) > c->words[i])
			continue;
		obj = (uintptr_t)c->stack[i][PYCALLEE_WORDS - depth] & tag;
		if (obj < 4096 || obj & 7)
			continue;
		c->guess[i] = obj;
		/* the guess held: copied already */
		if (obj == guess && c->guess_req[i] && req[c->guess_req[i]].ok) {
			objs[n] = (struct pyread_req){ obj, 0, NULL, true };
			which[n++] = i;
			continue;
		}
		objs[n] = (struct pyread_req){ obj, sizeof(c->obj[i]), c->obj[i], false };
		which[n++] = i;
	}
	/* those not guessed: one call for all */
	for (i = k = 0; i < n; i++)
		if (!objs[i].ok)
			miss[k++] = objs[i];
	pymem_batch(&t->mem, miss, k);
	for (i = k = 0; i < n; i++)
		if (!objs[i].ok)
			objs[i].ok = miss[k++].ok;
	for (i = 0; i < n; i++) {
		const uint64_t *obj = c->obj[which[i]];
		unsigned tk;

		if (!objs[i].ok)
			continue;
		tk = type_kind(c, t->mem.pid, (uintptr_t)obj[OB_TYPE]);
		if (tk == TYPE_CFUNCTION || tk == TYPE_DESCRIPTOR)
			t->pending[c->at[which[i]]].callee = callee_id(t, w, obj, tk);
	}
}
