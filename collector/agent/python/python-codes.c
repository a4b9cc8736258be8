/* SPDX-License-Identifier: MIT */
/* Code identity: which RAW_REC_PY_CODE id a code object at an address stands for. */
#include <string.h>

#include "collector/agent/python/python-private.h"
#include "common/hash.h"

/*
 * A code object can be freed and another allocated at its address (exec() in a loop, lambdas
 * made and dropped). The slot for an address therefore also keeps a signature of what lives
 * there, computed from the copy of the code object the walk already has: its first line, the
 * addresses of its file name, name and line table objects, its size, and
 *   3.12+: co_version, a counter the interpreter bumps for every code object it creates;
 *   3.10, 3.11: the name string's length, cached hash and first bytes (one more guarded read),
 * because a freed name can be reallocated at the same address with other text.
 * A signature that differs makes a new id and a new RAW_REC_PY_CODE record.
 */

#define NAME_PEEK 32 /* bytes of a name hashed into the signature */

static uint64_t field(const uint8_t *obj, int32_t off)
{
	uint64_t v;

	memcpy(&v, obj + off, sizeof(v));
	return v;
}

static int32_t field32(const uint8_t *obj, int32_t off)
{
	int32_t v;

	memcpy(&v, obj + off, sizeof(v));
	return v;
}

static uintptr_t name_ptr(const struct pylayout *L, const uint8_t *code)
{
	return (uintptr_t)field(code, L->co_qualname >= 0 ? L->co_qualname : L->co_name);
}

size_t pycodes_name_bytes(void)
{
	const struct pylayout *L = &pyagent_rt.L;

	return L->co_version >= 0 ? 0 : (size_t)L->str_compact_size + NAME_PEEK;
}

uintptr_t pycodes_name_addr(const uint8_t *code)
{
	return name_ptr(&pyagent_rt.L, code);
}

/*
 * Signature of the code object copied in code; 0 when the name cannot be read. name: the
 * first pycodes_name_bytes() bytes of its name string (read by the walk with the other
 * names of the sample), or NULL when they could not be read at once: a short name at the
 * very end of a mapping, whose header alone is then read here.
 */
static uint64_t code_signature(const struct pylayout *L, const uint8_t *code, const uint8_t *name,
			       int pid)
{
	uint64_t h = 0x6a09e667f3bcc908ull;
	uint8_t s[128];

	h = hash_combine(h, (uint64_t)(uint32_t)field32(code, L->co_firstlineno));
	h = hash_combine(h, field(code, L->co_filename));
	h = hash_combine(h, name_ptr(L, code));
	h = hash_combine(h, field(code, L->co_linetable));
	h = hash_combine(h, L->minor >= 11 ? field(code, L->var_size) : field(code, L->co_code));
	if (L->co_version >= 0) {
		h = hash_combine(h, (uint64_t)(uint32_t)field32(code, L->co_version));
	} else {
		size_t len = pycodes_name_bytes(), data, n, i;
		uint32_t state;
		uint64_t chars;

		if (len > sizeof(s))
			return 0;
		if (name) {
			memcpy(s, name, len);
		} else {
			len = (size_t)L->str_compact_size;
			if (pyread(pid, s, name_ptr(L, code), len) < 0)
				return 0;
		}
		chars = field(s, L->str_length);
		state = (uint32_t)field32(s, L->str_state);
		h = hash_combine(h, chars);
		h = hash_combine(h, field(s, L->str_hash));
		h = hash_combine(h, state);
		/* only the string's own bytes: what follows it belongs to other objects */
		if ((state >> L->str_ascii_shift) & 1) {
			data = (size_t)L->str_ascii_size;
			n = chars;
		} else {
			data = (size_t)L->str_compact_size;
			n = chars * ((state >> L->str_kind_shift) & 7);
		}
		if (n > len - data)
			n = len - data;
		for (i = 0; i < n; i++)
			h = hash_combine(h, s[data + i]);
	}
	return h ? h : 1;
}

static size_t put_utf8(char *out, size_t at, size_t cap, uint32_t c)
{
	uint8_t b[4];
	size_t n, i;

	if (c < 0x80)
		b[0] = (uint8_t)c, n = 1;
	else if (c < 0x800)
		b[0] = (uint8_t)(0xc0 | c >> 6), b[1] = (uint8_t)(0x80 | (c & 0x3f)), n = 2;
	else if (c < 0x10000)
		b[0] = (uint8_t)(0xe0 | c >> 12), b[1] = (uint8_t)(0x80 | ((c >> 6) & 0x3f)),
		b[2] = (uint8_t)(0x80 | (c & 0x3f)), n = 3;
	else
		b[0] = (uint8_t)(0xf0 | c >> 18), b[1] = (uint8_t)(0x80 | ((c >> 12) & 0x3f)),
		b[2] = (uint8_t)(0x80 | ((c >> 6) & 0x3f)), b[3] = (uint8_t)(0x80 | (c & 0x3f)),
		n = 4;
	if (at + n > cap)
		return 0;
	for (i = 0; i < n; i++)
		out[at + i] = (char)b[i];
	return n;
}

/*
 * Copy the str object at addr into out as UTF-8 (at most cap bytes). Compact strings only:
 * code objects' names and file names always are. Returns 0 (*trunc set when cut) or -1.
 */
static int read_str(const struct pylayout *L, int pid, uintptr_t addr, char *out, size_t cap,
		    uint32_t *len, bool *trunc)
{
	uint8_t hdr[128];
	uint8_t raw[RAW_PY_MAX_STRING];
	uint32_t state, kind;
	uint64_t n;
	size_t i, at = 0, bytes;

	*len = 0;
	if ((size_t)L->str_compact_size > sizeof(hdr) ||
	    pyread(pid, hdr, addr, (size_t)L->str_compact_size) < 0)
		return -1;
	state = (uint32_t)field32(hdr, L->str_state);
	kind = (state >> L->str_kind_shift) & 7;
	n = field(hdr, L->str_length);
	if (!((state >> L->str_compact_shift) & 1) || (kind != 1 && kind != 2 && kind != 4))
		return -1;
	if ((state >> L->str_ascii_shift) & 1) {
		bytes = n < cap ? (size_t)n : cap;
		if (n > cap)
			*trunc = true;
		if (pyread(pid, out, addr + (uintptr_t)L->str_ascii_size, bytes) < 0)
			return -1;
		*len = (uint32_t)bytes;
		return 0;
	}
	bytes = (size_t)(n * kind < sizeof(raw) ? n * kind : sizeof(raw) / kind * kind);
	if (pyread(pid, raw, addr + (uintptr_t)L->str_compact_size, bytes) < 0)
		return -1;
	for (i = 0; i < bytes; i += kind) {
		uint32_t c = kind == 1   ? raw[i]
			     : kind == 2 ? (uint32_t)(raw[i] | raw[i + 1] << 8)
					 : (uint32_t)(raw[i] | raw[i + 1] << 8 | raw[i + 2] << 16 |
						      (uint32_t)raw[i + 3] << 24);
		size_t k = put_utf8(out, at, cap, c);

		if (!k) {
			*trunc = true;
			break;
		}
		at += k;
	}
	if (bytes < n * kind)
		*trunc = true;
	*len = (uint32_t)at;
	return 0;
}

/* The bytes of the bytes object at addr: 0 with *len set (cut at cap), or -1. */
static int read_bytes(const struct pylayout *L, int pid, uintptr_t addr, uint8_t *out, size_t cap,
		      uint32_t *len, bool *trunc)
{
	uint64_t n;

	if (pyread(pid, &n, addr + (uintptr_t)L->var_size, sizeof(n)) < 0)
		return -1;
	if (n > cap)
		*trunc = true;
	n = n < cap ? n : cap;
	if (pyread(pid, out, addr + (uintptr_t)L->bytes_sval, (size_t)n) < 0)
		return -1;
	*len = (uint32_t)n;
	return 0;
}

static int write_code(struct pyagent_thread *t, struct raw_writer *w, uintptr_t addr,
		      const uint8_t *code, int pid, uint64_t id)
{
	const struct pylayout *L = &pyagent_rt.L;
	struct raw_py_code c;
	bool tn = false, tl = false;
	uint64_t units;

	memset(&c, 0, sizeof(c));
	c.id = id;
	c.addr = addr;
	c.version = pyagent_rt.version;
	c.firstlineno = field32(code, L->co_firstlineno);
	c.flags = L->co_qualname >= 0 ? RAW_PY_CODE_NAME_IS_QUALNAME : 0;
	if (read_str(L, pid, (uintptr_t)field(code, L->co_filename), t->filename,
		     sizeof(t->filename), &c.filename.len, &tn) < 0 ||
	    read_str(L, pid, name_ptr(L, code), t->name, sizeof(t->name), &c.name.len, &tn) < 0)
		c.flags |= RAW_PY_CODE_UNREADABLE;
	c.filename.s = t->filename;
	c.name.s = t->name;
	if (read_bytes(L, pid, (uintptr_t)field(code, L->co_linetable), t->linetable,
		       sizeof(t->linetable), &c.linetable.len, &tl) < 0)
		return -1; /* without lines the record is worth little: the frame stays unknown */
	c.linetable.s = (const char *)t->linetable;
	if (L->minor >= 11) {
		units = field(code, L->var_size);
	} else if (pyread(pid, &units, (uintptr_t)field(code, L->co_code) + (uintptr_t)L->var_size,
			  sizeof(units)) == 0) {
		units /= 2;
	} else {
		units = 0;
	}
	c.code_size = units < UINT32_MAX / 2 ? (uint32_t)(units * 2) : 0;
	if (tn)
		c.flags |= RAW_PY_CODE_NAME_TRUNCATED;
	if (tl)
		c.flags |= RAW_PY_CODE_LINETABLE_TRUNCATED;
	return raw_py_write_code(w, &c, t->scratch, sizeof(t->scratch)) < 0 ? -1 : 0;
}

/*
 * The code cache is set-associative: PYAGENT_CODE_WAYS slots per set, the least recently used
 * replaced. Direct-mapped, two hot functions whose addresses share a slot (a few pairs in a
 * program of a hundred) evicted each other and were written again at every sample.
 */
static struct pyagent_code_slot *set_of(const struct pyagent_thread *t, uintptr_t addr)
{
	size_t set = hash_combine(0, addr) & (PYAGENT_CODE_SLOTS / PYAGENT_CODE_WAYS - 1);

	return (struct pyagent_code_slot *)&t->slots[set * PYAGENT_CODE_WAYS];
}

static struct pyagent_code_slot *find_slot(const struct pyagent_thread *t, uintptr_t addr)
{
	struct pyagent_code_slot *set = set_of(t, addr);
	int i;

	for (i = 0; i < PYAGENT_CODE_WAYS; i++)
		if (set[i].addr == addr)
			return &set[i];
	return NULL;
}

/* The slot of addr's set that a new code takes: a free one, else the least recently used. */
static struct pyagent_code_slot *victim_slot(const struct pyagent_thread *t, uintptr_t addr)
{
	struct pyagent_code_slot *set = set_of(t, addr), *v = set;
	int i;

	for (i = 0; i < PYAGENT_CODE_WAYS; i++) {
		if (!set[i].addr)
			return &set[i];
		if ((int32_t)(set[i].used - v->used) < 0)
			v = &set[i];
	}
	return v;
}

uintptr_t pycodes_cached_name(const struct pyagent_thread *t, uintptr_t addr)
{
	const struct pyagent_code_slot *slot = find_slot(t, addr);

	return slot ? slot->name : 0;
}

uint64_t pycodes_lookup(struct pyagent_thread *t, struct raw_writer *w, uintptr_t addr,
			const uint8_t *code, const uint8_t *name, int pid)
{
	struct pyagent_code_slot *slot;
	uint64_t sig = code_signature(&pyagent_rt.L, code, name, pid);

	if (!sig)
		return 0;
	slot = find_slot(t, addr);
	/* Chunks that stand alone (w->clock: -ring-buffer) each define the codes they name. */
	if (slot && slot->sig == sig && (!w->clock || slot->seq == w->seq)) {
		slot->used = ++t->code_clock;
		return slot->id;
	}
	if (write_code(t, w, addr, code, pid, t->next_id) < 0) {
		t->codes_failed++;
		return 0;
	}
	if (!slot)
		slot = victim_slot(t, addr);
	slot->addr = addr;
	slot->sig = sig;
	slot->name = name_ptr(&pyagent_rt.L, code);
	slot->seq = w->seq;
	slot->used = ++t->code_clock;
	slot->id = t->next_id++;
	t->codes_written++;
	return slot->id;
}

int pycodes_read_str(int pid, uintptr_t addr, char *out, size_t cap, uint32_t *len, bool *trunc)
{
	return read_str(&pyagent_rt.L, pid, addr, out, cap, len, trunc);
}
