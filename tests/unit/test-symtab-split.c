/* SPDX-License-Identifier: MIT */
/* Split-off function parts named in a stripped binary, against the unstripped one's .symtab. */
#include "finalizer/eh-frame.h"
#include "finalizer/symtab.h"

#include <fcntl.h>
#include <gelf.h>
#include <string.h>
#include <unistd.h>

#include "tests/unit/unit.h"

/*
 * tests/unit/split-cold.c is built with -freorder-blocks-and-partition, so gcc moves the
 * unlikely branch of split_work() into "split_work.cold", which only .symtab names. The same
 * library stripped to .dynsym must get a symbol of that name at the same address, covering
 * the part (up to the next function: alignment padding at most after its end), and no other
 * made-up name.
 */

static const char *built, *stripped;

struct loaded {
	int fd;
	Elf *elf;
	struct symtab st;
	struct fde_table fdes;
};

static int load(struct loaded *l, const char *path)
{
	l->fd = open(path, O_RDONLY);
	if (l->fd < 0)
		return -1;
	elf_version(EV_CURRENT); /* before libelf's first handle; again is harmless */
	l->elf = elf_begin(l->fd, ELF_C_READ, NULL);
	if (!l->elf || symtab_load(&l->st, l->elf) || fde_table_load(&l->fdes, l->elf) ||
	    (l->st.source == SYMTAB_DYNSYM && symtab_name_split_parts(&l->st, l->elf, &l->fdes))) {
		close(l->fd);
		return -1;
	}
	return 0;
}

static void unload(struct loaded *l)
{
	symtab_release(&l->st);
	fde_table_release(&l->fdes);
	elf_end(l->elf);
	close(l->fd);
}

static const struct symtab_sym *by_name(const struct symtab *t, const char *name)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		if (strcmp(t->syms[i].name, name) == 0)
			return &t->syms[i];
	return NULL;
}

static void test_symtab_split_names_cold_part(void)
{
	const struct symtab_sym *want, *got, *hot;
	struct loaded a, b;
	size_t i, made = 0;

	CU_ASSERT_FATAL(load(&a, built) == 0);
	CU_ASSERT_FATAL(load(&b, stripped) == 0);
	CU_ASSERT(a.st.source == SYMTAB_SYMTAB);
	CU_ASSERT(b.st.source == SYMTAB_DYNSYM);
	want = by_name(&a.st, "split_work.cold");
	got = by_name(&b.st, "split_work.cold");
	hot = by_name(&b.st, "split_work");
	CU_ASSERT_FATAL(want != NULL); /* gcc split it: else the test proves nothing */
	CU_ASSERT_FATAL(got != NULL && hot != NULL);
	CU_ASSERT(got->start == want->start);
	CU_ASSERT(got->size >= want->size && got->size < want->size + 64);
	/* an address inside the part is found under its name, and one of the hot part not */
	CU_ASSERT(symtab_find_addr(&b.st, want->start + want->size / 2) == got);
	CU_ASSERT(symtab_find_addr(&b.st, hot->start) == hot);
	for (i = 0; i < b.st.n; i++)
		made += strstr(b.st.syms[i].name, ".cold") != NULL;
	CU_ASSERT(made == 1);
	printf("\n    split_work.cold at 0x%llx, %llu bytes (.symtab: %llu)",
	       (unsigned long long)got->start, (unsigned long long)got->size,
	       (unsigned long long)want->size);
	unload(&a);
	unload(&b);
}

static const char **const libs[] = { &built, &stripped };

UNIT_MAIN_FILES("symtab-split", libs, "LIBRARY STRIPPED-LIBRARY", NULL, NULL,
		{
			{ "a stripped library's .cold part gets its name",
			  test_symtab_split_names_cold_part },
		})
