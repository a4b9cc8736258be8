/* SPDX-License-Identifier: MIT */
/* ELF note parsing: the GNU build-id of a module, read from its PT_NOTE segments in memory. */
#include "common/elf-note.h"

#include <elf.h>
#include <string.h>

static size_t align_up(size_t v, size_t a)
{
	return (v + a - 1) & ~(a - 1);
}

size_t elf_note_build_id(const void *notes, size_t len, size_t align, uint8_t *out, size_t out_size)
{
	const uint8_t *p = notes;
	size_t off = 0;

	if (align != 8)
		align = 4;
	while (len - off >= sizeof(Elf64_Nhdr) && off < len) {
		Elf64_Nhdr nh;
		size_t name_off, desc_off, next;

		memcpy(&nh, p + off, sizeof(nh));
		name_off = off + sizeof(nh);
		desc_off = name_off + align_up(nh.n_namesz, align);
		next = desc_off + align_up(nh.n_descsz, align);
		if (nh.n_namesz > len || nh.n_descsz > len || desc_off > len ||
		    desc_off + nh.n_descsz > len)
			return 0;
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
		    !memcmp(p + name_off, "GNU", 4) && nh.n_descsz > 0) {
			size_t n = nh.n_descsz < out_size ? nh.n_descsz : out_size;
			memcpy(out, p + desc_off, n);
			return n;
		}
		if (next <= off)
			return 0;
		off = next;
	}
	return 0;
}

char *elf_note_hex(const uint8_t *id, size_t n, char *buf, size_t size)
{
	static const char digits[] = "0123456789abcdef";
	size_t i;

	if (!size)
		return buf;
	for (i = 0; i < n && 2 * i + 2 < size; i++) {
		buf[2 * i] = digits[id[i] >> 4];
		buf[2 * i + 1] = digits[id[i] & 15];
	}
	buf[2 * i] = '\0';
	return buf;
}
