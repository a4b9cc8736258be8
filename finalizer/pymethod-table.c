/* SPDX-License-Identifier: MIT */
/* The PyMethodDef tables of a module's file: which C function each Python-visible method is. */
#include <errno.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
#include "finalizer/pymethod-table.h"
#include "finalizer/sorted.h"

/*
 * CPython calls a C function that a module or a type registers by name through a PyMethodDef
 * {ml_name, ml_meth, ml_flags, ml_doc} (32 bytes on a 64-bit target), in arrays that end with
 * a zeroed entry. Three kinds of owner point at such an array, each from static data:
 *   - a static PyTypeObject: tp_name at +24, tp_methods at +232 (the layout of every version
 *     3.8 to 3.15 of a default build: PyObject_VAR_HEAD, then 26 pointer-sized fields);
 *   - a PyModuleDef: m_name at +40, m_size at +56, m_methods at +64;
 *   - a PyType_Spec {name, int basicsize, int itemsize, unsigned flags, PyType_Slot *slots},
 *     whose slots {int slot; void *pfunc} hold {Py_tp_methods = 64, the array}.
 * The file is scanned, not trusted: an entry counts only when its name points to a
 * NUL-terminated identifier in read-only data, ml_meth into executable code, ml_flags holds a
 * calling convention and only known METH_ bits, ml_doc is NULL or a string in data; an array
 * only when its zeroed entry follows; a name only when an owner of one of the three shapes
 * (its own name an identifier path, its sizes plausible) points at the array. Entries with
 * no zeroed one after them are each a PyMethodDef of its own, as Cython writes one per
 * function of a module (`__pyx_mdef_*`, made into functions by PyCFunction_NewEx with the
 * module's name; their docstrings are char arrays in writable data): each names a function
 * of the module the file is ("pandas._libs.lib" for .../pandas/_libs/lib.cpython-311-...so);
 * in the interpreter's file (python3.X, libpython3.X.so: codecs' error handlers), of none. In a PIE
 * or a shared library the pointers are R_X86_64_RELATIVE relocations (addend = target; the file
 * holds zeros there); in a fixed-address executable the file holds them. Every read is
 * bounds-checked against the segment's bytes in the file.
 *
 * cProfile's spellings (Lib/pstats.py around _lsprof's normalizeUserObj): a method of a type
 * "{method 'sort' of 'numpy.ndarray' objects}" (tp_name as written, also the full spec name of
 * a heap type); a module's function "{built-in method builtins.sorted}"; a class or static
 * method "{built-in method fromkeys}".
 */

enum {
	METH_VARARGS = 0x1,
	METH_KEYWORDS = 0x2,
	METH_NOARGS = 0x4,
	METH_O = 0x8,
	METH_CLASS = 0x10,
	METH_STATIC = 0x20,
	METH_FASTCALL = 0x80,
	METH_KNOWN = 0x3ff, /* up to METH_METHOD (0x200) */
	METH_CALLS = METH_VARARGS | METH_NOARGS | METH_O | METH_FASTCALL,
	ENTRY_SIZE = 32,
	TYPE_NAME_AT = 24,     /* tp_name */
	TYPE_METHODS_AT = 232, /* tp_methods */
	MODDEF_NAME_AT = 40,   /* m_name */
	MODDEF_SIZE_AT = 56,   /* m_size */
	MODDEF_METHODS_AT = 64,
	SPEC_SLOTS_AT = 24,
	SLOT_TP_METHODS = 64, /* Py_tp_methods */
	SLOT_MAX = 100,       /* typeslots.h numbers slots 1-83 (3.14) */
	SPEC_MAX_SLOTS = 96,
	NAME_MAX_LEN = 200,
	MAX_SEGMENTS = 32,
};

#ifndef R_AARCH64_RELATIVE
#define R_AARCH64_RELATIVE 1027
#endif
#ifndef R_AARCH64_ABS64
#define R_AARCH64_ABS64 257
#endif
/* What a pointer to a function of another file holds: a method whose C function is imported
   (CPython's Py_GenericAlias in an extension) keeps its array whole, but names nothing. */
#define IMPORTED UINT64_MAX

struct segment {
	uint64_t va, filesz;
	const uint8_t *data; /* filesz bytes of the file */
	bool write, exec;
};

struct reloc {
	uint64_t at, value; /* value IMPORTED: a symbol of another file */
};

struct image {
	struct segment seg[MAX_SEGMENTS];
	size_t nseg;
	struct reloc *rel; /* RELATIVE and absolute 64-bit relocations, sorted by at */
	size_t nrel, relcap;
};

/* An array of entries, and what owns it (NULL: nothing found yet). */
struct array {
	uint64_t start;
	size_t n;
	const char *owner; /* a type's or module's name, in the file's bytes */
	bool type;
	bool lone; /* entries not ended by a zeroed one: each a PyMethodDef of its own */
};

struct arrays {
	struct array *v; /* sorted by start (found in address order) */
	size_t n, cap;
};

/* A Py_tp_methods slot at slot_at, and a slot array start that may hold it. */
struct spec_guess {
	uint64_t slots; /* the start of the PyType_Slot array */
	uint64_t array; /* the array's start (a split moves arrays in the vector) */
};

static const struct segment *seg_of(const struct image *im, uint64_t va, uint64_t n)
{
	size_t i;

	for (i = 0; i < im->nseg; i++) {
		const struct segment *s = &im->seg[i];

		if (va >= s->va && va - s->va <= s->filesz && s->filesz - (va - s->va) >= n)
			return s;
	}
	return NULL;
}

static bool read_u64(const struct image *im, uint64_t va, uint64_t *v)
{
	const struct segment *s = seg_of(im, va, 8);

	*v = 0;
	if (!s)
		return false;
	memcpy(v, s->data + (va - s->va), 8); /* x86_64 and aarch64: little-endian */
	return true;
}

static bool read_u32(const struct image *im, uint64_t va, uint32_t *v)
{
	const struct segment *s = seg_of(im, va, 4);

	*v = 0;
	if (!s)
		return false;
	memcpy(v, s->data + (va - s->va), 4);
	return true;
}

/* The pointer stored at va once the dynamic linker has run: its relocation, else the bytes. */
static uint64_t read_ptr(const struct image *im, uint64_t va)
{
	size_t i = sorted_upper_u64(im->rel, im->nrel, sizeof(*im->rel), offsetof(struct reloc, at),
				    va);
	uint64_t v;

	if (i && im->rel[i - 1].at == va)
		return im->rel[i - 1].value;
	read_u64(im, va, &v);
	return v;
}

/* The NUL-terminated string at va in read-only data whose characters fit, or NULL. */
static const char *read_name(const struct image *im, uint64_t va, bool dots)
{
	const struct segment *s = seg_of(im, va, 1);
	const char *p;
	size_t i, max;

	if (!s || s->write || s->exec)
		return NULL;
	p = (const char *)s->data + (va - s->va);
	max = (size_t)(s->filesz - (va - s->va));
	for (i = 0; i < max && i <= NAME_MAX_LEN && p[i]; i++) {
		char c = p[i];
		bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';

		if (alpha || (i && c >= '0' && c <= '9'))
			continue;
		if (dots && c == '.' && i && p[i - 1] != '.')
			continue;
		return NULL;
	}
	return i && i < max && i <= NAME_MAX_LEN && !p[i] && p[i - 1] != '.' ? p : NULL;
}

/* A NUL-terminated string at va in data (read-only, or writable: Cython's docstrings are
   char arrays), within its segment's bytes. */
static bool is_text(const struct image *im, uint64_t va)
{
	const struct segment *s = seg_of(im, va, 1);

	return s && !s->exec &&
	       memchr(s->data + (va - s->va), 0, (size_t)(s->filesz - (va - s->va)));
}

static bool is_code(const struct image *im, uint64_t va)
{
	const struct segment *s = seg_of(im, va, 1);

	return s && s->exec;
}

/* 1: a method entry at va; 0: the zeroed entry that ends an array; -1: neither. */
static int entry_at(const struct image *im, uint64_t va)
{
	uint64_t name = read_ptr(im, va), meth = read_ptr(im, va + 8), doc = read_ptr(im, va + 24);
	uint64_t flags;

	if (!read_u64(im, va + 16, &flags) || !seg_of(im, va, ENTRY_SIZE))
		return -1;
	if (!name)
		return !meth && !flags && !doc ? 0 : -1;
	if (flags & ~(uint64_t)METH_KNOWN || !(flags & METH_CALLS) ||
	    (meth != IMPORTED && !is_code(im, meth)))
		return -1;
	if (doc && !is_text(im, doc))
		return -1;
	return read_name(im, name, false) ? 1 : -1;
}

/* Every array of entries in the data of the file, ended by its zeroed entry. */
static int find_arrays(const struct image *im, struct arrays *a)
{
	size_t i;

	for (i = 0; i < im->nseg; i++) {
		const struct segment *s = &im->seg[i];
		uint64_t va = (s->va + 7) & ~(uint64_t)7, end = s->va + s->filesz;

		if (s->exec)
			continue;
		while (va + ENTRY_SIZE <= end) {
			uint64_t p = va;
			size_t n = 0;

			while (p + ENTRY_SIZE <= end && entry_at(im, p) == 1) {
				p += ENTRY_SIZE;
				n++;
			}
			if (n && p + ENTRY_SIZE <= end && entry_at(im, p) == 0) {
				if (GROW(a->v, a->n + 1, a->cap))
					return -ENOMEM;
				a->v[a->n++] = (struct array){ .start = va, .n = n };
				va = p + ENTRY_SIZE;
			} else if (n) {
				/* Cython's __pyx_mdef_*: one entry each, side by side, for the
				   functions its module makes with PyCFunction_NewEx. */
				if (GROW(a->v, a->n + 1, a->cap))
					return -ENOMEM;
				a->v[a->n++] = (struct array){ .start = va, .n = n, .lone = true };
				va = p;
			} else {
				va += 8;
			}
		}
	}
	return 0;
}

/* The array that starts at start; with inside, also one that holds an entry there. */
static struct array *array_at(struct arrays *a, uint64_t start, bool inside)
{
	size_t i =
		sorted_upper_u64(a->v, a->n, sizeof(*a->v), offsetof(struct array, start), start);
	struct array *r = i ? &a->v[i - 1] : NULL;

	if (!r || (r->start != start && (!inside || start >= r->start + r->n * ENTRY_SIZE ||
					 (start - r->start) % ENTRY_SIZE)))
		return NULL;
	return r;
}

/*
 * An owner points inside a run found as one array: lone entries (Cython's) right before a
 * module's or a type's own array. The run is split there, its entries before start lone.
 */
static struct array *array_split(struct arrays *a, struct array *r, uint64_t start)
{
	size_t i = (size_t)(r - a->v) + 1, k = (size_t)((start - r->start) / ENTRY_SIZE);

	if (GROW(a->v, a->n + 1, a->cap))
		return NULL;
	memmove(&a->v[i + 1], &a->v[i], (a->n - i) * sizeof(*a->v));
	a->n++;
	a->v[i] = (struct array){ .start = start, .n = a->v[i - 1].n - k };
	a->v[i - 1].n = k;
	a->v[i - 1].lone = true;
	return &a->v[i];
}

/* Calls fn(im, ctx, at, value) for every pointer-sized word of the file's data. */
static int each_word(const struct image *im, void *ctx,
		     int (*fn)(const struct image *im, void *ctx, uint64_t at, uint64_t value))
{
	size_t i;
	int ret;

	for (i = 0; i < im->nseg; i++) {
		const struct segment *s = &im->seg[i];
		uint64_t va = (s->va + 7) & ~(uint64_t)7, end = s->va + s->filesz;

		if (s->exec)
			continue;
		for (; va + 8 <= end; va += 8)
			if ((ret = fn(im, ctx, va, read_ptr(im, va))))
				return ret;
	}
	return 0;
}

struct owner_pass {
	struct arrays *a;
	struct spec_guess *g; /* Py_tp_methods slots: the slot arrays that may hold them */
	size_t ng, gcap;
};

static bool plausible_size(uint64_t v)
{
	return v < (1u << 24);
}

/*
 * PyModuleDef_HEAD_INIT: after the reference count, ob_type, m_init, m_index and m_copy are
 * zero. (Whatever precedes another array could pass the other checks: sys's functions were
 * once taken for a type's.)
 */
static bool moddef_head(const struct image *im, uint64_t def)
{
	uint64_t v;
	unsigned k;

	for (k = 8; k <= 32; k += 8)
		if (!read_u64(im, def + k, &v) || v || read_ptr(im, def + k))
			return false;
	return true;
}

/* PyVarObject_HEAD_INIT(type, 0): ob_size 0; tp_dealloc NULL or code. */
static bool type_head(const struct image *im, uint64_t type)
{
	uint64_t size, dealloc = read_ptr(im, type + 48);

	return read_u64(im, type + 16, &size) && !size && !read_ptr(im, type + 16) &&
	       (!dealloc || dealloc == IMPORTED || is_code(im, dealloc));
}

/* Does a static type or a module definition hold this array at at, or a type spec's slot? */
static int owner_word(const struct image *im, void *ctx, uint64_t at, uint64_t value)
{
	struct owner_pass *op = ctx;
	struct array *a = value ? array_at(op->a, value, true) : NULL;
	uint64_t basic, item, msize;
	uint32_t slot, pad, k;
	const char *name;
	bool type;

	if (!a || a->owner || a->lone)
		return 0;
	if (at >= MODDEF_METHODS_AT && moddef_head(im, at - MODDEF_METHODS_AT) &&
	    (name = read_name(im, read_ptr(im, at - MODDEF_METHODS_AT + MODDEF_NAME_AT), true)) &&
	    read_u64(im, at - MODDEF_METHODS_AT + MODDEF_SIZE_AT, &msize) &&
	    (msize == UINT64_MAX || plausible_size(msize))) {
		type = false;
	} else if (at >= TYPE_METHODS_AT && type_head(im, at - TYPE_METHODS_AT) &&
		   (name = read_name(im, read_ptr(im, at - TYPE_METHODS_AT + TYPE_NAME_AT),
				     true)) &&
		   read_u64(im, at - TYPE_METHODS_AT + 32, &basic) && basic >= 16 &&
		   plausible_size(basic) && read_u64(im, at - TYPE_METHODS_AT + 40, &item) &&
		   plausible_size(item)) {
		type = true;
	} else {
		name = NULL;
	}
	if (name) {
		if (a->start != value && !(a = array_split(op->a, a, value)))
			return -ENOMEM;
		a->owner = name;
		a->type = type;
		return 0;
	}
	if (a->start != value)
		return 0; /* a type spec's slots name whole arrays only */
	/* A slot {Py_tp_methods, array}: its array starts at most SPEC_MAX_SLOTS slots before. */
	if (at < 8 || !read_u32(im, at - 8, &slot) || !read_u32(im, at - 4, &pad) ||
	    slot != SLOT_TP_METHODS || pad)
		return 0;
	for (k = 0; k < SPEC_MAX_SLOTS && at >= 8 + 16 * (uint64_t)k; k++) {
		uint64_t s = at - 8 - 16 * (uint64_t)k;

		if (k && (!read_u32(im, s, &slot) || !read_u32(im, s + 4, &pad) || !slot ||
			  slot > SLOT_MAX || pad || !read_ptr(im, s + 8)))
			break;
		if (GROW(op->g, op->ng + 1, op->gcap))
			return -ENOMEM;
		op->g[op->ng++] = (struct spec_guess){ .slots = s, .array = a->start };
	}
	return 0;
}

static int guess_cmp(const void *x, const void *y)
{
	const struct spec_guess *a = x, *b = y;

	return a->slots < b->slots ? -1 : a->slots > b->slots;
}

/* Does a type spec point at one of the guessed slot arrays? Then its name owns the array. */
static int spec_word(const struct image *im, void *ctx, uint64_t at, uint64_t value)
{
	struct owner_pass *op = ctx;
	size_t i = value ? sorted_upper_u64(op->g, op->ng, sizeof(*op->g),
					    offsetof(struct spec_guess, slots), value)
			 : 0;
	uint32_t basic, item;
	const char *name;

	if (!i || op->g[i - 1].slots != value || at < SPEC_SLOTS_AT)
		return 0;
	name = read_name(im, read_ptr(im, at - SPEC_SLOTS_AT), true);
	if (!name || !read_u32(im, at - 16, &basic) || !read_u32(im, at - 12, &item) ||
	    !plausible_size(basic) || !plausible_size(item))
		return 0;
	/* Equal slot starts are neighbours: each guess of this start is answered. */
	for (; i > 0 && op->g[i - 1].slots == value; i--) {
		struct array *a = array_at(op->a, op->g[i - 1].array, false);

		if (a && !a->owner && !a->lone) {
			a->owner = name;
			a->type = true;
		}
	}
	return 0;
}

/*
 * The name Python gives the module: an extension module's file in a package directory is
 * imported with the package's name before its own ("numpy.core._multiarray_umath"), when
 * the file's base name starts with m_name.
 */
static void module_name(const char *m_name, const char *path, char *out, size_t cap)
{
	static const char *const roots[] = { "/site-packages/", "/dist-packages/" };
	const char *base = path ? strrchr(path, '/') : NULL, *from = NULL, *p;
	size_t i, len, k = 0;

	if (!m_name)
		m_name = "";
	len = strlen(m_name);
	snprintf(out, cap, "%s", m_name);
	if (!base || strchr(m_name, '.') || strncmp(base + 1, m_name, len) || base[1 + len] != '.')
		return;
	for (i = 0; i < sizeof(roots) / sizeof(roots[0]); i++)
		if ((p = strstr(path, roots[i])) && p < base)
			from = p + strlen(roots[i]);
	if (!from)
		return;
	for (p = from; p <= base && k + 1 < cap; p++)
		out[k++] = p == base ? '.' : *p == '/' ? '.' : *p;
	out[k] = 0;
	if (k + len < cap)
		snprintf(out + k, cap - k, "%s", m_name);
	else
		snprintf(out, cap, "%s", m_name);
}

static int method_cmp(const void *x, const void *y)
{
	const struct pymethod *a = x, *b = y;

	if (a->addr != b->addr)
		return a->addr < b->addr ? -1 : 1;
	return a->rank != b->rank ? (a->rank < b->rank ? -1 : 1) : strcmp(a->name, b->name);
}

/*
 * The named entries of every owned array, sorted by address. One function under several
 * names (lock.acquire, acquire_lock and __enter__; a function two types share) keeps one: a
 * name that is not a dunder first, then the first in the file.
 */
static int name_methods(struct pymethod_table *t, const struct image *im, const struct arrays *a,
			const char *path)
{
	char mod[NAME_MAX_LEN + 256], buf[sizeof(mod) + NAME_MAX_LEN + 64];
	size_t i, j, k;

	for (i = 0; i < a->n; i++) {
		const struct array *ar = &a->v[i];

		if (ar->lone) {
			/* The module's own function: named after the module the file is. */
			const char *base = path ? strrchr(path, '/') : NULL;
			char stem[NAME_MAX_LEN + 1];

			base = base ? base + 1 : path;
			if (!base)
				continue;
			snprintf(stem, sizeof(stem), "%.*s", (int)strcspn(base, "."), base);
			/* The interpreter's own (codecs' error handlers) belong to no module. */
			if (!strncmp(stem, "python", 6) || !strncmp(stem, "libpython", 9))
				mod[0] = 0;
			else
				module_name(stem, path, mod, sizeof(mod));
		} else if (!ar->owner) {
			continue;
		} else if (!ar->type) {
			module_name(ar->owner, path, mod, sizeof(mod));
		}
		for (j = 0; j < ar->n; j++) {
			uint64_t e = ar->start + j * ENTRY_SIZE, flags;
			const char *name = read_name(im, read_ptr(im, e), false);

			read_u64(im, e + 16, &flags);
			if (!ar->type && !name)
				continue;
			if (!ar->type && !mod[0])
				snprintf(buf, sizeof(buf), "{built-in method %s}", name);
			else if (!ar->type)
				snprintf(buf, sizeof(buf), "{built-in method %s.%s}", mod, name);
			else if (flags & (METH_CLASS | METH_STATIC))
				snprintf(buf, sizeof(buf), "{built-in method %s}", name);
			else
				snprintf(buf, sizeof(buf), "{method '%s' of '%s' objects}", name,
					 ar->owner);
			if (read_ptr(im, e + 8) == IMPORTED)
				continue;
			if (GROW(t->v, t->n + 1, t->cap))
				return -ENOMEM;
			t->v[t->n].addr = read_ptr(im, e + 8);
			t->v[t->n].rank = (uint32_t)(t->n & 0x7fffffff) |
					  (!strncmp(name, "__", 2) ? 0x80000000u : 0);
			if (!(t->v[t->n].name = strdup(buf)))
				return -ENOMEM;
			t->n++;
		}
	}
	if (t->n)
		qsort(t->v, t->n, sizeof(*t->v), method_cmp);
	for (i = 0, k = 0; i < t->n; i++) {
		if (k && t->v[k - 1].addr == t->v[i].addr) {
			free(t->v[i].name);
			continue;
		}
		t->v[k++] = t->v[i];
	}
	t->n = k;
	return 0;
}

/* Does the file use the Python C API: a dynamic symbol "Py..." or "_Py..."? */
static bool uses_python(Elf *elf)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *d;
		GElf_Sym sym;
		size_t i, n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM || !sh.sh_entsize ||
		    !(d = elf_getdata(scn, NULL)))
			continue;
		n = d->d_size / sh.sh_entsize;
		for (i = 0; i < n && gelf_getsym(d, (int)i, &sym); i++) {
			const char *name = elf_strptr(elf, sh.sh_link, sym.st_name);

			if (name && (!strncmp(name, "Py", 2) || !strncmp(name, "_Py", 3)))
				return true;
		}
	}
	return false;
}

static int reloc_cmp(const void *x, const void *y)
{
	const struct reloc *a = x, *b = y;

	return a->at < b->at ? -1 : a->at > b->at;
}

/*
 * A relocation's value: RELATIVE, its addend; absolute 64-bit, its symbol's address plus the
 * addend (an exported function of the file itself: a library's pointers to what it exports
 * can be interposed, so they are not RELATIVE), IMPORTED for a symbol of another file.
 * False for other types.
 */
static bool reloc_value(const GElf_Rela *r, unsigned relative, unsigned abs64, Elf_Data *syms,
			uint64_t *v)
{
	unsigned type = (unsigned)GELF_R_TYPE(r->r_info);
	GElf_Sym sym;

	if (type == relative) {
		*v = (uint64_t)r->r_addend;
		return true;
	}
	if (type != abs64)
		return false;
	if (!syms || !gelf_getsym(syms, (int)GELF_R_SYM(r->r_info), &sym) ||
	    sym.st_shndx == SHN_UNDEF || GELF_ST_TYPE(sym.st_info) == STT_GNU_IFUNC)
		*v = IMPORTED;
	else
		*v = sym.st_value + (uint64_t)r->r_addend;
	return true;
}

/* The loaded segments' bytes and the relocations of pointers: what the data holds loaded. */
static int image_load(struct image *im, Elf *elf)
{
	size_t size, nph, i;
	const uint8_t *raw = (const uint8_t *)elf_rawfile(elf, &size);
	GElf_Ehdr eh;
	Elf_Scn *scn = NULL;
	unsigned relative, abs64;

	if (!raw || !gelf_getehdr(elf, &eh) || elf_getphdrnum(elf, &nph) ||
	    gelf_getclass(elf) != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB)
		return 0;
	relative = eh.e_machine == EM_X86_64    ? R_X86_64_RELATIVE
		   : eh.e_machine == EM_AARCH64 ? R_AARCH64_RELATIVE
						: 0;
	abs64 = eh.e_machine == EM_X86_64 ? R_X86_64_64 : R_AARCH64_ABS64;
	if (!relative)
		return 0;
	for (i = 0; i < nph && im->nseg < MAX_SEGMENTS; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD || !ph.p_filesz ||
		    ph.p_offset > size || size - ph.p_offset < ph.p_filesz ||
		    ph.p_vaddr + ph.p_filesz < ph.p_vaddr)
			continue;
		im->seg[im->nseg++] = (struct segment){ .va = ph.p_vaddr,
							.filesz = ph.p_filesz,
							.data = raw + ph.p_offset,
							.write = (ph.p_flags & PF_W) != 0,
							.exec = (ph.p_flags & PF_X) != 0 };
	}
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d, *syms;
		Elf_Scn *symscn;
		GElf_Rela r;
		uint64_t v;
		size_t n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA || !sh.sh_entsize ||
		    (sh.sh_flags & SHF_INFO_LINK) || !(d = elf_getdata(scn, NULL)))
			continue;
		symscn = sh.sh_link ? elf_getscn(elf, sh.sh_link) : NULL;
		syms = symscn ? elf_getdata(symscn, NULL) : NULL;
		n = d->d_size / sh.sh_entsize;
		for (i = 0; i < n && gelf_getrela(d, (int)i, &r); i++) {
			if (!reloc_value(&r, relative, abs64, syms, &v))
				continue;
			if (GROW(im->rel, im->nrel + 1, im->relcap))
				return -ENOMEM;
			im->rel[im->nrel++] = (struct reloc){ r.r_offset, v };
		}
	}
	if (im->nrel)
		qsort(im->rel, im->nrel, sizeof(*im->rel), reloc_cmp);
	return 0;
}

int pymethod_table_load(struct pymethod_table *t, Elf *elf, const char *path)
{
	struct image im = { 0 };
	struct arrays a = { 0 };
	struct owner_pass op = { .a = &a };
	int ret;

	memset(t, 0, sizeof(*t));
	if (!elf || !uses_python(elf))
		return 0;
	ret = image_load(&im, elf);
	if (!ret && im.nseg)
		ret = find_arrays(&im, &a);
	if (!ret && a.n)
		ret = each_word(&im, &op, owner_word);
	if (!ret && op.ng) {
		qsort(op.g, op.ng, sizeof(*op.g), guess_cmp);
		ret = each_word(&im, &op, spec_word);
	}
	if (!ret)
		ret = name_methods(t, &im, &a, path);
	if (ret)
		pymethod_table_release(t);
	free(op.g);
	free(a.v);
	free(im.rel);
	return ret;
}

void pymethod_table_release(struct pymethod_table *t)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		free(t->v[i].name);
	free(t->v);
	memset(t, 0, sizeof(*t));
}

const char *pymethod_table_find(const struct pymethod_table *t, uint64_t addr)
{
	size_t i =
		sorted_upper_u64(t->v, t->n, sizeof(*t->v), offsetof(struct pymethod, addr), addr);

	return i && t->v[i - 1].addr == addr ? t->v[i - 1].name : NULL;
}
