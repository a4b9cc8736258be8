/* SPDX-License-Identifier: MIT */
/* The functions and inlined calls covering each address (DIE scopes), and their inline chains. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "finalizer/demangle.h"
#include "finalizer/dwarf-info-private.h"

/* Keep in out (capacity n) the indices of in whose address lies in s. Returns how many. */
static size_t subset(const struct cu_ctx *c, const struct range_set *s, const uint32_t *in,
		     size_t n, uint32_t *out)
{
	size_t i, k = 0;

	for (i = 0; i < n; i++)
		if (range_set_contains(s, c->addrs[in[i]]))
			out[k++] = in[i];
	return k;
}

static const char *attr_string(struct cu_ctx *c, Dwarf_Die die, Dwarf_Half at)
{
	Dwarf_Attribute a = NULL;
	Dwarf_Error e = NULL;
	char *s = NULL;
	const char *r = NULL;

	if (dwarf_attr(die, at, &a, &e) != DW_DLV_OK) {
		dbg_drop_error(c->dbg, &e);
		return NULL;
	}
	if (dwarf_formstring(a, &s, &e) == DW_DLV_OK && s)
		r = str_pool_get(c->pool, s);
	dbg_drop_error(c->dbg, &e);
	dwarf_dealloc_attribute(a);
	return r;
}

static bool attr_udata(struct cu_ctx *c, Dwarf_Die die, Dwarf_Half at, Dwarf_Unsigned *v)
{
	Dwarf_Attribute a = NULL;
	Dwarf_Error e = NULL;
	bool ok = false;

	if (dwarf_attr(die, at, &a, &e) != DW_DLV_OK) {
		dbg_drop_error(c->dbg, &e);
		return false;
	}
	if (dwarf_formudata(a, v, &e) == DW_DLV_OK) {
		ok = true;
	} else {
		Dwarf_Signed sv;

		/* DW_FORM_implicit_const (gcc 12's decl_file, call_file) reads as signed. */
		dbg_drop_error(c->dbg, &e);
		if (dwarf_formsdata(a, &sv, &e) == DW_DLV_OK && sv >= 0) {
			*v = (Dwarf_Unsigned)sv;
			ok = true;
		}
	}
	dbg_drop_error(c->dbg, &e);
	dwarf_dealloc_attribute(a);
	return ok;
}

/* The DIE an attribute refers to (abstract origin, specification), or NULL. */
static Dwarf_Die attr_die(struct cu_ctx *c, Dwarf_Die die, Dwarf_Half at)
{
	Dwarf_Attribute a = NULL;
	Dwarf_Error e = NULL;
	Dwarf_Off off;
	Dwarf_Die target = NULL;

	if (dwarf_attr(die, at, &a, &e) != DW_DLV_OK) {
		dbg_drop_error(c->dbg, &e);
		return NULL;
	}
	if (dwarf_global_formref(a, &off, &e) != DW_DLV_OK ||
	    dwarf_offdie_b(c->dbg, off, 1, &target, &e) != DW_DLV_OK)
		target = NULL;
	dbg_drop_error(c->dbg, &e);
	dwarf_dealloc_attribute(a);
	return target;
}

/*
 * Names and definition of the function a subprogram/inlined DIE stands for, following
 * DW_AT_abstract_origin and DW_AT_specification (a few hops at most).
 */
static void scope_names(struct cu_ctx *c, Dwarf_Die die, struct scope *s)
{
	Dwarf_Die cur = die, next;
	int hop;

	for (hop = 0; hop < 6 && cur; hop++) {
		Dwarf_Off off = 0;
		Dwarf_Error e = NULL;
		Dwarf_Unsigned v;

		if (!s->mangled) {
			s->mangled = attr_string(c, cur, DW_AT_linkage_name);
			if (!s->mangled)
				s->mangled = attr_string(c, cur, DW_AT_MIPS_linkage_name);
		}
		if (!s->name)
			s->name = attr_string(c, cur, DW_AT_name);
		if (!s->decl_line && dwarf_dieoffset(cur, &off, &e) == DW_DLV_OK &&
		    off >= c->cu_start && off < c->cu_end &&
		    attr_udata(c, cur, DW_AT_decl_line, &v)) {
			s->decl_line = (uint32_t)v;
			if (attr_udata(c, cur, DW_AT_decl_file, &v))
				s->decl_file = cu_file_name(c, v);
		}
		dbg_drop_error(c->dbg, &e);
		if (s->name && s->mangled)
			break;
		next = attr_die(c, cur, DW_AT_abstract_origin);
		if (!next)
			next = attr_die(c, cur, DW_AT_specification);
		if (cur != die)
			dwarf_dealloc_die(cur);
		cur = next;
	}
	if (cur && cur != die)
		dwarf_dealloc_die(cur);
	if (s->mangled) {
		char *d = demangle(s->mangled);

		if (d) {
			s->name = str_pool_get(c->pool, d);
			free(d);
		} else if (!s->name) {
			s->name = s->mangled;
		}
	}
}

static int32_t scope_add(struct cu_ctx *c, Dwarf_Die die, int32_t parent, bool inlined)
{
	struct scope *s;
	Dwarf_Unsigned v;

	if (array_reserve(&c->scopes, &c->cap, c->nscopes + 1, sizeof(*c->scopes))) {
		c->err = -ENOMEM;
		return -1;
	}
	s = &c->scopes[c->nscopes];
	memset(s, 0, sizeof(*s));
	s->parent = inlined ? parent : -1;
	s->depth = inlined && parent >= 0 ? c->scopes[parent].depth + 1 : 0;
	if (inlined) {
		if (attr_udata(c, die, DW_AT_call_line, &v))
			s->call_line = (uint32_t)v;
		if (attr_udata(c, die, DW_AT_call_file, &v))
			s->call_file = cu_file_name(c, v);
	}
	scope_names(c, die, s);
	return (int32_t)c->nscopes++;
}

static void visit_children(struct cu_ctx *c, Dwarf_Die parent, int32_t scope, const uint32_t *idx,
			   size_t n);

static void visit_die(struct cu_ctx *c, Dwarf_Die die, int32_t scope, const uint32_t *idx, size_t n,
		      struct range_set *rs)
{
	Dwarf_Half tag = 0;
	Dwarf_Error e = NULL;
	uint32_t *sub;
	size_t k, i;
	int32_t s;

	if (dwarf_tag(die, &tag, &e) != DW_DLV_OK) {
		dbg_drop_error(c->dbg, &e);
		return;
	}
	switch (tag) {
	case DW_TAG_subprogram:
	case DW_TAG_inlined_subroutine:
		if (tag == DW_TAG_inlined_subroutine && (!c->inline_chains || scope < 0))
			return;
		if (!cu_die_ranges(c, die, rs) || !rs->n)
			return;
		sub = malloc(n * sizeof(*sub));
		if (!sub) {
			c->err = -ENOMEM;
			return;
		}
		k = subset(c, rs, idx, n, sub);
		if (k) {
			s = scope_add(c, die, scope, tag == DW_TAG_inlined_subroutine);
			if (s >= 0) {
				for (i = 0; i < k; i++) {
					int32_t b = c->best[sub[i]];

					if (b < 0 || c->scopes[b].depth <= c->scopes[s].depth)
						c->best[sub[i]] = s;
				}
				visit_children(c, die, s, sub, k);
			}
		}
		free(sub);
		return;
	case DW_TAG_lexical_block:
	case DW_TAG_try_block:
	case DW_TAG_catch_block:
		if (scope < 0)
			return;
		if (cu_die_ranges(c, die, rs) && rs->n) {
			sub = malloc(n * sizeof(*sub));
			if (!sub) {
				c->err = -ENOMEM;
				return;
			}
			k = subset(c, rs, idx, n, sub);
			if (k)
				visit_children(c, die, scope, sub, k);
			free(sub);
		} else {
			visit_children(c, die, scope, idx, n);
		}
		return;
	case DW_TAG_namespace:
	case DW_TAG_class_type:
	case DW_TAG_structure_type:
	case DW_TAG_union_type:
	case DW_TAG_module:
		/* C++ and Fortran put function definitions inside these. */
		if (scope < 0)
			visit_children(c, die, scope, idx, n);
		return;
	default:
		return;
	}
}

static void visit_children(struct cu_ctx *c, Dwarf_Die parent, int32_t scope, const uint32_t *idx,
			   size_t n)
{
	Dwarf_Die child = NULL, sib = NULL;
	Dwarf_Error e = NULL;
	struct range_set rs = { 0 };

	if (dwarf_child(parent, &child, &e) != DW_DLV_OK) {
		dbg_drop_error(c->dbg, &e);
		return;
	}
	while (child && !c->err) {
		visit_die(c, child, scope, idx, n, &rs);
		if (dwarf_siblingof_b(c->dbg, child, 1, &sib, &e) != DW_DLV_OK) {
			dbg_drop_error(c->dbg, &e);
			sib = NULL;
		}
		dwarf_dealloc_die(child);
		child = sib;
	}
	if (child)
		dwarf_dealloc_die(child);
	free(rs.r);
}

void cu_scopes_visit(struct cu_ctx *c, Dwarf_Die cu_die, const uint32_t *idx, size_t n)
{
	c->nscopes = 0;
	if (n)
		visit_children(c, cu_die, -1, idx, n);
}

int cu_chain_emit(struct cu_ctx *c, struct dwarf_lookup *out, uint32_t i)
{
	int32_t s = c->best[i], path[256];
	uint32_t depth = 0, k;

	for (; s >= 0 && depth < 256; s = c->scopes[s].parent)
		path[depth++] = s;
	if (array_reserve(c->frames, c->fcap, *c->nframes + depth, sizeof(**c->frames)))
		return -ENOMEM;
	out->first[i] = (uint32_t)*c->nframes;
	out->count[i] = depth;
	for (k = 0; k < depth; k++) {
		const struct scope *sc = &c->scopes[path[depth - 1 - k]];
		struct dwarf_frame *f = &(*c->frames)[(*c->nframes)++];

		f->name = sc->name;
		f->mangled = sc->mangled;
		f->decl_file = sc->decl_file;
		f->decl_line = sc->decl_line;
		if (k + 1 < depth) {
			/* The position in this frame is the call of the next, inlined one. */
			const struct scope *inner = &c->scopes[path[depth - 2 - k]];

			f->file = inner->call_file;
			f->line = inner->call_line;
		} else {
			f->file = out->leaf_file[i];
			f->line = out->leaf_line[i];
		}
	}
	return 0;
}
