/* SPDX-License-Identifier: MIT */
/* The FDEs of .eh_frame / .debug_frame parsed into sorted function extents. */
#include <errno.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/cmp.h"
#include "common/grow.h"
#include "finalizer/byte-reader.h"
#include "finalizer/eh-frame.h"
#include "finalizer/elf-file.h"
#include "finalizer/sorted.h"

/*
 * The record layout (DWARF 5 section 6.4.1, and the LSB's .eh_frame chapter for its
 * differences): a length (4 bytes, or 0xffffffff then 8), an id, then the body. A CIE's id is
 * 0 in .eh_frame and all ones in .debug_frame; an FDE's is its CIE's position: in .eh_frame
 * the distance back from the id field, in .debug_frame the offset in the section. An FDE
 * body starts with pc_begin and pc_range, written as the CIE's 'R' augmentation says
 * (.debug_frame: plain addresses of the CIE's address size).
 */

/* Pointer encodings (DW_EH_PE_*): the low nibble is the format, bits 4-6 the base. */
#define PE_ABSPTR   0x00
#define PE_ULEB128  0x01
#define PE_UDATA2   0x02
#define PE_UDATA4   0x03
#define PE_UDATA8   0x04
#define PE_SLEB128  0x09
#define PE_SDATA2   0x0a
#define PE_SDATA4   0x0b
#define PE_SDATA8   0x0c
#define PE_PCREL    0x10
#define PE_TEXTREL  0x20
#define PE_DATAREL  0x30
#define PE_ALIGNED  0x50
#define PE_INDIRECT 0x80
#define PE_OMIT     0xff

/* One frame section and the bases its pointers may be relative to. */
struct frame_sec {
	const uint8_t *data;
	size_t size;
	uint64_t addr;       /* the section's address: pc-relative pointers count from it */
	bool eh;             /* .eh_frame, else .debug_frame */
	uint8_t asize;       /* address size of the file's class */
	uint64_t text;       /* .text's address, for text-relative pointers (0: none) */
	uint64_t got;        /* .got's address, for data-relative pointers (0: none) */
	uint64_t (*exec)[2]; /* executable sections: [start, end) */
	size_t nexec;
};

struct cie {
	size_t off;    /* where it starts in the section; SIZE_MAX: none parsed yet */
	bool ok;       /* its layout is one this reader knows */
	uint8_t renc;  /* how its FDEs write pc_begin and pc_range */
	uint8_t asize; /* address size (a version 4 CIE says) */
};

/* A value of format enc & 0x0f (no base applied). False for an unknown format. */
static bool read_value(struct byte_reader *c, uint8_t enc, uint8_t asize, uint64_t *out)
{
	switch (enc & 0x0f) {
	case PE_ABSPTR:
		*out = byte_reader_u(c, asize);
		break;
	case PE_ULEB128:
		*out = byte_reader_uleb(c);
		break;
	case PE_UDATA2:
		*out = byte_reader_u(c, 2);
		break;
	case PE_UDATA4:
		*out = byte_reader_u(c, 4);
		break;
	case PE_UDATA8:
	case PE_SDATA8:
		*out = byte_reader_u(c, 8);
		break;
	case PE_SLEB128:
		*out = (uint64_t)byte_reader_sleb(c);
		break;
	case PE_SDATA2:
		*out = (uint64_t)(int64_t)(int16_t)byte_reader_u(c, 2);
		break;
	case PE_SDATA4:
		*out = (uint64_t)(int64_t)(int32_t)byte_reader_u(c, 4);
		break;
	default:
		return false;
	}
	return !c->bad;
}

/*
 * A pointer written with encoding enc, its base applied. False when it cannot be known here:
 * an unknown format or base, or an indirect pointer (its value is in memory, at run time).
 */
static bool read_pointer(struct byte_reader *c, const struct frame_sec *s, uint8_t enc,
			 uint8_t asize, uint64_t *out)
{
	uint64_t at;

	if ((enc & 0x70) == PE_ALIGNED) {
		while ((s->addr + (uint64_t)(c->p - s->data)) % asize && c->p < c->end)
			c->p++;
		enc = PE_ABSPTR;
	}
	at = s->addr + (uint64_t)(c->p - s->data);
	if (!read_value(c, enc, asize, out))
		return false;
	switch (enc & 0x70) {
	case PE_ABSPTR:
		break;
	case PE_PCREL:
		*out += at;
		break;
	case PE_TEXTREL:
		if (!s->text)
			return false;
		*out += s->text;
		break;
	case PE_DATAREL:
		if (!s->got)
			return false;
		*out += s->got;
		break;
	default:
		return false; /* funcrel: relative to a function this record is not in */
	}
	if (asize == 4)
		*out &= 0xffffffffu;
	return !(enc & PE_INDIRECT);
}

/* One record's header, read by record_open(). */
struct record {
	struct byte_reader body; /* after the id, up to the record's end */
	size_t next;             /* the offset of the next record */
	size_t id_at;            /* the offset of the id field */
	uint64_t id;
	bool is_cie;
};

/*
 * The record at off. Returns 1, 0 for a zero length (.eh_frame's terminator), -1 when the
 * length runs past the section (nothing after it can be trusted).
 */
static int record_open(const struct frame_sec *s, size_t off, struct record *r)
{
	struct byte_reader c = { s->data + off, s->data + s->size, off > s->size };
	uint64_t len = byte_reader_u(&c, 4), all_ones = 0xffffffffu;
	unsigned idlen = 4;

	if (!c.bad && len == 0)
		return 0;
	if (len == 0xffffffffu) {
		len = byte_reader_u(&c, 8);
		if (!s->eh) { /* 64-bit DWARF; .eh_frame's ids stay 4 bytes */
			idlen = 8;
			all_ones = UINT64_MAX;
		}
	}
	if (c.bad || len > (uint64_t)(c.end - c.p))
		return -1;
	r->next = (size_t)(c.p - s->data) + (size_t)len;
	c.end = s->data + r->next;
	r->id_at = (size_t)(c.p - s->data);
	r->id = byte_reader_u(&c, idlen);
	r->is_cie = r->id == (s->eh ? 0 : all_ones);
	r->body = c;
	return 1;
}

/* Read the CIE at off into *cie (cie->ok false when its layout is unknown). */
static void cie_parse(const struct frame_sec *s, size_t off, struct cie *cie)
{
	struct record r;
	struct byte_reader c;
	const char *aug, *a;
	uint8_t version;

	memset(cie, 0, sizeof(*cie));
	cie->off = off;
	cie->renc = PE_ABSPTR;
	cie->asize = s->asize;
	if (record_open(s, off, &r) != 1 || !r.is_cie || r.body.bad)
		return;
	c = r.body;
	version = (uint8_t)byte_reader_u(&c, 1);
	if (version != 1 && version != 3 && version != 4)
		return;
	aug = (const char *)c.p;
	while (c.p < c.end && *c.p)
		c.p++;
	if (c.p++ >= c.end)
		return;
	if (version == 4) {
		cie->asize = (uint8_t)byte_reader_u(&c, 1);
		byte_reader_u(&c, 1); /* segment selector size */
		if (cie->asize != 4 && cie->asize != 8)
			return;
	}
	if (aug[0] && aug[0] != 'z')
		return;       /* gcc 2's "eh" and others: a layout without a length to skip by */
	byte_reader_uleb(&c); /* code alignment */
	byte_reader_sleb(&c); /* data alignment */
	if (version == 1)
		byte_reader_u(&c, 1); /* return address register */
	else
		byte_reader_uleb(&c);
	if (aug[0] == 'z') {
		uint64_t alen = byte_reader_uleb(&c), skip;

		if (c.bad || alen > (uint64_t)(c.end - c.p))
			return;
		c.end = c.p + alen;
		for (a = aug + 1; *a; a++) {
			if (*a == 'R') {
				cie->renc = (uint8_t)byte_reader_u(&c, 1);
			} else if (*a == 'L') {
				byte_reader_u(&c, 1); /* LSDA encoding */
			} else if (*a == 'P') {
				uint8_t penc = (uint8_t)byte_reader_u(&c, 1);

				if ((penc & 0x70) == PE_ALIGNED)
					return;
				if (!read_value(&c, penc, cie->asize, &skip))
					return; /* the personality routine's pointer */
			} else if (*a != 'S' && *a != 'B' && *a != 'G') {
				/* Unknown: its data's size is unknown too, so an 'R' after it is
				 * lost. */
				if (strchr(a, 'R'))
					return;
				break;
			}
		}
	}
	cie->ok = !c.bad && cie->renc != PE_OMIT;
}

/* [start, end) lies within one executable section. */
static bool in_exec(const struct frame_sec *s, uint64_t start, uint64_t end)
{
	size_t i;

	for (i = 0; i < s->nexec; i++)
		if (start >= s->exec[i][0] && end <= s->exec[i][1])
			return true;
	return false;
}

/* Append the FDEs of s to *v. 0 or -ENOMEM. */
static int scan(const struct frame_sec *s, struct fde_range **v, size_t *n, size_t *cap)
{
	struct cie cie = { .off = SIZE_MAX };
	size_t off = 0;

	while (off + 4 <= s->size) {
		struct record r;
		uint64_t start, range;
		size_t cie_off;
		int got = record_open(s, off, &r);

		if (got < 0 || (got == 0 && s->eh))
			break; /* the terminator, or a length that cannot be trusted */
		if (got == 0) {
			off += 4;
			continue;
		}
		off = r.next;
		if (r.body.bad || r.is_cie)
			continue;
		if (s->eh ? r.id > r.id_at : r.id >= s->size)
			continue;
		cie_off = s->eh ? r.id_at - (size_t)r.id : (size_t)r.id;
		if (cie.off != cie_off)
			cie_parse(s, cie_off, &cie);
		if (!cie.ok || !read_pointer(&r.body, s, cie.renc, cie.asize, &start) ||
		    !read_value(&r.body, cie.renc & 0x0f, cie.asize, &range))
			continue;
		if (cie.asize == 4)
			range &= 0xffffffffu;
		if (!range || start + range < start || !in_exec(s, start, start + range))
			continue;
		if (GROW(*v, *n + 1, *cap))
			return -ENOMEM;
		(*v)[(*n)++] = (struct fde_range){ start, start + range };
	}
	return 0;
}

/* The executable sections, text and GOT addresses of elf. 0 or -ENOMEM. */
static int sections_read(Elf *elf, struct frame_sec *s)
{
	size_t shstrndx, cap = 0;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return 0;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh))
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (name && !strcmp(name, ".text"))
			s->text = sh.sh_addr;
		if (name && !strcmp(name, ".got"))
			s->got = sh.sh_addr;
		/* NOBITS too: a separate debug file keeps the headers of the code it describes. */
		if ((sh.sh_flags & (SHF_ALLOC | SHF_EXECINSTR)) != (SHF_ALLOC | SHF_EXECINSTR) ||
		    !sh.sh_size)
			continue;
		if (GROW(s->exec, s->nexec + 1, cap))
			return -ENOMEM;
		s->exec[s->nexec][0] = sh.sh_addr;
		s->exec[s->nexec][1] = sh.sh_addr + sh.sh_size;
		s->nexec++;
	}
	return 0;
}

static int range_cmp(const void *a, const void *b)
{
	const struct fde_range *x = a, *y = b;

	return CMP_THEN(CMP(x->start, y->start), CMP(y->end, x->end)); /* the longer first */
}

int fde_table_adopt(struct fde_table *t, struct fde_range *v, size_t n, enum fde_source source)
{
	size_t i, k = 0;

	memset(t, 0, sizeof(*t));
	if (v && n)
		qsort(v, n, sizeof(*v), range_cmp);
	for (i = 0; i < n; i++) {
		if (v[i].end <= v[i].start || (k && v[k - 1].start == v[i].start))
			continue;
		/* Overlapping FDEs: a function starts where the next begins. */
		if (k && v[k - 1].end > v[i].start)
			v[k - 1].end = v[i].start;
		v[k++] = v[i];
	}
	if (!k) {
		free(v);
		return 0;
	}
	t->v = v;
	t->n = k;
	t->source = source;
	return 0;
}

int fde_table_load(struct fde_table *t, Elf *elf)
{
	static const char *const names[] = { ".eh_frame", ".debug_frame" };
	static const enum fde_source sources[] = { FDE_EH_FRAME, FDE_DEBUG_FRAME };
	struct frame_sec s = { 0 };
	struct fde_range *v = NULL;
	size_t n = 0, cap = 0, i;
	const uint8_t *id;
	int ret;

	memset(t, 0, sizeof(*t));
	id = (const uint8_t *)elf_getident(elf, NULL);
	if (!id || id[EI_DATA] != ELFDATA2LSB)
		return 0;
	s.asize = gelf_getclass(elf) == ELFCLASS32 ? 4 : 8;
	ret = sections_read(elf, &s);
	for (i = 0; !ret && i < 2 && !n; i++) {
		if (elf_section_find(elf, names[i], &s.data, &s.size, &s.addr))
			continue;
		s.eh = sources[i] == FDE_EH_FRAME;
		ret = scan(&s, &v, &n, &cap);
		if (!ret && n)
			ret = fde_table_adopt(t, v, n, sources[i]);
	}
	if (ret && !t->v)
		free(v);
	free(s.exec);
	return ret;
}

void fde_table_release(struct fde_table *t)
{
	free(t->v);
	memset(t, 0, sizeof(*t));
}

/* Index of the first range starting above addr. */
static size_t upper(const struct fde_table *t, uint64_t addr)
{
	return sorted_upper_u64(t->v, t->n, sizeof(*t->v), offsetof(struct fde_range, start), addr);
}

const struct fde_range *fde_table_find(const struct fde_table *t, uint64_t addr)
{
	size_t k = upper(t, addr);

	return k && addr < t->v[k - 1].end ? &t->v[k - 1] : NULL;
}

const struct fde_range *fde_table_at(const struct fde_table *t, uint64_t addr)
{
	size_t k = upper(t, addr);

	return k && t->v[k - 1].start == addr ? &t->v[k - 1] : NULL;
}

const char *fde_source_name(enum fde_source s)
{
	return s == FDE_EH_FRAME ? ".eh_frame" : s == FDE_DEBUG_FRAME ? ".debug_frame" : "none";
}
