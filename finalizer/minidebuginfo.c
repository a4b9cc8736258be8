/* SPDX-License-Identifier: MIT */
/* Reading .gnu_debugdata: liblzma decompresses it, libelf reads the ELF file inside. */
#include <errno.h>
#include <gelf.h>
#include <lzma.h>
#include <stdint.h>
#include <stdlib.h>

#include "common/grow.h"
#include "finalizer/elf-file.h"
#include "finalizer/minidebuginfo.h"

/* The symbols of a large library take a few MiB; more is a damaged or hostile section. */
#define MAX_OUT (256u << 20)

/* Decompress the .xz stream in[0..size) into a new buffer *out (caller frees). */
static int xz_decode(const uint8_t *in, size_t size, uint8_t **out, size_t *out_size)
{
	lzma_stream s = LZMA_STREAM_INIT;
	size_t cap = size < (1u << 16) ? (1u << 18) : 4 * size, had;
	uint8_t *buf = NULL;
	lzma_ret r;
	int ret = 0;

	r = lzma_stream_decoder(&s, UINT64_MAX, 0);
	if (r != LZMA_OK)
		return r == LZMA_MEM_ERROR ? -ENOMEM : -EINVAL;
	buf = malloc(cap);
	if (!buf) {
		ret = -ENOMEM;
		goto out;
	}
	s.next_in = in;
	s.avail_in = size;
	s.next_out = buf;
	s.avail_out = cap;
	for (;;) {
		r = lzma_code(&s, LZMA_FINISH);
		if (r == LZMA_STREAM_END)
			break;
		if (r == LZMA_MEM_ERROR) {
			ret = -ENOMEM;
			goto out;
		}
		if (r != LZMA_OK && r != LZMA_BUF_ERROR) {
			ret = -EINVAL; /* not xz, damaged, or an unsupported filter */
			goto out;
		}
		if (s.avail_out) {
			ret = -EINVAL; /* the input ended before the stream did */
			goto out;
		}
		if (cap >= MAX_OUT) {
			ret = -EFBIG;
			goto out;
		}
		had = cap;
		if (array_reserve(&buf, &cap, had + 1, 1)) {
			ret = -ENOMEM;
			goto out;
		}
		s.next_out = buf + had;
		s.avail_out = cap - had;
	}
	*out = buf;
	*out_size = (size_t)s.total_out;
	buf = NULL;
out:
	free(buf);
	lzma_end(&s);
	return ret;
}

int minidebuginfo_load(struct symtab *t, Elf *elf)
{
	const uint8_t *data;
	uint8_t *buf = NULL;
	size_t size, n = 0;
	struct symtab more;
	Elf *mini;
	int ret;

	if (elf_section_find(elf, ".gnu_debugdata", &data, &size, NULL))
		return -ENOENT;
	ret = xz_decode(data, size, &buf, &n);
	if (ret)
		return ret;
	mini = elf_memory((char *)buf, n);
	if (!mini || elf_kind(mini) != ELF_K_ELF) {
		ret = -EINVAL;
		goto out;
	}
	/* Its names are copied out: the buffer goes with this function. */
	ret = symtab_load(&more, mini);
	if (!ret && more.source != SYMTAB_SYMTAB) {
		symtab_release(&more);
		ret = -ENOENT;
	} else if (!ret) {
		ret = symtab_merge(t, &more, SYMTAB_MINIDEBUGINFO);
	}
out:
	if (mini)
		elf_end(mini);
	free(buf);
	return ret;
}
