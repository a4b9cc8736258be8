/* SPDX-License-Identifier: MIT */
/* A thread's name in Python: its threading.Thread's _name, read from memory outside the handler. */
#include <string.h>
#include <unistd.h>
#include "collector/agent/python/python-private.h"

/*
 * py-spy shows threading's names; the interpreter's thread states do not hold them, and
 * running Python code (or taking the GIL) would change the program. So the name is read as
 * the walk reads frames, by guarded copies, from the objects:
 *   - the handler notes each thread's outermost Python frame (python-walk.c);
 *   - here, outside the handler: when that frame runs threading's Thread._bootstrap (or
 *     _bootstrap_inner), its first local, self, is the thread's Thread object; its _name is
 *     an entry of its instance dict, whose layout each version changed (struct
 *     pyobj_layout): 3.10 a dict at tp_dictoffset (split keys or combined), 3.11 values or a
 *     dict before the object, 3.12 one tagged word there, 3.13+ values inline after the
 *     object unless a dict took them over. Split values are found by the index of the key
 *     in the type's shared keys;
 *   - that frame's globals are threading's module dict: its _main_thread is the main
 *     thread's Thread, read the same way.
 * Keys are compared by the address of the interned str found first, else by their bytes.
 * Every value read is checked (a code object of the code type, a str of a str type) before
 * it is believed: the frame or the object may be gone by the time it is read.
 */

#define MAX_ENTRIES      1024        /* a dict's entries scanned at most */
#define ENTRIES_CHUNK    64          /* entries copied a call */
#define UNICODE_SUBCLASS (1ul << 28) /* Py_TPFLAGS_UNICODE_SUBCLASS, every version */

/* Where a key was found last: (keys object, index, key string), tried first next time. */
struct key_cache {
	uintptr_t keys, key;
	uint64_t index;
};

static struct key_cache name_cache, main_cache;
static uintptr_t module_globals; /* threading's dict, from the first _bootstrap frame seen */

static int pid_now(void)
{
	return (int)getpid();
}

static int word(uintptr_t addr, uint64_t *v)
{
	return pyread(pid_now(), v, addr, sizeof(*v));
}

static const struct pyobj_layout *layout(void)
{
	return pyobj_layout_find(pyagent_rt.L.minor);
}

/* Whether the compact ASCII str at addr is s. */
static bool str_is(uintptr_t addr, const char *s)
{
	const struct pylayout *L = &pyagent_rt.L;
	size_t n = strlen(s);
	uint8_t buf[160];
	uint64_t len;
	uint32_t state;

	if ((size_t)L->str_ascii_size + n > sizeof(buf) ||
	    pyread(pid_now(), buf, addr, (size_t)L->str_ascii_size + n) < 0)
		return false;
	memcpy(&len, buf + L->str_length, sizeof(len));
	memcpy(&state, buf + L->str_state, sizeof(state));
	return len == n && ((state >> L->str_compact_shift) & 1) &&
	       ((state >> L->str_ascii_shift) & 1) && memcmp(buf + L->str_ascii_size, s, n) == 0;
}

/* The type of the object at addr, and its tp_flags. */
static int type_of(uintptr_t addr, uintptr_t *type, uint64_t *flags)
{
	uint64_t t;

	if (word(addr + PYLAYOUT_OB_TYPE, &t) < 0 || !t)
		return -1;
	*type = (uintptr_t)t;
	return word(*type + (uintptr_t)layout()->tp_flags, flags);
}

/* Geometry of the keys object at keys: where its entries start, their size and fields. */
struct keys_shape {
	uintptr_t entries;
	size_t size, key_off, value_off;
	uint64_t n;
};

static int keys_shape(uintptr_t keys, struct keys_shape *k)
{
	const struct pyobj_layout *O = layout();
	uint8_t hdr[64];
	uint64_t v;

	if ((size_t)O->dk_indices > sizeof(hdr) ||
	    pyread(pid_now(), hdr, keys, (size_t)O->dk_indices) < 0)
		return -1;
	memcpy(&k->n, hdr + O->dk_nentries, sizeof(k->n));
	if (O->dk_size >= 0) { /* 3.10: indices of 1, 2, 4 or 8 bytes by the table's size */
		memcpy(&v, hdr + O->dk_size, sizeof(v));
		if (v > (1u << 20))
			return -1;
		k->entries = keys + (uintptr_t)O->dk_indices +
			     (uintptr_t)(v * (v <= 0xff     ? 1
					      : v <= 0xffff ? 2
							    : 4));
		k->size = (size_t)O->entry_size, k->key_off = 8, k->value_off = 16;
	} else {
		if (hdr[O->dk_log2_index_bytes] > 23)
			return -1;
		k->entries = keys + (uintptr_t)O->dk_indices + (1ul << hdr[O->dk_log2_index_bytes]);
		if (hdr[O->dk_kind] == 0) /* DICT_KEYS_GENERAL: hash, key, value */
			k->size = (size_t)O->entry_size, k->key_off = 8, k->value_off = 16;
		else
			k->size = (size_t)O->uentry_size, k->key_off = 0, k->value_off = 8;
	}
	return k->n <= MAX_ENTRIES ? 0 : -1;
}

/*
 * The value of key name in the keys object keys: from its entry, or when values is not 0
 * (split), from values[index]. 0 when absent or unreadable.
 */
static uintptr_t keys_find(uintptr_t keys, uintptr_t values, const char *name, struct key_cache *c)
{
	uint8_t buf[ENTRIES_CHUNK * 24];
	struct keys_shape k;
	uint64_t i, j, key, v, found = UINT64_MAX;
	int pass;

	if (!keys || keys_shape(keys, &k) < 0 || k.size > 24)
		return 0;
	if (c->keys == keys && c->index < k.n &&
	    word(k.entries + c->index * k.size + k.key_off, &key) == 0 && key == c->key)
		found = c->index;
	/* by the address of the key found before, then by the keys' bytes */
	for (pass = c->key ? 0 : 1; pass < 2 && found == UINT64_MAX; pass++)
		for (i = 0; i < k.n && found == UINT64_MAX; i += ENTRIES_CHUNK) {
			uint64_t m = k.n - i < ENTRIES_CHUNK ? k.n - i : ENTRIES_CHUNK;

			if (pyread(pid_now(), buf, k.entries + i * k.size, m * k.size) < 0)
				return 0;
			for (j = 0; j < m && found == UINT64_MAX; j++) {
				memcpy(&key, buf + j * k.size + k.key_off, sizeof(key));
				if (key && (pass == 0 ? key == c->key : str_is(key, name)))
					found = i + j;
			}
		}
	if (found == UINT64_MAX || word(k.entries + found * k.size + k.key_off, &key) < 0)
		return 0;
	*c = (struct key_cache){ keys, (uintptr_t)key, found };
	if (values)
		return word(values + (uintptr_t)layout()->values + found * 8, &v) == 0 ? v : 0;
	return word(k.entries + found * k.size + k.value_off, &v) == 0 ? v : 0;
}

/* The value of name in the dict object at dict (split or combined). */
static uintptr_t dict_find(uintptr_t dict, const char *name, struct key_cache *c)
{
	const struct pyobj_layout *O = layout();
	uint64_t keys, values;

	if (!dict || word(dict + (uintptr_t)O->ma_keys, &keys) < 0 ||
	    word(dict + (uintptr_t)O->ma_values, &values) < 0)
		return 0;
	return keys_find((uintptr_t)keys, (uintptr_t)values, name, c);
}

/* The value of the instance attribute name of the object at obj (from its dict). */
static uintptr_t attr_find(uintptr_t obj, const char *name, struct key_cache *c)
{
	const struct pyobj_layout *O = layout();
	uintptr_t type;
	uint64_t flags, off, dict, values, keys;
	uint8_t valid;

	if (type_of(obj, &type, &flags) < 0)
		return 0;
	if (!(flags & (uint64_t)O->flag_managed_dict)) { /* 3.10, or a dict at tp_dictoffset */
		if (word(type + (uintptr_t)O->tp_dictoffset, &off) < 0 || (int64_t)off <= 0 ||
		    word(obj + off, &dict) < 0)
			return 0;
		return dict_find((uintptr_t)dict, name, c);
	}
	if (word(type + (uintptr_t)O->ht_cached_keys, &keys) < 0)
		return 0;
	if (flags & (uint64_t)O->flag_inline_values) { /* 3.13+: values after the object */
		if (word(type + (uintptr_t)O->tp_basicsize, &off) < 0 || off > 4096 ||
		    pyread(pid_now(), &valid, obj + off + (uintptr_t)O->values_valid, 1) < 0)
			return 0;
		if (valid)
			return keys_find((uintptr_t)keys, obj + off, name, c);
	}
	values = 0;
	if ((O->managed_values != -1 && /* negative: before the object */
	     word(obj + (uintptr_t)(intptr_t)O->managed_values, &values) < 0) ||
	    word(obj + (uintptr_t)(intptr_t)O->managed_dict, &dict) < 0)
		return 0;
	if (values) /* 3.11 */
		return keys_find((uintptr_t)keys, (uintptr_t)values, name, c);
	if (O->dorv_tagged && (dict & 1)) /* 3.12: values - 1 */
		return keys_find((uintptr_t)keys, (uintptr_t)dict + 1, name, c);
	return dict_find((uintptr_t)dict, name, c);
}

/* The threading.Thread at obj's name, into out (NUL-terminated): 0, or -1. */
static int thread_obj_name(uintptr_t obj, char *out, size_t cap)
{
	uintptr_t s, type;
	uint64_t flags;
	uint32_t len;
	bool trunc = false;

	s = obj ? attr_find(obj, "_name", &name_cache) : 0;
	if (!s || type_of(s, &type, &flags) < 0 || !(flags & UNICODE_SUBCLASS) ||
	    pycodes_read_str(pid_now(), s, out, cap - 1, &len, &trunc) < 0 || !len)
		return -1;
	out[len] = '\0';
	return 0;
}

int pyagent_thread_self(uintptr_t frame, struct pyagent_tname *st)
{
	const struct pylayout *L = &pyagent_rt.L;
	const struct pyobj_layout *O = layout();
	uintptr_t tag = ~(uintptr_t)L->fr_code_tag, type;
	uint64_t code, name, self, globals, flags, ctype;

	if (__atomic_load_n(&pyagent_rt.state, __ATOMIC_ACQUIRE) != PYAGENT_FOUND || !O || !frame)
		return -1;
	/* the frame runs Thread._bootstrap: its code's name says so */
	if (word(frame + (uintptr_t)L->fr_code, &code) < 0 ||
	    word((code & tag) + PYLAYOUT_OB_TYPE, &ctype) < 0 || ctype != pyagent_rt.code_type ||
	    word((code & tag) + (uintptr_t)L->co_name, &name) < 0 ||
	    !(str_is(name, "_bootstrap") || str_is(name, "_bootstrap_inner")) ||
	    word(frame + (uintptr_t)O->fr_localsplus, &self) < 0 ||
	    word(frame + (uintptr_t)O->fr_globals, &globals) < 0 ||
	    type_of((uintptr_t)self & tag, &type, &flags) < 0)
		return -1;
	st->frame = frame;
	st->self = (uintptr_t)self & tag;
	st->type = type;
	st->globals = (uintptr_t)globals;
	return 0;
}

int pyagent_thread_name(struct pyagent_tname *st, uintptr_t frame, char *out, size_t cap)
{
	uintptr_t type;
	uint64_t flags;

	if (__atomic_load_n(&pyagent_rt.state, __ATOMIC_ACQUIRE) != PYAGENT_FOUND || !layout() ||
	    cap < 2)
		return -1;
	if (frame && frame != st->frame) {
		memset(st, 0, sizeof(*st));
		st->frame = frame;
		if (pyagent_thread_self(frame, st) < 0)
			return -1;
	}
	if (!module_globals && st->globals)
		module_globals = st->globals;
	/* the same object still (not freed and replaced), then its name */
	if (!st->self || type_of(st->self, &type, &flags) < 0 || type != st->type)
		return -1;
	return thread_obj_name(st->self, out, cap);
}

int pyagent_main_thread_name(char *out, size_t cap)
{
	if (__atomic_load_n(&pyagent_rt.state, __ATOMIC_ACQUIRE) != PYAGENT_FOUND || !layout() ||
	    !module_globals || cap < 2)
		return -1;
	return thread_obj_name(dict_find(module_globals, "_main_thread", &main_cache), out, cap);
}

void pyagent_thread_names_reset(void)
{
	memset(&name_cache, 0, sizeof(name_cache));
	memset(&main_cache, 0, sizeof(main_cache));
	module_globals = 0;
}
