/* SPDX-License-Identifier: MIT */
/* Symbol and version-string lookup in an ELF file, for finding an interpreter. */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "collector/agent/python/python-private.h"

/*
 * Reads the file, not the mapped image: .symtab is not mapped, and the file can be read before
 * the module runs any code. Every offset from the file is checked against its size, so a
 * damaged file makes the lookup fail, not the program.
 */

static bool in_file(size_t size, uint64_t off, uint64_t len)
{
	return off <= size && len <= size - off;
}

/* The first bytes of a symbol's initial value, from the file (not the mapped image). */
static void symbol_data(const uint8_t *base, size_t size, const Elf64_Shdr *shdrs, size_t nsh,
			const Elf64_Sym *s, struct pyelf_sym *sym)
{
	const Elf64_Shdr *sec;
	size_t want = sym->copy_len;
	uint64_t off;

	sym->copy_len = 0;
	if (s->st_shndx >= nsh)
		return;
	sec = &shdrs[s->st_shndx];
	if (sec->sh_type != SHT_PROGBITS || s->st_value < sec->sh_addr ||
	    s->st_value - sec->sh_addr + sizeof(sym->data) > sec->sh_size)
		return;
	off = sec->sh_offset + (s->st_value - sec->sh_addr);
	if (!in_file(size, off, sizeof(sym->data)))
		return;
	memcpy(sym->data, base + off, sizeof(sym->data));
	sym->has_data = true;
	if (sym->copy) {
		uint64_t left = sec->sh_size - (s->st_value - sec->sh_addr);

		want = want < left ? want : (size_t)left;
		if (in_file(size, off, want)) {
			memcpy(sym->copy, base + off, want);
			sym->copy_len = want;
		}
	}
}

static void scan_symbols(const uint8_t *base, size_t size, const Elf64_Shdr *shdrs, size_t nsh,
			 const Elf64_Shdr *sh, const Elf64_Shdr *strsh, struct pyelf_sym *syms,
			 size_t nsyms)
{
	const char *strtab = (const char *)base + strsh->sh_offset;
	uint64_t count, i;
	size_t k;

	if (sh->sh_entsize != sizeof(Elf64_Sym) || !in_file(size, sh->sh_offset, sh->sh_size) ||
	    !in_file(size, strsh->sh_offset, strsh->sh_size) || strsh->sh_size == 0)
		return;
	count = sh->sh_size / sizeof(Elf64_Sym);
	for (i = 1; i < count; i++) {
		const Elf64_Sym *s = (const Elf64_Sym *)(base + sh->sh_offset) + i;
		const char *name;
		size_t maxlen;

		if (s->st_shndx == SHN_UNDEF || s->st_name >= strsh->sh_size)
			continue;
		name = strtab + s->st_name;
		maxlen = strsh->sh_size - s->st_name;
		for (k = 0; k < nsyms; k++) {
			size_t len = strlen(syms[k].name);

			if (!syms[k].found && len < maxlen &&
			    memcmp(name, syms[k].name, len + 1) == 0) {
				syms[k].found = true;
				syms[k].value = s->st_value;
				syms[k].size = s->st_size;
				symbol_data(base, size, shdrs, nsh, s, &syms[k]);
			}
		}
	}
}

/*
 * The version in read-only data: "python3.1N" as a whole string (the library directory name
 * every build compiles in, VERSION in the Makefile). Returns N, or -1.
 */
static int scan_version_string(const uint8_t *p, size_t len)
{
	static const char pat[] = "\0python3.1";
	const uint8_t *q = p, *end = p + len;

	while ((q = memmem(q, (size_t)(end - q), pat, sizeof(pat) - 1)) != NULL) {
		const uint8_t *r = q + sizeof(pat) - 1;

		q += 1;
		if (end - r >= 2 && r[0] >= '0' && r[0] <= '9' && r[1] == 0)
			return 10 + (r[0] - '0');
	}
	return -1;
}

/*
 * Map the ELF64 file at path read-only: 0 with *base, *size and its section headers in *sh
 * (unmap with munmap(*base, *size)), -ENOEXEC for a file that is not ELF64, or -errno.
 */
static int map_elf(const char *path, uint8_t **base, size_t *size, const Elf64_Shdr **sh)
{
	const Elf64_Ehdr *eh;
	struct stat st;
	int fd, ret = -ENOEXEC;

	*base = MAP_FAILED;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		ret = -errno;
		goto out;
	}
	if ((size_t)st.st_size < sizeof(Elf64_Ehdr))
		goto out;
	*size = (size_t)st.st_size;
	*base = mmap(NULL, *size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (*base == MAP_FAILED) {
		ret = -errno;
		goto out;
	}
	eh = (const Elf64_Ehdr *)*base;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_shentsize != sizeof(Elf64_Shdr) ||
	    !in_file(*size, eh->e_shoff, (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr))) {
		munmap(*base, *size);
		*base = MAP_FAILED;
		goto out;
	}
	*sh = (const Elf64_Shdr *)(*base + eh->e_shoff);
	ret = 0;
out:
	close(fd);
	return ret;
}

int pyelf_scan(const char *path, struct pyelf_sym *syms, size_t nsyms, int *rodata_minor)
{
	const Elf64_Ehdr *eh;
	const Elf64_Shdr *sh;
	uint8_t *base;
	size_t size = 0, i;
	int ret;

	if (rodata_minor)
		*rodata_minor = -1;
	ret = map_elf(path, &base, &size, &sh);
	if (ret < 0)
		return ret;
	eh = (const Elf64_Ehdr *)base;
	for (i = 0; i < eh->e_shnum; i++) {
		if ((sh[i].sh_type == SHT_SYMTAB || sh[i].sh_type == SHT_DYNSYM) &&
		    sh[i].sh_link < eh->e_shnum)
			scan_symbols(base, size, sh, eh->e_shnum, &sh[i], &sh[sh[i].sh_link], syms,
				     nsyms);
		/* Read-only, allocated, not executable data: .rodata */
		if (rodata_minor && *rodata_minor < 0 && sh[i].sh_type == SHT_PROGBITS &&
		    (sh[i].sh_flags & SHF_ALLOC) &&
		    !(sh[i].sh_flags & (SHF_WRITE | SHF_EXECINSTR)) &&
		    in_file(size, sh[i].sh_offset, sh[i].sh_size))
			*rodata_minor =
				scan_version_string(base + sh[i].sh_offset, (size_t)sh[i].sh_size);
	}
	munmap(base, size);
	return 0;
}

int pyelf_section(const char *path, const char *name, void *out, size_t len)
{
	const Elf64_Ehdr *eh;
	const Elf64_Shdr *sh, *names;
	uint8_t *base;
	size_t size = 0, i, nlen = strlen(name);
	int ret;

	ret = map_elf(path, &base, &size, &sh);
	if (ret < 0)
		return ret;
	eh = (const Elf64_Ehdr *)base;
	ret = -ENOENT;
	names = eh->e_shstrndx < eh->e_shnum ? &sh[eh->e_shstrndx] : NULL;
	for (i = 0; names && in_file(size, names->sh_offset, names->sh_size) && i < eh->e_shnum;
	     i++) {
		size_t n;

		if (sh[i].sh_name >= names->sh_size || names->sh_size - sh[i].sh_name <= nlen ||
		    memcmp(base + names->sh_offset + sh[i].sh_name, name, nlen + 1) != 0)
			continue;
		if (sh[i].sh_type != SHT_PROGBITS || !in_file(size, sh[i].sh_offset, sh[i].sh_size))
			break;
		n = sh[i].sh_size < len ? (size_t)sh[i].sh_size : len;
		memcpy(out, base + sh[i].sh_offset, n);
		ret = (int)n;
		break;
	}
	munmap(base, size);
	return ret;
}
