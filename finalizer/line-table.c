/* SPDX-License-Identifier: MIT */
/* DWARF 2-5 line tables (DWARF 5, section 6.2): the header, its file table, the program. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "finalizer/byte-reader.h"
#include "common/hash-index.h"
#include "finalizer/line-table.h"

/* A NUL-terminated string at off of a string section, or NULL. */
static const char *section_str(const uint8_t *sec, size_t size, uint64_t off)
{
	if (!sec || off >= size || !memchr(sec + off, 0, size - (size_t)off))
		return NULL;
	return (const char *)sec + off;
}

/* DWARF 5 forms a line table header may use. */
enum {
	FORM_block = 0x09,
	FORM_block1 = 0x0a,
	FORM_data1 = 0x0b,
	FORM_data2 = 0x05,
	FORM_data4 = 0x06,
	FORM_data8 = 0x07,
	FORM_data16 = 0x1e,
	FORM_string = 0x08,
	FORM_strp = 0x0e,
	FORM_line_strp = 0x1f,
	FORM_udata = 0x0f,
	FORM_sdata = 0x0d,
	LNCT_path = 0x1,
	LNCT_directory_index = 0x2,
};

/* Read one attribute of an entry; *str or *num get its value. False: a form not handled. */
static bool read_form(struct byte_reader *r, const struct line_sections *s, uint64_t form,
		      bool dwarf64, const char **str, uint64_t *num)
{
	uint64_t v;

	*str = NULL;
	*num = 0;
	switch (form) {
	case FORM_string:
		*str = byte_reader_str(r);
		return true;
	case FORM_line_strp:
		v = byte_reader_u(r, dwarf64 ? 8 : 4);
		*str = section_str(s->line_str, s->line_str_size, v);
		return true;
	case FORM_strp:
		v = byte_reader_u(r, dwarf64 ? 8 : 4);
		*str = section_str(s->str, s->str_size, v);
		return true;
	case FORM_udata:
		*num = byte_reader_uleb(r);
		return true;
	case FORM_sdata:
		*num = (uint64_t)byte_reader_sleb(r);
		return true;
	case FORM_data1:
		*num = byte_reader_u(r, 1);
		return true;
	case FORM_data2:
		*num = byte_reader_u(r, 2);
		return true;
	case FORM_data4:
		*num = byte_reader_u(r, 4);
		return true;
	case FORM_data8:
		*num = byte_reader_u(r, 8);
		return true;
	case FORM_data16:
		byte_reader_u(r, 8);
		byte_reader_u(r, 8);
		return true;
	case FORM_block:
	case FORM_block1:
		v = form == FORM_block ? byte_reader_uleb(r) : byte_reader_u(r, 1);
		if (v > (uint64_t)(r->end - r->p))
			r->bad = true;
		else
			r->p += v;
		return true;
	default:
		return false;
	}
}

/*
 * A DWARF 5 entry list (directories or files): the format, then count entries. Fills the
 * path and directory number of each. Returns the count, or -1.
 */
static long read_entries(struct byte_reader *r, const struct line_sections *s, bool dwarf64,
			 const char ***paths, uint64_t **dirs)
{
	uint64_t ct[32], form[32], count, i;
	unsigned nfmt = (unsigned)byte_reader_u(r, 1), k;

	if (nfmt > 32)
		return -1;
	for (k = 0; k < nfmt; k++) {
		ct[k] = byte_reader_uleb(r);
		form[k] = byte_reader_uleb(r);
	}
	count = byte_reader_uleb(r);
	if (r->bad || count > (uint64_t)(r->end - r->p))
		return -1; /* every entry takes a byte at least */
	*paths = calloc(count ? count : 1, sizeof(**paths));
	*dirs = calloc(count ? count : 1, sizeof(**dirs));
	if (!*paths || !*dirs)
		return -1;
	for (i = 0; i < count && !r->bad; i++)
		for (k = 0; k < nfmt; k++) {
			const char *str;
			uint64_t num;

			if (!read_form(r, s, form[k], dwarf64, &str, &num))
				return -1;
			if (ct[k] == LNCT_path)
				(*paths)[i] = str;
			else if (ct[k] == LNCT_directory_index)
				(*dirs)[i] = num;
		}
	return r->bad ? -1 : (long)count;
}

static int parse_v5_tables(struct line_table *t, struct byte_reader *r,
			   const struct line_sections *s, bool dwarf64)
{
	const char **paths = NULL;
	uint64_t *nums = NULL, i;
	long n;

	n = read_entries(r, s, dwarf64, &paths, &nums);
	free(nums);
	nums = NULL;
	if (n < 0) {
		free(paths);
		return -EINVAL;
	}
	t->dirs = paths;
	t->ndirs = (size_t)n;
	paths = NULL;
	n = read_entries(r, s, dwarf64, &paths, &nums);
	if (n < 0) {
		free(paths);
		free(nums);
		return -EINVAL;
	}
	t->files = calloc(n ? (size_t)n : 1, sizeof(*t->files));
	if (!t->files) {
		free(paths);
		free(nums);
		return -ENOMEM;
	}
	for (i = 0; i < (uint64_t)n; i++)
		t->files[i] = (struct line_file){ paths[i], nums[i] };
	t->nfiles = (size_t)n;
	t->file_base = 0;
	free(paths);
	free(nums);
	return 0;
}

static int parse_v2_tables(struct line_table *t, struct byte_reader *r)
{
	size_t cap = 0;
	const char *s;

	/* Directory 0 is the compilation directory, which the table leaves out. */
	if (array_reserve(&t->dirs, &cap, 1, sizeof(*t->dirs)))
		return -ENOMEM;
	t->dirs[t->ndirs++] = NULL;
	while ((s = byte_reader_str(r)) && *s) {
		if (array_reserve(&t->dirs, &cap, t->ndirs + 1, sizeof(*t->dirs)))
			return -ENOMEM;
		t->dirs[t->ndirs++] = s;
	}
	cap = 0;
	while ((s = byte_reader_str(r)) && *s) {
		if (array_reserve(&t->files, &cap, t->nfiles + 1, sizeof(*t->files)))
			return -ENOMEM;
		t->files[t->nfiles].name = s;
		t->files[t->nfiles].dir = byte_reader_uleb(r);
		byte_reader_uleb(r); /* modification time */
		byte_reader_uleb(r); /* length */
		t->nfiles++;
	}
	t->file_base = 1;
	return r->bad ? -EINVAL : 0;
}

int line_table_parse(struct line_table *t, const struct line_sections *s, uint64_t offset,
		     unsigned addr_size)
{
	struct byte_reader r;
	uint64_t len, hlen;
	bool dwarf64 = false;
	const uint8_t *hstart;
	int ret;

	memset(t, 0, sizeof(*t));
	if (!s->line || offset >= s->line_size)
		return -EINVAL;
	r = (struct byte_reader){ s->line + offset, s->line + s->line_size, false };
	len = byte_reader_u(&r, 4);
	if (len == 0xffffffff) {
		dwarf64 = true;
		len = byte_reader_u(&r, 8);
	} else if (len >= 0xfffffff0) {
		return -EINVAL;
	}
	if (r.bad || len > (uint64_t)(r.end - r.p))
		return -EINVAL;
	r.end = r.p + len;
	t->version = (unsigned)byte_reader_u(&r, 2);
	if (t->version < 2 || t->version > 5)
		return -EINVAL;
	t->addr_size = (uint8_t)addr_size;
	if (t->version >= 5) {
		t->addr_size = (uint8_t)byte_reader_u(&r, 1);
		if (byte_reader_u(&r, 1)) /* segment selectors: not on any target we read */
			return -EINVAL;
	}
	hlen = byte_reader_u(&r, dwarf64 ? 8 : 4);
	hstart = r.p;
	if (r.bad || hlen > (uint64_t)(r.end - r.p))
		return -EINVAL;
	t->program = hstart + hlen;
	t->end = r.end;
	t->min_inst = (uint8_t)byte_reader_u(&r, 1);
	t->max_ops = t->version >= 4 ? (uint8_t)byte_reader_u(&r, 1) : 1;
	t->default_is_stmt = (uint8_t)byte_reader_u(&r, 1);
	t->line_base = (int8_t)byte_reader_u(&r, 1);
	t->line_range = (uint8_t)byte_reader_u(&r, 1);
	t->opcode_base = (uint8_t)byte_reader_u(&r, 1);
	if (r.bad || !t->line_range || !t->opcode_base || !t->max_ops ||
	    (size_t)(t->program - r.p) < (size_t)t->opcode_base - 1 || t->program < r.p)
		return -EINVAL;
	t->std_lengths = r.p;
	r.p += t->opcode_base - 1;
	r.end = t->program; /* the tables end where the program starts */
	ret = t->version >= 5 ? parse_v5_tables(t, &r, s, dwarf64) : parse_v2_tables(t, &r);
	if (ret)
		line_table_release(t);
	return ret;
}

void line_table_release(struct line_table *t)
{
	free(t->dirs);
	free(t->files);
	memset(t, 0, sizeof(*t));
}

const struct line_file *line_table_file(const struct line_table *t, uint64_t n)
{
	if (n < t->file_base || n - t->file_base >= t->nfiles)
		return NULL;
	return &t->files[n - t->file_base];
}

int line_table_run(const struct line_table *t, line_row_fn fn, void *ctx)
{
	struct byte_reader r = { t->program, t->end, false };
	uint64_t addr = 0, file = 1, line = 1, op_index = 0;

	/* Advance by a number of operations (VLIW op_index; 1 op per instruction elsewhere). */
#define ADVANCE(n)                                                                                 \
	do {                                                                                       \
		uint64_t adv_ = (n);                                                               \
		addr += (uint64_t)t->min_inst * ((op_index + adv_) / t->max_ops);                  \
		op_index = (op_index + adv_) % t->max_ops;                                         \
	} while (0)

	while (r.p < r.end && !r.bad) {
		uint8_t op = (uint8_t)byte_reader_u(&r, 1);

		if (op >= t->opcode_base) {
			uint8_t adj = (uint8_t)(op - t->opcode_base);

			ADVANCE(adj / t->line_range);
			line += (uint64_t)(int64_t)(t->line_base + adj % t->line_range);
			fn(ctx, addr, file, line, false);
		} else if (op == 0) {
			uint64_t len = byte_reader_uleb(&r);
			const uint8_t *next;
			uint8_t sub;

			if (r.bad || !len || len > (uint64_t)(r.end - r.p))
				return -EINVAL;
			next = r.p + len;
			sub = (uint8_t)byte_reader_u(&r, 1);
			if (sub == 1) { /* DW_LNE_end_sequence */
				fn(ctx, addr, file, line, true);
				addr = 0;
				op_index = 0;
				file = 1;
				line = 1;
			} else if (sub == 2) { /* DW_LNE_set_address */
				if (len - 1 > 8)
					return -EINVAL;
				addr = byte_reader_u(&r, (unsigned)(len - 1));
				op_index = 0;
			}
			/* define_file, set_discriminator, vendor ones: nothing a row needs. */
			r.p = next;
		} else {
			switch (op) {
			case 1: /* DW_LNS_copy */
				fn(ctx, addr, file, line, false);
				break;
			case 2: /* DW_LNS_advance_pc */
				ADVANCE(byte_reader_uleb(&r));
				break;
			case 3: /* DW_LNS_advance_line */
				line += (uint64_t)byte_reader_sleb(&r);
				break;
			case 4: /* DW_LNS_set_file */
				file = byte_reader_uleb(&r);
				break;
			case 8: /* DW_LNS_const_add_pc */
				ADVANCE((255u - t->opcode_base) / t->line_range);
				break;
			case 9: /* DW_LNS_fixed_advance_pc */
				addr += byte_reader_u(&r, 2);
				op_index = 0;
				break;
			default: {
				/* set_column, negate_stmt, basic_block, prologue_end,
				   epilogue_begin, set_isa and vendor opcodes: skip operands. */
				unsigned k, n = t->std_lengths[op - 1];

				for (k = 0; k < n; k++)
					byte_reader_uleb(&r);
				break;
			}
			}
		}
	}
#undef ADVANCE
	return r.bad ? -EINVAL : 0;
}
