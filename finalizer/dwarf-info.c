/* SPDX-License-Identifier: MIT */
/* Line tables and inline chains from DWARF 2-5 with libdwarf (20210528 API): the entry point. */
#include <errno.h>
#include <gelf.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
#include "common/log.h"
#include "finalizer/dwarf-info-private.h"
#include "finalizer/elf-file.h"

void dbg_drop_error(Dwarf_Debug dbg, Dwarf_Error *e)
{
	if (*e) {
		dwarf_dealloc_error(dbg, *e);
		*e = NULL;
	}
}

/* libdwarf 20210528 sets process-wide state while it opens and closes a file. */
static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t init_once = PTHREAD_ONCE_INIT;

static void init_libdwarf(void)
{
	/* Everything is freed explicitly here: the search tree libdwarf keeps of every
	   allocation, to free them in dwarf_finish(), is only a cost. */
	dwarf_set_de_alloc_flag(0);
}

/*
 * libdwarf reads a file through an object interface: ours hands it each section's bytes
 * where libelf has the file mapped (ELF_C_READ_MMAP), so a section is read from the page
 * cache as far as it is used. libdwarf's own ELF reader read()s every section it loads
 * whole into memory of its own: all 14 MB of libpython's .debug_info to find the few units
 * a result's addresses fall in, once for each worker (docs/performance.md). A
 * compressed section (SHF_COMPRESSED) is inflated by libelf and shown to libdwarf as plain;
 * a .zdebug_ one libdwarf inflates itself. No section is relocated: pfinalize reads shared
 * objects and executables, never relocatable objects.
 */
struct dbg_object {
	struct elf_file file; /* opened with the file mapped (finalizer/elf-file.c) */
	size_t shstrndx, nsections;
	bool msb, is64;
	Dwarf_Obj_Access_Interface iface;
	Dwarf_Debug dbg;
	struct dbg_object *next; /* the open ones, under init_lock, for dbg_close() */
};

static struct dbg_object *open_objects;

static int obj_section_info(void *obj, Dwarf_Half index, Dwarf_Obj_Access_Section *out, int *error)
{
	struct dbg_object *o = obj;
	Elf_Scn *scn = elf_getscn(o->file.elf, index);
	GElf_Shdr sh;
	GElf_Chdr ch;
	const char *name;

	memset(out, 0, sizeof(*out));
	if (!scn || !gelf_getshdr(scn, &sh)) {
		*error = DW_DLE_ELF_SECT_ERR;
		return DW_DLV_ERROR;
	}
	name = elf_strptr(o->file.elf, o->shstrndx, sh.sh_name);
	out->addr = sh.sh_addr;
	out->type = sh.sh_type;
	out->size = sh.sh_type == SHT_NOBITS ? 0 : sh.sh_size;
	if ((sh.sh_flags & SHF_COMPRESSED) && sh.sh_type != SHT_NOBITS)
		out->size = gelf_getchdr(scn, &ch) ? ch.ch_size : 0;
	out->name = name ? name : "";
	out->link = sh.sh_link;
	out->info = sh.sh_info;
	out->entrysize = sh.sh_entsize;
	return DW_DLV_OK;
}

static Dwarf_Endianness obj_byte_order(void *obj)
{
	return ((struct dbg_object *)obj)->msb ? DW_OBJECT_MSB : DW_OBJECT_LSB;
}

static Dwarf_Small obj_word_size(void *obj)
{
	return ((struct dbg_object *)obj)->is64 ? 8 : 4;
}

static Dwarf_Unsigned obj_section_count(void *obj)
{
	return ((struct dbg_object *)obj)->nsections;
}

static int obj_load_section(void *obj, Dwarf_Half index, Dwarf_Small **data, int *error)
{
	Elf_Scn *scn = elf_getscn(((struct dbg_object *)obj)->file.elf, index);
	GElf_Shdr sh;
	Elf_Data *d;

	if (!scn || !gelf_getshdr(scn, &sh)) {
		*error = DW_DLE_ELF_SECT_ERR;
		return DW_DLV_ERROR;
	}
	if (sh.sh_type == SHT_NOBITS || !sh.sh_size)
		return DW_DLV_NO_ENTRY;
	if ((sh.sh_flags & SHF_COMPRESSED) && elf_compress(scn, 0, 0) < 0) {
		*error = DW_DLE_ZLIB_UNCOMPRESS_ERROR;
		return DW_DLV_ERROR;
	}
	d = elf_getdata(scn, NULL);
	if (!d || !d->d_buf) {
		*error = DW_DLE_ELF_SECT_ERR;
		return DW_DLV_ERROR;
	}
	*data = d->d_buf;
	return DW_DLV_OK;
}

static const Dwarf_Obj_Access_Methods obj_methods = {
	.get_section_info = obj_section_info,
	.get_byte_order = obj_byte_order,
	.get_length_size = obj_word_size,
	.get_pointer_size = obj_word_size,
	.get_section_count = obj_section_count,
	.load_section = obj_load_section,
	.relocate_a_section = NULL,
};

static void object_free(struct dbg_object *o)
{
	elf_file_close(&o->file);
	free(o);
}

/* Open path's ELF headers for libdwarf: 0, or -errno (-EINVAL: not an ELF file we read). */
static int object_open(const char *path, struct dbg_object **out)
{
	struct dbg_object *o = calloc(1, sizeof(*o));
	GElf_Ehdr eh;
	int ret;

	if (!o)
		return -ENOMEM;
	if ((ret = elf_file_open(&o->file, path))) {
		free(o);
		return ret;
	}
	if (!gelf_getehdr(o->file.elf, &eh) || eh.e_type == ET_REL ||
	    elf_getshdrstrndx(o->file.elf, &o->shstrndx) ||
	    elf_getshdrnum(o->file.elf, &o->nsections)) {
		object_free(o);
		return -EINVAL;
	}
	o->msb = eh.e_ident[EI_DATA] == ELFDATA2MSB;
	o->is64 = eh.e_ident[EI_CLASS] == ELFCLASS64;
	o->iface.object = o;
	o->iface.methods = &obj_methods;
	*out = o;
	return 0;
}

int dbg_open(const char *path, Dwarf_Debug *dbg, char *err, size_t errsize)
{
	Dwarf_Error e = NULL;
	struct dbg_object *o = NULL;
	int res;

	*dbg = NULL;
	pthread_once(&init_once, init_libdwarf);
	res = object_open(path, &o);
	if (res) {
		err_set(err, errsize, "%s",
			res == -EINVAL ? "not an ELF file libdwarf reads" : strerror(-res));
		return res == -ENOENT ? -ENODATA : -EINVAL;
	}
	pthread_mutex_lock(&init_lock);
	res = dwarf_object_init_b(&o->iface, NULL, NULL, DW_GROUPNUMBER_ANY, &o->dbg, &e);
	if (res == DW_DLV_OK) {
		o->next = open_objects;
		open_objects = o;
	}
	pthread_mutex_unlock(&init_lock);
	if (res == DW_DLV_OK) {
		*dbg = o->dbg;
		return 0;
	}
	object_free(o);
	if (res == DW_DLV_NO_ENTRY)
		return -ENODATA;
	err_set(err, errsize, "%s", e ? dwarf_errmsg(e) : "unknown libdwarf error");
	if (e)
		dwarf_dealloc_error(NULL, e);
	return -EINVAL;
}

void dbg_close(Dwarf_Debug dbg)
{
	struct dbg_object **p, *o = NULL;
	Dwarf_Error e = NULL;

	if (!dbg)
		return;
	pthread_mutex_lock(&init_lock);
	for (p = &open_objects; *p; p = &(*p)->next)
		if ((*p)->dbg == dbg) {
			o = *p;
			*p = o->next;
			break;
		}
	dwarf_object_finish(dbg, &e);
	pthread_mutex_unlock(&init_lock);
	if (o)
		object_free(o);
}

int cu_ctx_init(struct cu_ctx *c, Dwarf_Debug dbg, const uint64_t *addrs, size_t n,
		bool inline_chains, const struct line_sections *sections, struct str_pool *pool)
{
	size_t i;

	memset(c, 0, sizeof(*c));
	c->dbg = dbg;
	c->sections = sections;
	c->pool = pool;
	c->addrs = addrs;
	c->inline_chains = inline_chains;
	c->best = malloc((n ? n : 1) * sizeof(*c->best));
	if (!c->best)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		c->best[i] = -1;
	return 0;
}

void cu_ctx_release(struct cu_ctx *c)
{
	free(c->best);
	free(c->scopes);
	c->best = NULL;
	c->scopes = NULL;
}

/* Lines and inline chains of the addresses idx[0..n) in one unit. */
static int cu_resolve(struct cu_ctx *c, Dwarf_Die cu_die, uint32_t *idx, size_t n, bool gated,
		      struct dwarf_lookup *out)
{
	long got;
	size_t i, k;
	int err = 0;

	cu_lines_open(c, cu_die);
	got = cu_lines_assign(c, idx, n, out);
	if (got < 0)
		err = (int)got;
	if (gated && !err) {
		for (i = 0, k = 0; i < n; i++)
			if (out->leaf_file[idx[i]] || out->leaf_line[idx[i]])
				idx[k++] = idx[i];
		n = k;
	}
	if (!err)
		cu_scopes_visit(c, cu_die, idx, n);
	err = err ? err : c->err;
	for (i = 0; i < n && !err; i++)
		if (c->best[idx[i]] >= 0 && !out->count[idx[i]])
			err = cu_chain_emit(c, out, idx[i]);
	for (i = 0; i < n; i++)
		c->best[idx[i]] = -1;
	cu_lines_close(c);
	return err;
}

int cu_resolve_unit(struct cu_ctx *c, const struct cu_unit *u, uint32_t *idx, bool gated,
		    struct dwarf_lookup *out)
{
	Dwarf_Die die = NULL;
	Dwarf_Error e = NULL;
	int ret;

	if (dwarf_offdie_b(c->dbg, u->die, 1, &die, &e) != DW_DLV_OK) {
		dbg_drop_error(c->dbg, &e);
		return 0;
	}
	c->version = u->version;
	c->cu_start = u->start;
	c->cu_end = u->end;
	c->base = u->base;
	ret = cu_resolve(c, die, idx, u->k, gated, out);
	dwarf_dealloc_die(die);
	return ret ? ret : c->err;
}

static int lookup_alloc(struct dwarf_lookup *out, size_t n)
{
	memset(out, 0, sizeof(*out));
	out->first = calloc(n ? n : 1, sizeof(*out->first));
	out->count = calloc(n ? n : 1, sizeof(*out->count));
	out->leaf_file = calloc(n ? n : 1, sizeof(*out->leaf_file));
	out->leaf_line = calloc(n ? n : 1, sizeof(*out->leaf_line));
	if (!out->first || !out->count || !out->leaf_file || !out->leaf_line) {
		dwarf_lookup_release(out);
		return -ENOMEM;
	}
	out->n = n;
	return 0;
}

void dwarf_lookup_release(struct dwarf_lookup *l)
{
	size_t i;

	FREE_ALL(l->first, l->count, l->leaf_file, l->leaf_line, l->frames);
	for (i = 0; i < l->npools; i++)
		str_pool_release(&l->pools[i]);
	free(l->pools);
	memset(l, 0, sizeof(*l));
}

int dwarf_info_resolve(const char *path, const uint64_t *addrs, size_t n, bool inline_chains,
		       int jobs, struct str_pool *pool, struct dwarf_lookup *out, char *err,
		       size_t errsize)
{
	Dwarf_Debug dbg = NULL;
	struct cu_ctx c = { 0 };
	struct cu_units units = { 0 };
	struct elf_file ef;
	struct line_sections ls = { 0 };
	bool have_ef = false;
	int ret;

	err[0] = '\0';
	ret = lookup_alloc(out, n);
	if (ret)
		return ret;
	ret = dbg_open(path, &dbg, err, errsize);
	if (ret) {
		dwarf_lookup_release(out);
		return ret;
	}
	/* The line tables are read from the sections directly (line-table.h). */
	if (n && !elf_file_open(&ef, path)) {
		have_ef = true;
		if (elf_file_section(&ef, ".debug_line", &ls.line, &ls.line_size))
			ls.line = NULL;
		elf_file_section(&ef, ".debug_line_str", &ls.line_str, &ls.line_str_size);
		elf_file_section(&ef, ".debug_str", &ls.str, &ls.str_size);
	}
	ret = cu_ctx_init(&c, dbg, addrs, n, inline_chains, ls.line ? &ls : NULL, pool);
	/* First the unit headers (which unit holds which address), then the units. */
	ret = ret ? ret : cu_units_scan(&units, &c, out, err, errsize);
	ret = ret ? ret : cu_units_resolve(&units, path, &c, jobs, out);
	cu_units_release(&units);
	cu_ctx_release(&c);
	dbg_close(dbg);
	if (have_ef)
		elf_file_close(&ef);
	if (ret)
		dwarf_lookup_release(out);
	return ret;
}
