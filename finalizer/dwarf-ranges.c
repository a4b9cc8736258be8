/* SPDX-License-Identifier: MIT */
/* The code ranges of a DIE: DW_AT_low_pc/high_pc, DW_AT_ranges (.debug_ranges, .debug_rnglists). */
#include <errno.h>

#include "finalizer/dwarf-info-private.h"

static int range_add(struct range_set *s, uint64_t lo, uint64_t hi)
{
	if (hi <= lo)
		return 0;
	if (array_reserve(&s->r, &s->cap, s->n + 1, sizeof(*s->r)))
		return -ENOMEM;
	s->r[s->n].lo = lo;
	s->r[s->n].hi = hi;
	s->n++;
	return 0;
}

/* The offset or index an attribute holds (DW_FORM_sec_offset, rnglistx, data). */
int dbg_attr_offset(Dwarf_Debug dbg, Dwarf_Attribute a, Dwarf_Unsigned *out)
{
	Dwarf_Error e = NULL;
	Dwarf_Off off;

	if (dwarf_global_formref(a, &off, &e) == DW_DLV_OK) {
		*out = off;
		return 0;
	}
	dbg_drop_error(dbg, &e);
	if (dwarf_formudata(a, out, &e) == DW_DLV_OK)
		return 0;
	dbg_drop_error(dbg, &e);
	return -1;
}

static void rnglists_read(struct cu_ctx *c, Dwarf_Attribute a, Dwarf_Half form,
			  Dwarf_Unsigned value, struct range_set *s)
{
	Dwarf_Rnglists_Head head = NULL;
	Dwarf_Unsigned count = 0, goff = 0, i;
	Dwarf_Error e = NULL;

	if (dwarf_rnglists_get_rle_head(a, form, value, &head, &count, &goff, &e) != DW_DLV_OK) {
		dbg_drop_error(c->dbg, &e);
		return;
	}
	for (i = 0; i < count; i++) {
		unsigned len = 0, code = 0;
		Dwarf_Unsigned raw1, raw2, lo, hi;
		Dwarf_Bool unavailable = 0;

		if (dwarf_get_rnglists_entry_fields_a(head, i, &len, &code, &raw1, &raw2,
						      &unavailable, &lo, &hi, &e) != DW_DLV_OK) {
			dbg_drop_error(c->dbg, &e);
			break;
		}
		switch (code) {
		case DW_RLE_startx_endx:
		case DW_RLE_startx_length:
		case DW_RLE_offset_pair:
		case DW_RLE_start_end:
		case DW_RLE_start_length:
			if (!unavailable && range_add(s, lo, hi))
				c->err = -ENOMEM;
			break;
		default:
			break;
		}
	}
	dwarf_dealloc_rnglists_head(head);
}

static void ranges_read(struct cu_ctx *c, Dwarf_Die die, Dwarf_Unsigned off, struct range_set *s)
{
	Dwarf_Ranges *r = NULL;
	Dwarf_Signed n = 0, i;
	Dwarf_Unsigned bytes = 0;
	Dwarf_Off real = 0;
	Dwarf_Error e = NULL;
	uint64_t base = c->base;

	if (dwarf_get_ranges_b(c->dbg, off, die, &real, &r, &n, &bytes, &e) != DW_DLV_OK) {
		dbg_drop_error(c->dbg, &e);
		return;
	}
	for (i = 0; i < n; i++) {
		if (r[i].dwr_type == DW_RANGES_END)
			break;
		if (r[i].dwr_type == DW_RANGES_ADDRESS_SELECTION)
			base = r[i].dwr_addr2;
		else if (range_add(s, base + r[i].dwr_addr1, base + r[i].dwr_addr2))
			c->err = -ENOMEM;
	}
	dwarf_ranges_dealloc(c->dbg, r, n);
}

/*
 * The code ranges of die into s (emptied first). Returns true when the DIE has code
 * addresses (DW_AT_low_pc/high_pc or DW_AT_ranges).
 */
bool cu_die_ranges(struct cu_ctx *c, Dwarf_Die die, struct range_set *s)
{
	Dwarf_Addr lo, hi;
	Dwarf_Half form = 0;
	enum Dwarf_Form_Class cls;
	Dwarf_Attribute a = NULL;
	Dwarf_Error e = NULL;
	Dwarf_Unsigned value;
	bool has = false;

	s->n = 0;
	if (dwarf_lowpc(die, &lo, &e) == DW_DLV_OK) {
		if (dwarf_highpc_b(die, &hi, &form, &cls, &e) == DW_DLV_OK) {
			if (cls == DW_FORM_CLASS_CONSTANT)
				hi += lo;
			if (range_add(s, lo, hi))
				c->err = -ENOMEM;
			return true;
		}
		dbg_drop_error(c->dbg, &e);
		/* low_pc alone: a single address (labels, empty functions). */
	} else {
		dbg_drop_error(c->dbg, &e);
	}
	if (dwarf_attr(die, DW_AT_ranges, &a, &e) != DW_DLV_OK) {
		dbg_drop_error(c->dbg, &e);
		return false;
	}
	if (dwarf_whatform(a, &form, &e) == DW_DLV_OK && !dbg_attr_offset(c->dbg, a, &value)) {
		has = true;
		if (c->version >= 5 || form == DW_FORM_rnglistx)
			rnglists_read(c, a, form, value, s);
		else
			ranges_read(c, die, value, s);
	}
	dbg_drop_error(c->dbg, &e);
	dwarf_dealloc_attribute(a);
	return has;
}

bool range_set_contains(const struct range_set *s, uint64_t addr)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (addr >= s->r[i].lo && addr < s->r[i].hi)
			return true;
	return false;
}
