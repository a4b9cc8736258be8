/* SPDX-License-Identifier: MIT */
/* FDE ranges from .eh_frame and .debug_frame: hand-made records, and gcc's against .symtab. */
#include "finalizer/eh-frame.h"

#include <fcntl.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/unit/unit.h"

static const char *lib_eh, *lib_eh_stripped, *lib_debug_frame;

/* ---- a little-endian byte writer for hand-made records -------------------------------------- */

struct bytes {
	uint8_t b[1024];
	size_t n;
};

static size_t put(struct bytes *o, uint64_t v, size_t size)
{
	size_t at = o->n, i;

	for (i = 0; i < size; i++)
		o->b[o->n++] = (uint8_t)(v >> (8 * i));
	return at;
}

static void put_str(struct bytes *o, const char *s)
{
	size_t len = strlen(s) + 1;

	memcpy(o->b + o->n, s, len);
	o->n += len;
}

static void put_uleb(struct bytes *o, uint64_t v)
{
	do {
		uint8_t b = v & 0x7f;

		v >>= 7;
		o->b[o->n++] = (uint8_t)(b | (v ? 0x80 : 0));
	} while (v);
}

/* Fix the 4-byte length at at to cover the record up to here. */
static void close_record(struct bytes *o, size_t at)
{
	uint32_t len = (uint32_t)(o->n - at - 4);

	memcpy(o->b + at, &len, 4);
}

/* ---- a minimal ELF64 image: .text (no bits) at 0x1000, the frame section at 0x3000 ---------- */

#define TEXT_ADDR  0x1000
#define TEXT_SIZE  0x1000
#define FRAME_ADDR 0x3000

struct image {
	uint8_t *buf;
	Elf *elf;
};

static int image_make(struct image *im, const char *frame_name, const struct bytes *frame)
{
	/* "", ".text", the frame section's name, ".shstrtab" */
	char shstr[64] = "\0.text";
	size_t name_len = strlen(frame_name) + 1, shstr_len, off, shoff;
	Elf64_Ehdr eh = { 0 };
	Elf64_Shdr sh[4] = { { 0 } };

	memcpy(shstr + 7, frame_name, name_len);
	memcpy(shstr + 7 + name_len, ".shstrtab", sizeof(".shstrtab"));
	shstr_len = 7 + name_len + sizeof(".shstrtab");
	im->buf = calloc(1, 4096);
	if (!im->buf)
		return -1;
	off = sizeof(eh);
	memcpy(im->buf + off, frame->b, frame->n);
	sh[1] = (Elf64_Shdr){ .sh_name = 1,
			      .sh_type = SHT_NOBITS,
			      .sh_flags = SHF_ALLOC | SHF_EXECINSTR,
			      .sh_addr = TEXT_ADDR,
			      .sh_offset = off,
			      .sh_size = TEXT_SIZE,
			      .sh_addralign = 16 };
	sh[2] = (Elf64_Shdr){ .sh_name = 7,
			      .sh_type = SHT_PROGBITS,
			      .sh_flags = strcmp(frame_name, ".eh_frame") ? 0 : SHF_ALLOC,
			      .sh_addr = strcmp(frame_name, ".eh_frame") ? 0 : FRAME_ADDR,
			      .sh_offset = off,
			      .sh_size = frame->n,
			      .sh_addralign = 8 };
	off += frame->n;
	memcpy(im->buf + off, shstr, shstr_len);
	sh[3] = (Elf64_Shdr){ .sh_name = (Elf64_Word)(7 + name_len),
			      .sh_type = SHT_STRTAB,
			      .sh_offset = off,
			      .sh_size = shstr_len,
			      .sh_addralign = 1 };
	off += shstr_len;
	shoff = (off + 7) & ~(size_t)7;
	memcpy(im->buf + shoff, sh, sizeof(sh));
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_type = ET_DYN;
	eh.e_machine = EM_X86_64;
	eh.e_version = EV_CURRENT;
	eh.e_shoff = shoff;
	eh.e_ehsize = sizeof(eh);
	eh.e_shentsize = sizeof(Elf64_Shdr);
	eh.e_shnum = 4;
	eh.e_shstrndx = 3;
	memcpy(im->buf, &eh, sizeof(eh));
	elf_version(EV_CURRENT);
	im->elf = elf_memory((char *)im->buf, shoff + sizeof(sh));
	return im->elf ? 0 : -1;
}

static void image_free(struct image *im)
{
	elf_end(im->elf);
	free(im->buf);
}

/* A CIE of augmentation aug; returns where it starts. enc_data: its augmentation data. */
static size_t cie(struct bytes *o, uint32_t id, uint8_t version, const char *aug,
		  const uint8_t *aug_data, size_t aug_len)
{
	size_t at = put(o, 0, 4);

	put(o, id, 4);
	put(o, version, 1);
	put_str(o, aug);
	if (version == 4) {
		put(o, 8, 1); /* address size */
		put(o, 0, 1); /* segment selector size */
	}
	put_uleb(o, 1);  /* code alignment */
	put(o, 0x78, 1); /* data alignment -8, sleb */
	put(o, 16, 1);   /* return address register */
	if (aug[0] == 'z') {
		put_uleb(o, aug_len);
		memcpy(o->b + o->n, aug_data, aug_len);
		o->n += aug_len;
	}
	put(o, 0, (8 - (o->n - at) % 8) % 8); /* DW_CFA_nop padding */
	close_record(o, at);
	return at;
}

/* An .eh_frame FDE of cie_at whose pc_begin and pc_range writer fills in. */
static size_t fde_begin(struct bytes *o, size_t cie_at)
{
	size_t at = put(o, 0, 4);
	size_t id_at = o->n;

	put(o, id_at - cie_at, 4);
	return at;
}

static void fde_end(struct bytes *o, size_t at, bool z)
{
	if (z)
		put_uleb(o, 0); /* no augmentation data */
	close_record(o, at);
}

/* An FDE of cie_at for [start, start + size): 4-byte fields, the start pc-relative if pcrel. */
static void fde4(struct bytes *o, size_t cie_at, uint64_t start, uint32_t size, bool pcrel)
{
	size_t at = fde_begin(o, cie_at);

	put(o, pcrel ? (uint32_t)(start - (FRAME_ADDR + o->n)) : start, 4);
	put(o, size, 4);
	fde_end(o, at, true);
}

static bool has(const struct fde_table *t, uint64_t start, uint64_t end)
{
	const struct fde_range *r = fde_table_at(t, start);

	return r && r->end == end;
}

/* The hand-made .eh_frame of test_eh_frame_encodings() (the expected table is there). */
static void records(struct bytes *o_out)
{
	static const uint8_t pcrel4[] = { 0x1b };                       /* "zR": pcrel | sdata4 */
	static const uint8_t zplr[] = { 0x9b, 0, 0, 0, 0, 0x1b, 0x1b }; /* "zPLR" */
	static const uint8_t udata4[] = { 0x03 }, uleb[] = { 0x01 }, textrel[] = { 0x23 };
	struct bytes o = { { 0 }, 0 };
	size_t c1, c2, c3, c4, c5, c6, f;

	c1 = cie(&o, 0, 1, "zR", pcrel4, 1);
	fde4(&o, c1, 0x1100, 0x40, true); /* 0x1100 from the field's own address */
	c2 = cie(&o, 0, 1, "zPLR", zplr, sizeof(zplr));
	fde4(&o, c2, 0x1180, 0x20, true);
	c3 = cie(&o, 0, 1, "", NULL, 0); /* no augmentation: absolute 8-byte addresses */
	f = fde_begin(&o, c3);
	put(&o, 0x1200, 8);
	put(&o, 0x30, 8);
	fde_end(&o, f, false);
	c4 = cie(&o, 0, 3, "zR", udata4, 1);
	fde4(&o, c4, 0x1300, 0x10, false);
	fde4(&o, c4, 0x9000, 0x10, false); /* outside every executable section: dropped */
	fde4(&o, c4, 0x1340, 0, false);    /* empty: dropped */
	/* two overlapping: the first ends where the second starts */
	fde4(&o, c4, 0x1400, 0x80, false);
	fde4(&o, c4, 0x1440, 0x20, false);
	c5 = cie(&o, 0, 1, "zR", uleb, 1);
	f = fde_begin(&o, c5);
	put_uleb(&o, 0x1500);
	put_uleb(&o, 0x300);
	fde_end(&o, f, true);
	c6 = cie(&o, 0, 1, "zR", textrel, 1);
	fde4(&o, c6, 0x900, 0x50, false); /* relative to .text */
	{ /* a 64-bit length: 0xffffffff, then 8 bytes; the CIE pointer stays 4 bytes */
		size_t at = put(&o, 0xffffffffu, 4), len_at = put(&o, 0, 8);
		uint64_t len;

		put(&o, o.n - c4, 4);
		put(&o, 0x1a00, 4);
		put(&o, 0x100, 4);
		put_uleb(&o, 0);
		len = o.n - len_at - 8;
		memcpy(o.b + len_at, &len, 8);
		(void)at;
	}
	put(&o, 0, 4); /* the terminator: nothing after it is read */
	fde4(&o, c4, 0x1f00, 0x10, false);

	*o_out = o;
}

static void test_eh_frame_encodings(void)
{
	struct bytes o;
	struct fde_table t;
	struct image im;

	records(&o);
	CU_ASSERT_FATAL(image_make(&im, ".eh_frame", &o) == 0);
	CU_ASSERT_FATAL(fde_table_load(&t, im.elf) == 0);
	CU_ASSERT(t.source == FDE_EH_FRAME);
	CU_ASSERT(has(&t, 0x1100, 0x1140));
	CU_ASSERT(has(&t, 0x1180, 0x11a0));
	CU_ASSERT(has(&t, 0x1200, 0x1230));
	CU_ASSERT(has(&t, 0x1300, 0x1310));
	CU_ASSERT(has(&t, 0x1400, 0x1440));
	CU_ASSERT(has(&t, 0x1440, 0x1460));
	CU_ASSERT(has(&t, 0x1500, 0x1800));
	CU_ASSERT(has(&t, 0x1900, 0x1950));
	CU_ASSERT(has(&t, 0x1a00, 0x1b00));
	CU_ASSERT(t.n == 9);
	CU_ASSERT(fde_table_find(&t, 0x113f) == fde_table_at(&t, 0x1100));
	CU_ASSERT(fde_table_find(&t, 0x1140) == NULL);
	CU_ASSERT(fde_table_find(&t, 0x1340) == NULL);
	CU_ASSERT(fde_table_find(&t, 0x1470) == NULL);
	CU_ASSERT(fde_table_find(&t, 0x10ff) == NULL);
	fde_table_release(&t);
	image_free(&im);
}

static void test_eh_frame_debug_frame_records(void)
{
	struct bytes o = { { 0 }, 0 };
	struct fde_table t;
	struct image im;
	size_t c, f;

	/* .debug_frame: CIE id all ones, version 4 with its address size; FDEs name their CIE
	   by its offset in the section, and write plain addresses. */
	c = cie(&o, 0xffffffffu, 4, "", NULL, 0);
	f = put(&o, 0, 4);
	put(&o, c, 4);
	put(&o, 0x1600, 8);
	put(&o, 0x44, 8);
	close_record(&o, f);
	f = put(&o, 0, 4); /* a function the linker dropped: address 0 */
	put(&o, c, 4);
	put(&o, 0, 8);
	put(&o, 0x44, 8);
	close_record(&o, f);
	CU_ASSERT_FATAL(image_make(&im, ".debug_frame", &o) == 0);
	CU_ASSERT_FATAL(fde_table_load(&t, im.elf) == 0);
	CU_ASSERT(t.source == FDE_DEBUG_FRAME);
	CU_ASSERT(t.n == 1 && has(&t, 0x1600, 0x1644));
	fde_table_release(&t);
	image_free(&im);
}

/* Damaged tables: whatever the bytes, the table is sorted, disjoint and inside .text. */
static void test_eh_frame_damaged(void)
{
	struct bytes good, o;
	unsigned seed = 1;
	size_t round, k, bad = 0;

	records(&good);
	for (round = 0; round < 3000; round++) {
		struct fde_table t;
		struct image im;

		o = good;
		for (k = 0; k < 1 + round % 8; k++) {
			seed = seed * 1103515245u + 12345u;
			o.b[(seed >> 8) % o.n] = (uint8_t)(seed >> 20);
		}
		if (round % 5 == 0) /* cut short */
			o.n = (seed >> 4) % good.n;
		CU_ASSERT_FATAL(image_make(&im, ".eh_frame", &o) == 0);
		CU_ASSERT_FATAL(fde_table_load(&t, im.elf) == 0);
		for (k = 0; k < t.n; k++) {
			bool ok = t.v[k].start < t.v[k].end && t.v[k].start >= TEXT_ADDR &&
				  t.v[k].end <= TEXT_ADDR + TEXT_SIZE &&
				  (!k || t.v[k - 1].end <= t.v[k].start);

			bad += !ok;
		}
		fde_table_release(&t);
		image_free(&im);
	}
	CU_ASSERT(bad == 0);
}

/* ---- gcc's tables against the symbols of the same code -------------------------------------- */

struct file {
	int fd;
	Elf *elf;
};

static Elf *file_open(struct file *f, const char *path)
{
	elf_version(EV_CURRENT); /* before libelf's first handle; again is harmless */
	f->fd = open(path, O_RDONLY);
	f->elf = f->fd < 0 ? NULL : elf_begin(f->fd, ELF_C_READ, NULL);
	return f->elf;
}

static void file_close(struct file *f)
{
	elf_end(f->elf);
	close(f->fd);
}

/* Every sized function symbol of path's .symtab that an FDE covers is exactly one FDE. */
static void symbols_are_ranges(const char *path, const struct fde_table *t, const char *must)
{
	struct file fl;
	Elf_Scn *scn = NULL;
	size_t checked = 0;
	bool found_must = false;

	CU_ASSERT_FATAL(file_open(&fl, path) != NULL);
	while ((scn = elf_nextscn(fl.elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		size_t i;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB ||
		    !(d = elf_getdata(scn, NULL)))
			continue;
		for (i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym s;
			const char *name;
			const struct fde_range *r;

			if (!gelf_getsym(d, (int)i, &s) || GELF_ST_TYPE(s.st_info) != STT_FUNC ||
			    !s.st_size || !(r = fde_table_find(t, s.st_value)))
				continue;
			name = elf_strptr(fl.elf, sh.sh_link, s.st_name);
			if (r->start != s.st_value || r->end != s.st_value + s.st_size)
				printf("\n    %s: symbol [0x%llx, 0x%llx), FDE [0x%llx, 0x%llx)",
				       name, (unsigned long long)s.st_value,
				       (unsigned long long)(s.st_value + s.st_size),
				       (unsigned long long)r->start, (unsigned long long)r->end);
			CU_ASSERT(r->start == s.st_value && r->end == s.st_value + s.st_size);
			found_must |= name && !strcmp(name, must);
			checked++;
		}
	}
	printf("\n    %s: %zu functions match their FDE (%s)", path, checked,
	       fde_source_name(t->source));
	CU_ASSERT(checked >= 3);
	CU_ASSERT(found_must);
	file_close(&fl);
}

static void test_eh_frame_gcc_matches_symtab(void)
{
	struct fde_table t, ts;
	struct file a, b;
	size_t i;

	CU_ASSERT_FATAL(file_open(&a, lib_eh) != NULL);
	CU_ASSERT_FATAL(file_open(&b, lib_eh_stripped) != NULL);
	CU_ASSERT_FATAL(fde_table_load(&t, a.elf) == 0);
	CU_ASSERT_FATAL(fde_table_load(&ts, b.elf) == 0);
	CU_ASSERT(t.source == FDE_EH_FRAME);
	symbols_are_ranges(lib_eh, &t, "split_work.cold");
	/* stripping keeps .eh_frame: the same table */
	CU_ASSERT_FATAL(ts.n == t.n);
	for (i = 0; i < t.n; i++)
		CU_ASSERT(ts.v[i].start == t.v[i].start && ts.v[i].end == t.v[i].end);
	fde_table_release(&t);
	fde_table_release(&ts);
	file_close(&a);
	file_close(&b);
}

static void test_eh_frame_gcc_debug_frame(void)
{
	struct fde_table t;
	struct file a;

	/* built with -fno-asynchronous-unwind-tables: .eh_frame holds only a terminator */
	CU_ASSERT_FATAL(file_open(&a, lib_debug_frame) != NULL);
	CU_ASSERT_FATAL(fde_table_load(&t, a.elf) == 0);
	CU_ASSERT(t.source == FDE_DEBUG_FRAME);
	symbols_are_ranges(lib_debug_frame, &t, "split_work");
	fde_table_release(&t);
	file_close(&a);
}

static const char **const libs[] = { &lib_eh, &lib_eh_stripped, &lib_debug_frame };

UNIT_MAIN_FILES("eh-frame", libs, "LIBRARY STRIPPED-LIBRARY DEBUG-FRAME-LIBRARY", NULL, NULL,
		{
			{ "pointer encodings, lengths, dropped and overlapping FDEs",
			  test_eh_frame_encodings },
			{ ".debug_frame records", test_eh_frame_debug_frame_records },
			{ "damaged tables", test_eh_frame_damaged },
			{ "gcc's .eh_frame: one FDE per function symbol, stripped or not",
			  test_eh_frame_gcc_matches_symtab },
			{ "gcc's .debug_frame: one FDE per function symbol",
			  test_eh_frame_gcc_debug_frame },
		})
