/* SPDX-License-Identifier: MIT */
/* Names for the split-off parts of exported functions in stripped binaries ("name.cold"). */
#include <errno.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
#include "finalizer/symtab.h"

/*
 * gcc's hot/cold splitting (and profile-guided builds, which may move most of a function
 * there) puts part of a function in a block of its own, which only .symtab names
 * ("_PyEval_EvalFrameDefault.cold"). A stripped binary keeps .dynsym alone, so samples in
 * that block had no name, and the finalizer could not tell the Python eval loop (Debian's
 * CPython 3.14 runs its opcodes there). Such a block is recognised by three facts that hold
 * for split parts and not for the static functions around them:
 *   - .eh_frame describes it as a function of its own (its start is an FDE's, listed in the
 *     sorted table of .eh_frame_hdr), and no symbol covers it;
 *   - a direct jump (jmp or jcc rel32, not a call) inside an exported function lands on that
 *     start;
 *   - a direct jump inside the block lands back inside that function (a tail call from the
 *     function to a static one never comes back that way).
 * The block, as long as its FDE says (and never past the next one's start), is then named
 * "<function>.cold". Decoding is by
 * byte patterns, not instructions; the two-way jump test is what keeps a stray pattern from
 * naming anything.
 */

#define DW_EH_PE_udata4  0x03
#define DW_EH_PE_datarel 0x30
#define DW_EH_PE_sdata4  0x0b

/* The bytes of [addr, addr + len) from a section of elf (an executable one if code), or NULL. */
static const uint8_t *bytes_at(Elf *elf, uint64_t addr, uint64_t len, bool code)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    (code && !(sh.sh_flags & SHF_EXECINSTR)) || addr < sh.sh_addr ||
		    addr - sh.sh_addr > sh.sh_size || len > sh.sh_size - (addr - sh.sh_addr))
			continue;
		d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf || d->d_size < sh.sh_size)
			return NULL;
		return (const uint8_t *)d->d_buf + (addr - sh.sh_addr);
	}
	return NULL;
}

static const uint8_t *code_at(Elf *elf, uint64_t addr, uint64_t len)
{
	return bytes_at(elf, addr, len, true);
}

static int32_t s32(const uint8_t *p)
{
	int32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static uint64_t uleb(const uint8_t **p, const uint8_t *end)
{
	uint64_t v = 0;
	unsigned shift = 0;

	while (*p < end && shift < 64) {
		uint8_t b = *(*p)++;

		v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80))
			break;
	}
	return v;
}

/* Bytes of a value of pointer encoding enc (its low nibble), 0 when unknown. */
static size_t enc_size(uint8_t enc)
{
	switch (enc & 0x0f) {
	case 0x00:
	case 0x04:
	case 0x0c:
		return 8;
	case 0x02:
	case 0x0a:
		return 2;
	case 0x03:
	case 0x0b:
		return 4;
	default:
		return 0;
	}
}

/*
 * The length of the code the FDE at address fde covers (its pc_range), or 0. The CIE it
 * points to says how its addresses are written (augmentation 'R', absolute 8 bytes without).
 */
static uint64_t fde_range(Elf *elf, uint64_t fde)
{
	const uint8_t *f = bytes_at(elf, fde, 16, false), *c, *end, *aug;
	uint8_t renc = 0;
	uint64_t cie, range = 0;
	size_t n;

	if (!f || s32(f) <= 0 || s32(f + 4) <= 0)
		return 0;
	cie = fde + 4 - (uint64_t)s32(f + 4);
	c = bytes_at(elf, cie, 12, false);
	if (!c || s32(c) <= 8 || !(c = bytes_at(elf, cie, 4 + (uint64_t)s32(c), false)))
		return 0;
	end = c + 4 + s32(c);
	aug = c + 9; /* length, id, version */
	for (c = aug; c < end && *c; c++)
		;
	if (c++ >= end)
		return 0;
	if (aug[0] == 'z') {
		uleb(&c, end); /* code alignment */
		uleb(&c, end); /* data alignment (sleb: only skipped) */
		if (aug[-1] == 1)
			c++; /* return register, a byte in version 1 */
		else
			uleb(&c, end);
		uleb(&c, end); /* augmentation data length */
		for (aug++; *aug && c < end; aug++) {
			if (*aug == 'R')
				renc = *c++;
			else if (*aug == 'L')
				c++;
			else if (*aug == 'P')
				c += 1 + enc_size(*c);
		}
	}
	n = enc_size(renc);
	if (!n || !(f = bytes_at(elf, fde + 8 + n, n, false)))
		return 0;
	memcpy(&range, f, n); /* little endian: the low bytes */
	return range;
}

/* Function starts from .eh_frame_hdr's table, sorted, with their FDEs' addresses. */
static uint64_t *fde_starts(Elf *elf, size_t *n, uint64_t **fdes)
{
	size_t shstrndx, i, count;
	Elf_Scn *scn = NULL;
	uint64_t *out;

	*n = 0;
	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;
		const uint8_t *p;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || !(name = elf_strptr(elf, shstrndx, sh.sh_name)) ||
		    strcmp(name, ".eh_frame_hdr") != 0)
			continue;
		d = elf_getdata(scn, NULL);
		p = d ? d->d_buf : NULL;
		/* version 1; eh_frame_ptr as 4 bytes; count udata4; table datarel sdata4 */
		if (!p || d->d_size < 12 || p[0] != 1 || (p[1] & 0x0f) != DW_EH_PE_sdata4 ||
		    p[2] != DW_EH_PE_udata4 || p[3] != (DW_EH_PE_datarel | DW_EH_PE_sdata4))
			return NULL;
		count = (uint32_t)s32(p + 8);
		if (count > (d->d_size - 12) / 8)
			return NULL;
		out = malloc((count ? count : 1) * sizeof(*out));
		*fdes = malloc((count ? count : 1) * sizeof(**fdes));
		if (!out || !*fdes) {
			free(out);
			free(*fdes);
			*fdes = NULL;
			return NULL;
		}
		for (i = 0; i < count; i++) {
			out[i] = sh.sh_addr + (uint64_t)(int64_t)s32(p + 12 + 8 * i);
			(*fdes)[i] = sh.sh_addr + (uint64_t)(int64_t)s32(p + 16 + 8 * i);
		}
		*n = count;
		return out;
	}
	return NULL;
}

/* Index of the first start above addr (starts sorted). */
static size_t upper(const uint64_t *v, size_t n, uint64_t addr)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid] <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
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
static int find_parts(const struct symtab *t, Elf *elf, const uint64_t *starts,
		      const uint64_t *fdes, size_t nstarts, struct part **parts, size_t *nparts,
		      size_t *cap)
{
	size_t s, i;

	for (s = 0; s < t->n; s++) {
		const struct symtab_sym *f = &t->syms[s];
		const uint8_t *code = f->size ? code_at(elf, f->start, f->size) : NULL;

		for (i = 0; code && i + 1 < f->size; i++) {
			uint64_t to = jump_target(code, f->size, i, f->start), end, range;
			size_t k = upper(starts, nstarts, to);

			if (!to || (to >= f->start && to < f->start + f->size) || k == 0 ||
			    starts[k - 1] != to || symtab_find_addr(t, to))
				continue;
			/* the FDE's own extent; the next function's start bounds it anyway */
			range = fde_range(elf, fdes[k - 1]);
			end = k < nstarts ? starts[k] : to + range;
			if (range && to + range < end)
				end = to + range;
			if (end <= to)
				continue;
			if (end - to > (64u << 20) ||
			    !jumps_into(elf, to, end, f->start, f->start + f->size))
				continue;
			if (array_reserve(parts, cap, *nparts + 1, sizeof(**parts)))
				return -ENOMEM;
			(*parts)[(*nparts)++] = (struct part){ to, end, f->name };
		}
	}
	return 0;
}

int symtab_name_split_parts(struct symtab *t, Elf *elf)
{
	struct part *parts = NULL;
	size_t nparts = 0, cap = 0, nstarts, i, k, len = 0, at = 0;
	uint64_t *fdes = NULL, *starts = fde_starts(elf, &nstarts, &fdes);
	struct symtab_sym *syms;
	char *names;
	int ret = 0;

	if (!starts || !t->n)
		goto out;
	ret = find_parts(t, elf, starts, fdes, nstarts, &parts, &nparts, &cap);
	if (ret || !nparts)
		goto out;
	qsort(parts, nparts, sizeof(*parts), part_cmp);
	for (i = k = 0; i < nparts; i++)
		if (!k || parts[k - 1].start != parts[i].start)
			parts[k++] = parts[i];
	nparts = k;
	for (i = 0; i < nparts; i++)
		len += strlen(parts[i].owner) + sizeof(".cold");
	syms = realloc(t->syms, (t->n + nparts) * sizeof(*syms));
	names = malloc(len);
	if (!syms || !names) {
		if (syms)
			t->syms = syms;
		free(names);
		ret = -ENOMEM;
		goto out;
	}
	t->syms = syms;
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
	free(starts);
	free(fdes);
	return ret;
}
