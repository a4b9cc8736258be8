/* SPDX-License-Identifier: MIT */
/* A module's function or variable symbols (.symtab, else .dynsym), sorted for address lookup. */
#ifndef PCOLLECT_FINALIZER_SYMTAB_H
#define PCOLLECT_FINALIZER_SYMTAB_H

#include <stddef.h>
#include <stdint.h>

#include <libelf.h>

enum symtab_source {
	SYMTAB_NONE = 0,
	SYMTAB_DYNSYM = 1,
	SYMTAB_MINIDEBUGINFO = 2, /* .dynsym and the .symtab of .gnu_debugdata, merged */
	SYMTAB_SYMTAB = 3,
};

struct fde_table;

struct symtab_sym {
	uint64_t start;   /* ELF virtual address */
	uint64_t size;    /* bytes; 0 when the symbol does not say */
	const char *name; /* mangled, points into the table */
};

struct symtab {
	struct symtab_sym *syms; /* sorted by start, one per start address */
	size_t n;
	char *names;       /* all names, NUL separated */
	char *split_names; /* names made for split parts (symtab_name_split_parts) */
	char *stub_names;  /* names made for PLT stubs and the entry (symtab_name_stubs) */
	char *more_names;  /* names of the symbols merged in (symtab_merge) */
	enum symtab_source source;
};

/*
 * Read the function symbols of elf: .symtab when it has functions, .dynsym otherwise.
 * Returns 0 (an ELF without symbols gives an empty table) or -ENOMEM.
 */
int symtab_load(struct symtab *t, Elf *elf);
/*
 * The same for the variables (STT_OBJECT symbols: globals and statics) of elf, so that the
 * address of a sync object names it: .symtab when it has some, .dynsym otherwise.
 */
int symtab_load_objects(struct symtab *t, Elf *elf);
void symtab_release(struct symtab *t);

/*
 * Add the symbols of more (a table of another file describing the same code, such as the
 * MiniDebugInfo) that t lacks: at an address t has a symbol for, t's stays. more is taken
 * over (released, its names kept by t). t->source becomes source. Returns 0 or -ENOMEM (more
 * released either way).
 */
int symtab_merge(struct symtab *t, struct symtab *more, enum symtab_source source);

/*
 * For a table read from .dynsym (a stripped binary): add a symbol "<function>.cold" for each
 * block of code gcc split off an exported function, found among the FDE ranges fdes of elf
 * (finalizer/symtab-split.c says how it is recognised). Returns 0 or -ENOMEM.
 */
int symtab_name_split_parts(struct symtab *t, Elf *elf, const struct fde_table *fdes);

/*
 * Add the names no symbol table gives: "<function>@plt" for each stub of .plt, .plt.sec and
 * .plt.got whose GOT slot a relocation binds to a function, and "_start" at the ELF entry
 * address, each where no symbol of t already stands (finalizer/symtab-plt.c says how).
 * Once per table. Returns 0 or -ENOMEM.
 */
int symtab_name_stubs(struct symtab *t, Elf *elf);

/*
 * The function containing addr (an ELF virtual address), or NULL. A symbol without a size
 * covers addresses up to the next symbol; a sized one only its own bytes, so an address in a
 * gap is never given to the function before it.
 */
const struct symtab_sym *symtab_find_addr(const struct symtab *t, uint64_t addr);

#endif
