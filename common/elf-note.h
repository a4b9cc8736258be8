/* SPDX-License-Identifier: MIT */
/* ELF note parsing: the GNU build-id of a module, read from its PT_NOTE segments in memory. */
#ifndef PCOLLECT_COMMON_ELF_NOTE_H
#define PCOLLECT_COMMON_ELF_NOTE_H

#include <stddef.h>
#include <stdint.h>

/*
 * Find the NT_GNU_BUILD_ID note ("GNU" owner) in the note area [notes, notes + len), whose
 * entries are aligned to align bytes (4 or 8, the segment's p_align; other values are read
 * as 4). Copies the build-id into out (at most out_size bytes) and returns its length, or 0
 * when there is none or the area is malformed (a note running past the end stops the scan).
 */
size_t elf_note_build_id(const void *notes, size_t len, size_t align, uint8_t *out,
			 size_t out_size);

/* Lower-case hex of id[0..n) into buf (2n+1 bytes at most size); returns buf. */
char *elf_note_hex(const uint8_t *id, size_t n, char *buf, size_t size);

#endif
