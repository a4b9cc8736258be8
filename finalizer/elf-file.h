/* SPDX-License-Identifier: MIT */
/* An ELF file opened for symbols: its build-id, debug link and the sections we care about. */
#ifndef PCOLLECT_FINALIZER_ELF_FILE_H
#define PCOLLECT_FINALIZER_ELF_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <libelf.h>

#include "common/raw-stream.h" /* RAW_MAX_BUILD_ID: a build-id fits a raw stream's record */

#define ELF_FILE_MAX_BUILD_ID RAW_MAX_BUILD_ID

struct elf_file {
	int fd;
	Elf *elf;
	char *path; /* owned */
	uint8_t build_id[ELF_FILE_MAX_BUILD_ID];
	size_t build_id_len; /* 0: the file has no build-id note */
	char *debuglink;     /* .gnu_debuglink file name, owned; NULL if none */
	bool has_debug_info; /* a non-empty .debug_info (not NOBITS) */
	bool has_symtab;     /* .symtab present */
};

/*
 * Open path read-only and read its headers. Returns 0, -ENOENT etc. from open(2), or -EINVAL
 * when the file is not an ELF file. Release with elf_file_close().
 */
int elf_file_open(struct elf_file *f, const char *path);
void elf_file_close(struct elf_file *f);

/*
 * The contents of the section called name (decompressed when SHF_COMPRESSED): *data and
 * *size, valid until elf_file_close(). Returns 0, or -ENOENT when there is no such section
 * with contents. Not thread-safe on one file.
 */
int elf_file_section(struct elf_file *f, const char *name, const uint8_t **data, size_t *size);

/*
 * elf_file_section() on any ELF handle (one opened with elf_memory() too); *addr (may be NULL)
 * receives the section's address (sh_addr). Decompressing a section changes the handle:
 * not thread-safe on one handle.
 */
int elf_section_find(Elf *elf, const char *name, const uint8_t **data, size_t *size,
		     uint64_t *addr);

/* True when the file carries a build-id equal to id/len. */
bool elf_file_build_id_is(const struct elf_file *f, const uint8_t *id, size_t len);

#endif
