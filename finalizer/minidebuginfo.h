/* SPDX-License-Identifier: MIT */
/* MiniDebugInfo: the static function symbols a stripped binary carries in .gnu_debugdata. */
#ifndef PCOLLECT_FINALIZER_MINIDEBUGINFO_H
#define PCOLLECT_FINALIZER_MINIDEBUGINFO_H

#include <libelf.h>

#include "finalizer/symtab.h"

/*
 * GDB's MiniDebugInfo ("Debugging Information in a Special Section" in its manual; shipped by
 * Fedora, RHEL and their rebuilds): section .gnu_debugdata holds an xz-compressed ELF file
 * whose .symtab has the function symbols .dynsym lacks. Decompress it (liblzma), read its
 * .symtab and merge it into t (the table of elf itself, .dynsym or none): t->source becomes
 * SYMTAB_MINIDEBUGINFO. Returns 0, -ENOENT (no such section, or no function symbol in it),
 * -EINVAL (not an xz stream or not an ELF file inside: damaged), -EFBIG (decompresses to more
 * than 256 MiB) or -ENOMEM; t is unchanged on failure.
 */
int minidebuginfo_load(struct symtab *t, Elf *elf);

#endif
