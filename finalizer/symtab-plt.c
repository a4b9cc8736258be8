/* SPDX-License-Identifier: MIT */
/* Names no symbol gives: each PLT stub ("sqrt@plt") and a stripped program's entry ("_start"). */
#include <errno.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
#include "common/log.h"
#include "finalizer/sorted.h"
#include "finalizer/symtab.h"

/*
 * No symbol table names the stubs of .plt, .plt.sec and .plt.got: objdump and perf name them
 * "<function>@plt" by the same reasoning as here. Each stub jumps through one slot of the
 * GOT ("jmp *slot(%rip)": ff 25 rel32, after an endbr64 and a bnd prefix in .plt.sec), and the
 * relocation of that slot (R_X86_64_JUMP_SLOT in .rela.plt, R_X86_64_GLOB_DAT in .rela.dyn for
 * .plt.got) names the function the dynamic linker puts there. Reading the jump rather than
 * counting entries holds for lazy and eager binding, with and without IBT's second table.
 * A stub whose slot no relocation names (the first entry of .plt, which calls the resolver)
 * keeps no name.
 *
 * The entry point (the ELF header's e_entry) of a stripped executable is glibc's _start, which
 * only .symtab names: it stands above main in every stack, hidden by its name in the default
 * view, so it is given that name when no symbol covers it.
 */

struct got_slot {
	uint64_t addr;    /* the slot's address (the relocation's r_offset) */
	const char *name; /* the symbol it is bound to, in the ELF's string table */
};

struct got_map {
	struct got_slot *slots; /* sorted by addr once read */
	size_t n, cap;
};

static int slot_cmp(const void *a, const void *b)
{
	const struct got_slot *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static const struct got_slot *got_find(const struct got_map *g, uint64_t addr)
{
	size_t i = sorted_upper_u64(g->slots, g->n, sizeof(*g->slots),
				    offsetof(struct got_slot, addr), addr);

	return i && g->slots[i - 1].addr == addr ? &g->slots[i - 1] : NULL;
}

/* The GOT slots the relocations of one SHT_RELA section bind to named functions. */
static int add_relocations(struct got_map *g, Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh)
{
	Elf_Scn *syms = elf_getscn(elf, sh->sh_link);
	Elf_Data *rd = elf_getdata(scn, NULL), *sd = syms ? elf_getdata(syms, NULL) : NULL;
	GElf_Shdr ssh;
	size_t i, n = sh->sh_entsize ? sh->sh_size / sh->sh_entsize : 0;

	if (!rd || !sd || !gelf_getshdr(syms, &ssh))
		return 0;
	for (i = 0; i < n; i++) {
		GElf_Rela r;
		GElf_Sym s;
		unsigned type;
		const char *name;

		if (!gelf_getrela(rd, (int)i, &r))
			break;
		type = (unsigned)GELF_R_TYPE(r.r_info);
		if ((type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT) ||
		    !GELF_R_SYM(r.r_info) || !gelf_getsym(sd, (int)GELF_R_SYM(r.r_info), &s))
			continue;
		name = elf_strptr(elf, ssh.sh_link, s.st_name);
		if (!name || !*name)
			continue;
		if (GROW(g->slots, g->n + 1, g->cap))
			return -ENOMEM;
		g->slots[g->n++] = (struct got_slot){ r.r_offset, name };
	}
	return 0;
}

/* The GOT slot the stub at code[0..len) (at address at) jumps through, or 0. */
static uint64_t stub_slot(const uint8_t *code, size_t len, uint64_t at)
{
	size_t i;

	for (i = 0; i + 6 <= len; i++)
		if (code[i] == 0xff && code[i + 1] == 0x25) {
			int32_t rel;

			memcpy(&rel, code + i + 2, sizeof(rel));
			return at + i + 6 + (uint64_t)(int64_t)rel;
		}
	return 0;
}

static bool is_plt(const char *name)
{
	return name &&
	       (!strcmp(name, ".plt") || !strcmp(name, ".plt.sec") || !strcmp(name, ".plt.got"));
}

/* A symbol of t starts at addr, or a sized one covers it. */
static bool named(const struct symtab *t, uint64_t addr)
{
	const struct symtab_sym *s = symtab_find_addr(t, addr);

	return s && (s->start == addr || s->size);
}

struct synth {
	struct symtab_sym *syms;
	size_t n, cap;
	char *names; /* "<name>@plt\0" ..., offsets in the syms' name fields until the end */
	size_t len, names_cap;
};

static int synth_add(struct synth *y, uint64_t start, uint64_t size, const char *name,
		     const char *suffix)
{
	size_t need = strlen(name) + strlen(suffix) + 1;

	if (GROW(y->syms, y->n + 1, y->cap) || GROW(y->names, y->len + need, y->names_cap))
		return -ENOMEM;
	snprintf(y->names + y->len, need, "%s%s", name, suffix);
	/* an offset for now: names may still move */
	y->syms[y->n++] = (struct symtab_sym){ start, size, (const char *)(uintptr_t)y->len };
	y->len += need;
	return 0;
}

/* One name a stub of every PLT section of elf, named from g. */
static int name_stubs(const struct symtab *t, Elf *elf, struct got_map *g, struct synth *y)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return 0;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		uint64_t step, off;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    !(sh.sh_flags & SHF_EXECINSTR) ||
		    !is_plt(elf_strptr(elf, shstrndx, sh.sh_name)))
			continue;
		d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf || d->d_size < sh.sh_size)
			continue;
		/* .plt.got's entries are 8 or 16 bytes; its sh_entsize says which */
		step = sh.sh_entsize >= 8 && sh.sh_entsize <= 32 ? sh.sh_entsize : 16;
		for (off = 0; off + step <= sh.sh_size; off += step) {
			uint64_t at = sh.sh_addr + off;
			uint64_t slot = stub_slot((const uint8_t *)d->d_buf + off, step, at);
			const struct got_slot *s = slot ? got_find(g, slot) : NULL;
			int ret;

			if (s && !named(t, at) && (ret = synth_add(y, at, step, s->name, "@plt")))
				return ret;
		}
	}
	return 0;
}

static int sym_cmp(const void *a, const void *b)
{
	const struct symtab_sym *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

int symtab_name_stubs(struct symtab *t, Elf *elf)
{
	struct got_map g = { 0 };
	struct synth y = { 0 };
	Elf_Scn *scn = NULL;
	GElf_Ehdr eh;
	size_t i, cap = t->n;
	int ret = 0;

	if (t->stub_names)
		BUG("symtab_name_stubs() names a table's stubs once");
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_RELA &&
		    (ret = add_relocations(&g, elf, scn, &sh)))
			goto out;
	}
	qsort(g.slots, g.n, sizeof(*g.slots), slot_cmp);
	if (g.n && (ret = name_stubs(t, elf, &g, &y)))
		goto out;
	if (gelf_getehdr(elf, &eh) && eh.e_entry && !named(t, eh.e_entry) &&
	    (ret = synth_add(&y, eh.e_entry, 0, "_start", "")))
		goto out;
	if (!y.n)
		goto out;
	if (array_reserve(&t->syms, &cap, t->n + y.n, sizeof(*t->syms))) {
		ret = -ENOMEM;
		goto out;
	}
	for (i = 0; i < y.n; i++) {
		t->syms[t->n + i] = y.syms[i];
		t->syms[t->n + i].name = y.names + (uintptr_t)y.syms[i].name;
	}
	t->n += y.n;
	t->stub_names = y.names;
	y.names = NULL;
	qsort(t->syms, t->n, sizeof(*t->syms), sym_cmp);
out:
	free(g.slots);
	free(y.syms);
	free(y.names);
	return ret;
}
