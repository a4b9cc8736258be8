/* SPDX-License-Identifier: MIT */
/* Function symbols from ELF .symtab/.dynsym, deduplicated and sorted by address. */
#include <errno.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/cmp.h"
#include "common/grow.h"
#include "common/log.h"
#include "finalizer/symtab.h"
#include "finalizer/sorted.h"

struct raw_sym {
	uint64_t start, size;
	size_t name_off; /* into the names blob */
	int rank;        /* which of several symbols at one address wins */
};

static int raw_sym_cmp(const void *a, const void *b)
{
	const struct raw_sym *x = a, *y = b;

	/* Best first: highest rank. */
	return CMP_THEN(CMP(x->start, y->start), CMP(y->rank, x->rank));
}

static Elf_Scn *find_section(Elf *elf, Elf64_Word type, size_t *count)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) && sh.sh_type == type && sh.sh_entsize) {
			*count = sh.sh_size / sh.sh_entsize;
			return scn;
		}
	}
	return NULL;
}

static int sym_rank(const GElf_Sym *s)
{
	int r = 0;

	if (GELF_ST_BIND(s->st_info) == STB_GLOBAL)
		r += 4;
	else if (GELF_ST_BIND(s->st_info) == STB_WEAK)
		r += 2;
	if (s->st_size)
		r += 8;
	return r;
}

/* The symbols a table is made of: functions, or variables (data objects). */
static bool wanted(const GElf_Sym *s, bool objects)
{
	int type = GELF_ST_TYPE(s->st_info);

	if (objects)
		return type == STT_OBJECT; /* TLS symbols hold offsets, not addresses */
	return type == STT_FUNC || type == STT_GNU_IFUNC;
}

/* Collect the wanted symbols of one table. Returns how many, or -ENOMEM. */
static long collect(Elf *elf, Elf_Scn *scn, size_t count, bool objects, struct raw_sym **out,
		    char **names, size_t *names_len)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	GElf_Shdr sh;
	struct raw_sym *v;
	size_t n = 0, cap_names = 0, i;
	char *blob = NULL;
	size_t blen = 0;

	if (!data || !gelf_getshdr(scn, &sh))
		return 0;
	v = calloc(count ? count : 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (i = 0; i < count; i++) {
		GElf_Sym s;
		const char *name;
		size_t len;

		if (!gelf_getsym(data, (int)i, &s))
			continue;
		if (!wanted(&s, objects) || s.st_shndx == SHN_UNDEF || !s.st_value)
			continue;
		name = elf_strptr(elf, sh.sh_link, s.st_name);
		if (!name || !*name)
			continue;
		len = strlen(name) + 1;
		if (GROW(blob, blen + len, cap_names)) {
			free(blob);
			free(v);
			return -ENOMEM;
		}
		memcpy(blob + blen, name, len);
		v[n].start = s.st_value;
		v[n].size = s.st_size;
		v[n].name_off = blen;
		v[n].rank = sym_rank(&s);
		blen += len;
		n++;
	}
	*out = v;
	*names = blob;
	*names_len = blen;
	return (long)n;
}

static int load(struct symtab *t, Elf *elf, bool objects)
{
	static const Elf64_Word types[] = { SHT_SYMTAB, SHT_DYNSYM };
	static const enum symtab_source sources[] = { SYMTAB_SYMTAB, SYMTAB_DYNSYM };
	struct raw_sym *v = NULL;
	char *blob = NULL;
	size_t blen = 0, i, j;
	long n = 0;

	memset(t, 0, sizeof(*t));
	for (i = 0; i < 2; i++) {
		size_t count = 0;
		Elf_Scn *scn = find_section(elf, types[i], &count);

		if (!scn)
			continue;
		n = collect(elf, scn, count, objects, &v, &blob, &blen);
		if (n < 0)
			return (int)n;
		if (n > 0) {
			t->source = sources[i];
			break;
		}
		free(v);
		free(blob);
		v = NULL;
		blob = NULL;
	}
	if (n <= 0)
		return 0;
	qsort(v, (size_t)n, sizeof(*v), raw_sym_cmp);
	t->syms = calloc((size_t)n, sizeof(*t->syms));
	if (!t->syms) {
		free(v);
		free(blob);
		return -ENOMEM;
	}
	for (i = 0, j = 0; i < (size_t)n; i++) {
		if (j && t->syms[j - 1].start == v[i].start)
			continue; /* the best one at this address came first */
		t->syms[j].start = v[i].start;
		t->syms[j].size = v[i].size;
		t->syms[j].name = blob + v[i].name_off;
		j++;
	}
	t->n = j;
	t->names = blob;
	free(v);
	return 0;
}

int symtab_load(struct symtab *t, Elf *elf)
{
	return load(t, elf, false);
}

int symtab_load_objects(struct symtab *t, Elf *elf)
{
	return load(t, elf, true);
}

static int sym_cmp(const void *a, const void *b)
{
	const struct symtab_sym *x = a, *y = b;

	return CMP(x->start, y->start);
}

int symtab_merge(struct symtab *t, struct symtab *more, enum symtab_source source)
{
	struct symtab_sym *v;
	size_t i, j, n = t->n, cap = t->n;

	if (more->split_names || more->stub_names || more->more_names || t->more_names)
		BUG("symtab_merge() takes one file's own symbols, once");
	if (!more->n) {
		symtab_release(more);
		return 0;
	}
	if (array_reserve(&t->syms, &cap, t->n + more->n, sizeof(*t->syms))) {
		symtab_release(more);
		return -ENOMEM;
	}
	v = t->syms;
	/* Both sorted: walk them side by side, keeping more's symbols at addresses t lacks. */
	for (i = 0, j = 0; j < more->n; j++) {
		while (i < t->n && t->syms[i].start < more->syms[j].start)
			i++;
		if (i < t->n && t->syms[i].start == more->syms[j].start)
			continue;
		v[n++] = more->syms[j];
	}
	qsort(v, n, sizeof(*v), sym_cmp);
	t->n = n;
	t->more_names = more->names;
	more->names = NULL;
	t->source = source;
	symtab_release(more);
	return 0;
}

void symtab_release(struct symtab *t)
{
	FREE_ALL(t->syms, t->names, t->split_names, t->stub_names, t->more_names);
	memset(t, 0, sizeof(*t));
}

const struct symtab_sym *symtab_find_addr(const struct symtab *t, uint64_t addr)
{
	/* The last symbol starting at or before addr. */
	size_t lo = sorted_upper_u64(t->syms, t->n, sizeof(*t->syms),
				     offsetof(struct symtab_sym, start), addr);
	const struct symtab_sym *s;

	if (!lo)
		return NULL;
	s = &t->syms[lo - 1];
	if (s->size)
		return addr < s->start + s->size ? s : NULL;
	/* Unsized: up to the next symbol, which by construction starts after addr. */
	return s;
}
