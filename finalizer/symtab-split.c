/* SPDX-License-Identifier: MIT */
/* Names for the split-off parts of exported functions in stripped binaries ("name.cold"). */
#include <errno.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
#include "finalizer/eh-frame.h"
#include "finalizer/symtab.h"

/*
 * gcc's hot/cold splitting (and profile-guided builds, which may move most of a function
 * there) puts part of a function in a block of its own, which only .symtab names
 * ("_PyEval_EvalFrameDefault.cold"). A stripped binary keeps .dynsym alone, so samples in
 * that block had no name, and the finalizer could not tell the Python eval loop (Debian's
 * CPython 3.14 runs its opcodes there). Such a block is recognised by three facts that hold
 * for split parts and not for the static functions around them:
 *   - .eh_frame describes it as a function of its own (its start is an FDE's, see
 *     finalizer/eh-frame.c), and no symbol covers it;
 *   - a direct jump (jmp or jcc rel32, not a call) inside an exported function lands on that
 *     start;
 *   - a direct jump inside the block lands back inside that function (a tail call from the
 *     function to a static one never comes back that way).
 * The block, as long as its FDE says (and never past the next one's start), is then named
 * "<function>.cold". Decoding is by
 * byte patterns, not instructions; the two-way jump test is what keeps a stray pattern from
 * naming anything.
 */

/* The bytes of [addr, addr + len) from an executable section of elf, or NULL. */
static const uint8_t *code_at(Elf *elf, uint64_t addr, uint64_t len)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    !(sh.sh_flags & SHF_EXECINSTR) || addr < sh.sh_addr ||
		    addr - sh.sh_addr > sh.sh_size || len > sh.sh_size - (addr - sh.sh_addr))
			continue;
		d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf || d->d_size < sh.sh_size)
			return NULL;
		return (const uint8_t *)d->d_buf + (addr - sh.sh_addr);
	}
	return NULL;
}

static int32_t s32(const uint8_t *p)
{
	int32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* The target of a jmp/jcc rel32 at code[i] (an instruction at address at + i), or 0. */
static uint64_t jump_target(const uint8_t *code, size_t len, size_t i, uint64_t at)
{
	if (code[i] == 0xe9 && i + 5 <= len)
		return at + i + 5 + (uint64_t)(int64_t)s32(code + i + 1);
	if (code[i] == 0x0f && (code[i + 1] & 0xf0) == 0x80 && i + 6 <= len)
		return at + i + 6 + (uint64_t)(int64_t)s32(code + i + 2);
	return 0;
}

/* A jump inside [lo, hi) lands in [to, to_end). */
static bool jumps_into(Elf *elf, uint64_t lo, uint64_t hi, uint64_t to, uint64_t to_end)
{
	const uint8_t *code = code_at(elf, lo, hi - lo);
	size_t i;

	for (i = 0; code && i + 1 < hi - lo; i++) {
		uint64_t t = jump_target(code, hi - lo, i, lo);

		if (t >= to && t < to_end)
			return true;
	}
	return false;
}

struct part {
	uint64_t start, end;
	const char *owner;
};

static int part_cmp(const void *a, const void *b)
{
	const struct part *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static int sym_cmp(const void *a, const void *b)
{
	const struct symtab_sym *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* Look for the split parts of every sized function of t; collect them in *parts. */
static int find_parts(const struct symtab *t, Elf *elf, const struct fde_table *fdes,
		      struct part **parts, size_t *nparts, size_t *cap)
{
	size_t s, i;

	for (s = 0; s < t->n; s++) {
		const struct symtab_sym *f = &t->syms[s];
		const uint8_t *code = f->size ? code_at(elf, f->start, f->size) : NULL;

		for (i = 0; code && i + 1 < f->size; i++) {
			uint64_t to = jump_target(code, f->size, i, f->start);
			const struct fde_range *r;

			if (!to || (to >= f->start && to < f->start + f->size) ||
			    !(r = fde_table_at(fdes, to)) || symtab_find_addr(t, to))
				continue;
			/* the FDE's own extent, which ends before the next FDE's start */
			if (r->end - to > (64u << 20) ||
			    !jumps_into(elf, to, r->end, f->start, f->start + f->size))
				continue;
			if (array_reserve(parts, cap, *nparts + 1, sizeof(**parts)))
				return -ENOMEM;
			(*parts)[(*nparts)++] = (struct part){ to, r->end, f->name };
		}
	}
	return 0;
}

int symtab_name_split_parts(struct symtab *t, Elf *elf, const struct fde_table *fdes)
{
	struct part *parts = NULL;
	size_t nparts = 0, cap = 0, i, k, len = 0, at = 0, syms_cap = t->n;
	struct symtab_sym *syms;
	char *names;
	int ret = 0;

	if (!fdes->n || !t->n || t->split_names)
		goto out;
	ret = find_parts(t, elf, fdes, &parts, &nparts, &cap);
	if (ret || !nparts)
		goto out;
	qsort(parts, nparts, sizeof(*parts), part_cmp);
	for (i = k = 0; i < nparts; i++)
		if (!k || parts[k - 1].start != parts[i].start)
			parts[k++] = parts[i];
	nparts = k;
	for (i = 0; i < nparts; i++)
		len += strlen(parts[i].owner) + sizeof(".cold");
	names = malloc(len);
	if (!names || array_reserve(&t->syms, &syms_cap, t->n + nparts, sizeof(*t->syms))) {
		free(names);
		ret = -ENOMEM;
		goto out;
	}
	syms = t->syms;
	for (i = 0; i < nparts; i++) {
		int w = snprintf(names + at, len - at, "%s.cold", parts[i].owner);

		syms[t->n + i] = (struct symtab_sym){ parts[i].start, parts[i].end - parts[i].start,
						      names + at };
		at += (size_t)w + 1;
	}
	t->n += nparts;
	t->split_names = names;
	qsort(t->syms, t->n, sizeof(*t->syms), sym_cmp);
out:
	free(parts);
	return ret;
}
