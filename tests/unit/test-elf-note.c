/* SPDX-License-Identifier: MIT */
/* Unit tests of collector/elf-note.c: build-id notes, alignment, malformed areas, hex. */
#include <elf.h>
#include <link.h>
#include <stdio.h>
#include <string.h>

#include "common/elf-note.h"
#include "tests/unit/unit.h"

/* Append a note to buf at *off with the given alignment. */
static void put_note(uint8_t *buf, size_t *off, size_t align, uint32_t type, const char *owner,
		     const void *desc, uint32_t desc_len)
{
	Elf64_Nhdr nh;
	size_t name_len = strlen(owner) + 1;

	nh.n_namesz = (uint32_t)name_len;
	nh.n_descsz = desc_len;
	nh.n_type = type;
	memcpy(buf + *off, &nh, sizeof(nh));
	*off += sizeof(nh);
	memcpy(buf + *off, owner, name_len);
	*off += (name_len + align - 1) & ~(align - 1);
	memcpy(buf + *off, desc, desc_len);
	*off += (desc_len + align - 1) & ~(align - 1);
}

static void test_elf_note_build_id_after_other_notes(void)
{
	uint8_t buf[256] = { 0 }, out[64];
	const uint8_t id[20] = { 0xde, 0xad, 0xbe, 0xef, 1,  2,  3,  4,  5,  6,
				 7,    8,    9,    10,   11, 12, 13, 14, 15, 16 };
	const uint32_t abi[4] = { 0, 3, 2, 0 };
	char hex[41];
	size_t off = 0;

	put_note(buf, &off, 4, NT_GNU_ABI_TAG, "GNU", abi, sizeof(abi));
	put_note(buf, &off, 4, NT_GNU_BUILD_ID, "XYZ", id, 8); /* wrong owner: skipped */
	put_note(buf, &off, 4, NT_GNU_BUILD_ID, "GNU", id, sizeof(id));
	CU_ASSERT(elf_note_build_id(buf, off, 4, out, sizeof(out)) == 20);
	CU_ASSERT(memcmp(out, id, 20) == 0);
	CU_ASSERT_STRING_EQUAL(elf_note_hex(out, 20, hex, sizeof(hex)),
			       "deadbeef0102030405060708090a0b0c0d0e0f10");
}

static void test_elf_note_align8(void)
{
	uint8_t buf[256] = { 0 }, out[64];
	const uint8_t id[5] = { 1, 2, 3, 4, 5 };
	const uint8_t prop[12] = { 0 };
	size_t off = 0;

	put_note(buf, &off, 8, 5 /* NT_GNU_PROPERTY_TYPE_0 */, "GNU", prop, sizeof(prop));
	put_note(buf, &off, 8, NT_GNU_BUILD_ID, "GNU", id, sizeof(id));
	CU_ASSERT(elf_note_build_id(buf, off, 8, out, sizeof(out)) == 5);
	CU_ASSERT(memcmp(out, id, 5) == 0);
}

static void test_elf_note_malformed(void)
{
	uint8_t buf[64] = { 0 }, out[64];
	Elf64_Nhdr nh = { 4, 1000, NT_GNU_BUILD_ID }; /* desc runs past the end */

	memcpy(buf, &nh, sizeof(nh));
	memcpy(buf + sizeof(nh), "GNU", 4);
	CU_ASSERT(elf_note_build_id(buf, sizeof(buf), 4, out, sizeof(out)) == 0);
	CU_ASSERT(elf_note_build_id(buf, 5, 4, out, sizeof(out)) == 0);
	CU_ASSERT(elf_note_build_id(buf, 0, 4, out, sizeof(out)) == 0);
}

static int find_self(struct dl_phdr_info *info, size_t size, void *data)
{
	size_t *len = data;
	uint8_t out[64];
	int i;

	(void)size;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_NOTE && !*len)
			*len = elf_note_build_id((const void *)(info->dlpi_addr + ph->p_vaddr),
						 ph->p_memsz, ph->p_align, out, sizeof(out));
	}
	return 1; /* the first object is this program */
}

/* The program's own build-id, read from memory as the agent does (gcc adds one here). */
static void test_elf_note_in_memory(void)
{
	size_t len = 0;

	dl_iterate_phdr(find_self, &len);
	CU_ASSERT(len == 20);
}

UNIT_MAIN("elf-note",
	  UNIT_TEST("build_id_after_other_notes", test_elf_note_build_id_after_other_notes),
	  UNIT_TEST("align8", test_elf_note_align8),
	  UNIT_TEST("malformed", test_elf_note_malformed),
	  UNIT_TEST("in_memory", test_elf_note_in_memory))
