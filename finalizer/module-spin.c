/* SPDX-License-Identifier: MIT */
/* An OpenMP runtime's code: which of its sampled addresses lie in a spin-wait loop. */
#define LOG_DOMAIN "module"
#include <errno.h>
#include <stdlib.h>

#include <gelf.h>

#include "common/log.h"
#include "finalizer/module-private.h"

/* Bytes either side of an address searched for a PAUSE: a spin loop is a few instructions. */
#define SPIN_REACH 24

bool module_spin_code(const struct module *m, uint64_t addr)
{
	int64_t i = m->spin_code ? module_addr_index(m, addr) : -1;

	return i >= 0 && m->spin_code[i];
}

/*
 * The bytes of the file at virtual address [addr - SPIN_REACH, addr + SPIN_REACH] hold a PAUSE
 * (F3 90). The loadable segment holding addr gives its file offset; a range it does not
 * cover entirely is not looked at.
 */
static bool pause_near(Elf *elf, const uint8_t *file, size_t size, size_t nph, uint64_t addr)
{
	size_t i;

	for (i = 0; i < nph; i++) {
		GElf_Phdr ph;
		uint64_t lo, hi, off, k;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD ||
		    !(ph.p_flags & PF_X) || addr < ph.p_vaddr || addr >= ph.p_vaddr + ph.p_filesz)
			continue;
		lo = addr >= ph.p_vaddr + SPIN_REACH ? addr - SPIN_REACH : ph.p_vaddr;
		hi = addr + SPIN_REACH + 2 <= ph.p_vaddr + ph.p_filesz ? addr + SPIN_REACH + 2
								       : ph.p_vaddr + ph.p_filesz;
		off = ph.p_offset + (lo - ph.p_vaddr);
		if (off + (hi - lo) > size)
			return false;
		for (k = 0; k + 1 < hi - lo; k++)
			if (file[off + k] == 0xf3 && file[off + k + 1] == 0x90)
				return true;
		return false;
	}
	return false;
}

/* Which resolved addresses of an OpenMP runtime are in spin loops. 0 or -ENOMEM. */
int module_find_spin_code(struct module *m, const struct resolve_opts *o)
{
	struct elf_file f;
	const uint8_t *file;
	size_t size = 0, nph = 0, i, n = 0;

	m->spin_code = calloc(m->naddrs ? m->naddrs : 1, 1);
	if (!m->spin_code)
		return -ENOMEM;
	if (m->kind != RAW_MODULE_FILE || m->path[0] != '/' || !module_find_file(m, o, &f))
		return 0;
	file = (const uint8_t *)elf_rawfile(f.elf, &size);
	if (file && !elf_getphdrnum(f.elf, &nph))
		for (i = 0; i < m->naddrs; i++)
			n += m->spin_code[i] = pause_near(f.elf, file, size, nph, m->addrs[i]);
	log_debug("'%s': an OpenMP runtime: %zu of %zu addresses in spin loops", m->path, n,
		  m->naddrs);
	elf_file_close(&f);
	return 0;
}
