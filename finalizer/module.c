/* SPDX-License-Identifier: MIT */
/* Symbolizing one module: find its file, read symbols and DWARF once, resolve its addresses. */
#define LOG_DOMAIN "module"
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <time.h>

#include <gelf.h>

#include "common/elf-note.h"
#include "common/log.h"
#include "common/result-dir.h"
#include "common/debuginfod.h"
#include "finalizer/demangle.h"
#include "finalizer/dwarf-info.h"
#include "finalizer/eh-frame.h"
#include "finalizer/elf-file.h"
#include "finalizer/minidebuginfo.h"
#include "finalizer/module.h"
#include "finalizer/sym-cache.h"
#include "finalizer/symtab.h"

#define MAX_CANDIDATES 16

int module_init(struct module *m, const struct raw_module *rm)
{
	const char *slash;

	memset(m, 0, sizeof(*m));
	m->path = malloc(rm->path_len + 1);
	if (!m->path)
		return -ENOMEM;
	memcpy(m->path, rm->path, rm->path_len);
	m->path[rm->path_len] = '\0';
	slash = strrchr(m->path, '/');
	m->name = slash && slash[1] ? slash + 1 : m->path;
	m->build_id_len = rm->build_id_len > RAW_MAX_BUILD_ID ? RAW_MAX_BUILD_ID : rm->build_id_len;
	memcpy(m->build_id, rm->build_id, m->build_id_len);
	elf_note_hex(m->build_id, m->build_id_len, m->build_id_hex, sizeof(m->build_id_hex));
	m->kind = rm->kind;
	m->symbols = "none";
	m->status = "missing";
	m->db_id = -1;
	str_pool_init(&m->pool);
	return 0;
}

void module_release(struct module *m)
{
	size_t i;

	free(m->path);
	free(m->addrs);
	free(m->objs);
	free(m->obj_names);
	free(m->spin_code);
	free(m->first);
	free(m->count);
	free(m->frames);
	free(m->resolved_path);
	free(m->debug_path);
	free(m->mismatch_path);
	free(m->dwarf_error);
	str_pool_release(&m->pool);
	for (i = 0; i < m->nmore_pools; i++)
		str_pool_release(&m->more_pools[i]);
	free(m->more_pools);
	memset(m, 0, sizeof(*m));
}

int module_want(struct module *m, uint64_t addr)
{
	if (array_reserve(&m->addrs, &m->cap, m->naddrs + 1, sizeof(*m->addrs)))
		return -ENOMEM;
	m->addrs[m->naddrs++] = addr;
	return 0;
}

int module_want_object(struct module *m, uint64_t addr)
{
	if (GROW(m->objs, m->nobjs + 1, m->objs_cap))
		return -ENOMEM;
	m->objs[m->nobjs++] = addr;
	return 0;
}

/* Index of addr in the sorted v[0..n), or -1. */
static int64_t sorted_find(const uint64_t *v, size_t n, uint64_t addr)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid] < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && v[lo] == addr ? (int64_t)lo : -1;
}

int64_t module_addr_index(const struct module *m, uint64_t addr)
{
	return sorted_find(m->addrs, m->naddrs, addr);
}

const char *module_object_name(const struct module *m, uint64_t addr)
{
	int64_t i = m->obj_names ? sorted_find(m->objs, m->nobjs, addr) : -1;

	return i >= 0 ? m->obj_names[i] : NULL;
}

/*
 * Sort v[0..n) (every ip of every located stack: many, with repeats). LSD radix sort on
 * 16-bit digits, skipping the digits all values share (module-relative addresses rarely
 * use more than 32 bits): a few linear passes instead of n log n comparisons.
 */
static int u64_sort(uint64_t *v, size_t n)
{
	uint64_t *tmp, *src = v, *dst, all_or = 0, all_and = UINT64_MAX;
	size_t *count, i, shift;

	if (n < 2)
		return 0;
	tmp = malloc(n * sizeof(*tmp));
	count = malloc(65536 * sizeof(*count));
	if (!tmp || !count) {
		free(tmp);
		free(count);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		all_or |= v[i];
		all_and &= v[i];
	}
	dst = tmp;
	for (shift = 0; shift < 64; shift += 16) {
		size_t sum = 0, c;

		if ((((all_or ^ all_and) >> shift) & 0xffff) == 0)
			continue; /* the same digit everywhere */
		memset(count, 0, 65536 * sizeof(*count));
		for (i = 0; i < n; i++)
			count[(src[i] >> shift) & 0xffff]++;
		for (i = 0; i < 65536; i++) {
			c = count[i];
			count[i] = sum;
			sum += c;
		}
		for (i = 0; i < n; i++)
			dst[count[(src[i] >> shift) & 0xffff]++] = src[i];
		dst = src;
		src = src == v ? tmp : v;
	}
	if (src != v)
		memcpy(v, src, n * sizeof(*v));
	free(tmp);
	free(count);
	return 0;
}

static struct sym_frame *frame_push(struct module *m)
{
	if (array_reserve(&m->frames, &m->fcap, m->nframes + 1, sizeof(*m->frames)))
		return NULL;
	memset(&m->frames[m->nframes], 0, sizeof(*m->frames));
	return &m->frames[m->nframes++];
}

/* The name of an address nothing resolves: "func@0x1a2b", "[vdso]@0x..", "[anon]@0x..". */
static const char *placeholder_name(struct module *m, uint64_t addr)
{
	char buf[64];

	if (m->kind == RAW_MODULE_VDSO)
		snprintf(buf, sizeof(buf), "[vdso]@0x%" PRIx64, addr);
	else if (m->kind == RAW_MODULE_ANON)
		snprintf(buf, sizeof(buf), "[anon]@0x%" PRIx64, addr);
	else
		snprintf(buf, sizeof(buf), "func@0x%" PRIx64, addr);
	return str_pool_get(&m->pool, buf);
}

/* Demangled symbol names, computed once per symbol. */
struct sym_names {
	const struct symtab *st;
	const char **dem; /* per symbol: interned display name */
	const char **mangled;
};

static const char *sym_display(struct module *m, struct sym_names *sn, const struct symtab_sym *s,
			       const char **mangled)
{
	size_t i = (size_t)(s - sn->st->syms);

	if (!sn->dem[i]) {
		char *d = demangle(s->name);

		sn->dem[i] = str_pool_get(&m->pool, d ? d : s->name);
		sn->mangled[i] = d ? str_pool_get(&m->pool, s->name) : NULL;
		free(d);
	}
	*mangled = sn->mangled[i];
	return sn->dem[i];
}

/*
 * The FDE ranges of a module (finalizer/eh-frame.h), read on first need: only a module with
 * an address no symbol names, or a stripped one (symtab_name_split_parts()), needs them.
 */
struct fde_src {
	struct module *m;
	const struct resolve_opts *o;
	Elf *elf; /* the module's file; NULL: no ranges */
	struct fde_table t;
	bool tried;
	int err; /* -ENOMEM */
};

static const struct fde_table *fde_src_get(struct fde_src *fs)
{
	struct module *m;
	struct elf_file d;

	if (!fs || !fs->elf || fs->err)
		return NULL;
	if (fs->tried)
		return &fs->t;
	fs->tried = true;
	m = fs->m;
	if (fs->o->cache_dir && m->build_id_len && !sym_cache_load_ranges(m, fs->o, &fs->t)) {
		log_debug("'%s': %zu function ranges (%s) from the symbol cache", m->path, fs->t.n,
			  fde_source_name(fs->t.source));
		return &fs->t;
	}
	fs->err = fde_table_load(&fs->t, fs->elf);
	/* A binary built without .eh_frame may have a .debug_frame in its debug file. */
	if (!fs->err && !fs->t.n && m->debug_path && !elf_file_open(&d, m->debug_path)) {
		fs->err = fde_table_load(&fs->t, d.elf);
		elf_file_close(&d);
	}
	if (fs->err)
		return NULL;
	log_debug("'%s': %zu function ranges from %s", m->path, fs->t.n,
		  fs->t.n ? fde_source_name(fs->t.source)
			  : "no unwind table (.eh_frame, .debug_frame)");
	if (fs->o->cache_dir && m->build_id_len)
		sym_cache_store_ranges(m, fs->o, &fs->t); /* best effort */
	return &fs->t;
}

/*
 * The name of an address no symbol names: "func@0x<start>" of the FDE range that holds it
 * (*range true), else the address alone.
 */
static const char *unnamed(struct module *m, struct fde_src *fs, uint64_t addr, bool *range)
{
	const struct fde_table *t = m->kind == RAW_MODULE_FILE ? fde_src_get(fs) : NULL;
	const struct fde_range *r = t ? fde_table_find(t, addr) : NULL;

	*range = r != NULL;
	return placeholder_name(m, r ? r->start : addr);
}

/*
 * The symbol of addr. A symbol without a size reaches up to the next symbol, but not past
 * the start of another FDE range: that is another function, which has no symbol.
 */
static const struct symtab_sym *symbol_of(const struct symtab *st, struct fde_src *fs,
					  uint64_t addr)
{
	const struct symtab_sym *s = st->n ? symtab_find_addr(st, addr) : NULL;
	const struct fde_table *t;
	const struct fde_range *r;

	if (!s || s->size || !(t = fde_src_get(fs)))
		return s;
	r = fde_table_find(t, addr);
	return r && r->start > s->start ? NULL : s;
}

/*
 * Combine the symbol table, DWARF and FDE range answers into the chains of every address.
 * dw and fs may be NULL.
 */
static int compose(struct module *m, const struct symtab *st, const struct dwarf_lookup *dw,
		   struct fde_src *fs)
{
	struct sym_names sn = { st, NULL, NULL };
	size_t i;
	int ret = 0;

	sn.dem = calloc(st->n ? st->n : 1, sizeof(*sn.dem));
	sn.mangled = calloc(st->n ? st->n : 1, sizeof(*sn.mangled));
	if (!sn.dem || !sn.mangled) {
		ret = -ENOMEM;
		goto out;
	}
	for (i = 0; i < m->naddrs; i++) {
		uint64_t a = m->addrs[i];
		uint32_t k, n = dw ? dw->count[i] : 0;
		const struct symtab_sym *s =
			n && dw->frames[dw->first[i]].name ? NULL : symbol_of(st, fs, a);
		const char *leaf_file = dw ? dw->leaf_file[i] : NULL;
		uint32_t leaf_line = dw ? dw->leaf_line[i] : 0;
		struct sym_frame *f;

		m->first[i] = (uint32_t)m->nframes;
		for (k = 0; k < n; k++) {
			const struct dwarf_frame *d = &dw->frames[dw->first[i] + k];

			f = frame_push(m);
			if (!f) {
				ret = -ENOMEM;
				goto out;
			}
			f->name = d->name;
			f->mangled =
				d->mangled && d->name != d->mangled && strcmp(d->mangled, d->name)
					? d->mangled
					: NULL;
			if (!f->name && k == 0 && s)
				f->name = sym_display(m, &sn, s, &f->mangled);
			f->resolved = f->name != NULL;
			if (!f->name && k == 0)
				f->name = unnamed(m, fs, a, &f->range);
			else if (!f->name)
				f->name =
					placeholder_name(m, a); /* an inlined call without a name */
			f->decl_file = d->decl_file;
			f->decl_line = d->decl_line;
			f->file = d->file;
			f->line = d->line;
		}
		if (!n) {
			f = frame_push(m);
			if (!f) {
				ret = -ENOMEM;
				goto out;
			}
			if (s) {
				f->name = sym_display(m, &sn, s, &f->mangled);
				f->resolved = true;
			} else {
				f->name = unnamed(m, fs, a, &f->range);
			}
			f->file = leaf_file;
			f->line = leaf_line;
			n = 1;
		}
		if (!f->name || (fs && fs->err)) {
			ret = -ENOMEM;
			goto out;
		}
		m->count[i] = n;
		if (m->frames[m->first[i]].resolved)
			m->addrs_resolved++;
		else if (m->frames[m->first[i]].range)
			m->addrs_ranged++;
		if (m->frames[m->first[i] + n - 1].file)
			m->addrs_with_line++;
	}
out:
	free(sn.dem);
	free(sn.mangled);
	return ret;
}

/* Why elf_file_open() refused a file, for -verbose. */
static const char *open_error(int err)
{
	return err == -EINVAL ? "not an ELF file" : strerror(-err);
}

/* Open path (found in where) when its build-id matches the recorded one. */
static bool open_candidate(struct module *m, const char *path, const char *where,
			   struct elf_file *f)
{
	char hex[2 * ELF_FILE_MAX_BUILD_ID + 1];
	int err = elf_file_open(f, path);

	if (err) {
		log_debug("'%s': %s '%s': %s", m->path, where, path, open_error(err));
		return false;
	}
	if (m->build_id_len && !elf_file_build_id_is(f, m->build_id, m->build_id_len)) {
		log_debug("'%s': %s '%s' refused: its build-id is %s, the profiled one %s", m->path,
			  where, path,
			  f->build_id_len
				  ? elf_note_hex(f->build_id, f->build_id_len, hex, sizeof(hex))
				  : "none",
			  m->build_id_hex);
		if (!m->mismatch_path)
			m->mismatch_path = strdup(path);
		elf_file_close(f);
		return false;
	}
	log_debug("'%s': %s '%s' taken (%s)", m->path, where, path,
		  m->build_id_len ? "same build-id" : "no build-id recorded: taken by its name");
	return true;
}

static bool locate_file(struct module *m, const struct resolve_opts *o, struct elf_file *f)
{
	char path[PATH_MAX];
	const char *cands[MAX_CANDIDATES];
	size_t n, i;

	if (m->build_id_len && o->result_dir &&
	    result_path(path, sizeof(path), o->result_dir, RESULT_PATH_ARCHIVE, 0, 0,
			m->build_id_hex, m->name) > 0 &&
	    open_candidate(m, path, "archive copy", f)) {
		m->found_in = "archive";
		return true;
	}
	n = o->search ? search_index_find(o->search, m->name, cands, MAX_CANDIDATES) : 0;
	if (o->search)
		log_debug("'%s': %zu file%s named '%s' in the search directories", m->path, n,
			  n == 1 ? "" : "s", m->name);
	for (i = 0; i < n; i++) {
		if (open_candidate(m, cands[i], "search-dir file", f)) {
			m->found_in = "search-dir";
			return true;
		}
	}
	if (m->path[0] == '/' && open_candidate(m, m->path, "original path", f)) {
		m->found_in = "original";
		return true;
	}
	log_debug("'%s': not found%s: its frames stay unresolved", m->path,
		  m->mismatch_path ? " with its build-id" : "");
	return false;
}

/* A separate debug file with .debug_info for f: by build-id, then by .gnu_debuglink. */
static char *find_debug_file(struct module *m, const struct resolve_opts *o,
			     const struct elf_file *f)
{
	char path[PATH_MAX * 2], dir[PATH_MAX];
	const char *cands[MAX_CANDIDATES];
	const char *slash;
	size_t n, i;
	struct elf_file d;
	char *tries[8];
	size_t ntries = 0;

	if (f->build_id_len) {
		char hex[2 * ELF_FILE_MAX_BUILD_ID + 1];

		elf_note_hex(f->build_id, f->build_id_len, hex, sizeof(hex));
		snprintf(path, sizeof(path), "%s/.build-id/%.2s/%s.debug", o->debug_root, hex,
			 hex + 2);
		tries[ntries++] = strdup(path);
	}
	if (f->debuglink) {
		slash = strrchr(f->path, '/');
		snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - f->path) : 1,
			 slash ? f->path : ".");
		snprintf(path, sizeof(path), "%s/%s", dir, f->debuglink);
		tries[ntries++] = strdup(path);
		snprintf(path, sizeof(path), "%s/.debug/%s", dir, f->debuglink);
		tries[ntries++] = strdup(path);
		snprintf(path, sizeof(path), "%s%s/%s", o->debug_root, dir, f->debuglink);
		tries[ntries++] = strdup(path);
	}
	for (i = 0; i < ntries; i++) {
		char *found = NULL;
		int err;

		if (!tries[i] || !strcmp(tries[i], f->path))
			continue;
		err = elf_file_open(&d, tries[i]);
		if (err) {
			log_debug("'%s': debug file '%s': %s", m->path, tries[i], open_error(err));
			continue;
		}
		if (!d.has_debug_info)
			log_debug("'%s': debug file '%s' refused: no .debug_info", m->path,
				  tries[i]);
		else if (f->build_id_len && d.build_id_len &&
			 !elf_file_build_id_is(&d, f->build_id, f->build_id_len))
			log_debug("'%s': debug file '%s' refused: another build-id", m->path,
				  tries[i]);
		else
			found = tries[i];
		elf_file_close(&d);
		if (found) {
			log_debug("'%s': debug file '%s' taken", m->path, found);
			for (n = 0; n < ntries; n++)
				if (n != i)
					free(tries[n]);
			return found;
		}
	}
	for (i = 0; i < ntries; i++)
		free(tries[i]);
	/* The debug file given in a search directory under the debug link's name. */
	if (f->debuglink && o->search) {
		n = search_index_find(o->search, f->debuglink, cands, MAX_CANDIDATES);
		for (i = 0; i < n; i++) {
			char *found = NULL;

			if (elf_file_open(&d, cands[i]))
				continue;
			if (d.has_debug_info && f->build_id_len &&
			    elf_file_build_id_is(&d, f->build_id, f->build_id_len))
				found = strdup(cands[i]);
			else
				log_debug("'%s': search-dir debug file '%s' refused: %s", m->path,
					  cands[i],
					  d.has_debug_info ? "another build-id or none"
							   : "no .debug_info");
			elf_file_close(&d);
			if (found) {
				log_debug("'%s': search-dir debug file '%s' taken", m->path, found);
				return found;
			}
		}
	}
	log_debug("'%s': no separate debug file for '%s'", m->path, f->path);
	return NULL;
}

static int resolve_placeholders(struct module *m)
{
	return compose(m, &(struct symtab){ 0 }, NULL, NULL);
}

/* For -verbose: what a debuginfod answer means. */
static const char *fetch_error(int err)
{
	return err == -ENOENT ? "no server has it" : strerror(-err);
}

/* Whether to ask debuginfod for m: it has samples and a build-id to ask by. */
static bool fetch_wanted(const struct module *m, const struct resolve_opts *o)
{
	return o->debuginfod && m->naddrs && m->build_id_len;
}

/* The debug file of a module from the debuginfod servers, or NULL. */
static char *fetch_debug_file(struct module *m, const struct resolve_opts *o)
{
	struct elf_file d;
	char *path;
	bool downloaded, usable;
	int err;

	if (!fetch_wanted(m, o))
		return NULL;
	err = debug_server_fetch(DEBUG_SERVER_DEBUGINFO, m->build_id, m->build_id_len, NULL, &path,
				 &downloaded);
	if (err) {
		m->fetch_debug = err;
		log_debug("'%s': debuginfod debug file: %s", m->path, fetch_error(err));
		return NULL;
	}
	err = elf_file_open(&d, path);
	usable = !err && (d.has_debug_info || d.has_symtab) &&
		 (!d.build_id_len || elf_file_build_id_is(&d, m->build_id, m->build_id_len));
	if (!err)
		elf_file_close(&d);
	if (!usable) {
		log_debug("'%s': debuginfod debug file '%s' refused: %s", m->path, path,
			  err ? open_error(err) : "no DWARF or .symtab, or another build-id");
		m->fetch_debug = -EINVAL;
		free(path);
		return NULL;
	}
	m->fetch_debug = downloaded ? MODULE_FETCH_DOWNLOADED : MODULE_FETCH_CACHED;
	log_debug("'%s': debuginfod debug file '%s' taken (%s)", m->path, path,
		  downloaded ? "fetched now" : "from libdebuginfod's cache");
	return path;
}

/* A module not found here: its binary from the debuginfod servers, opened in f. */
static bool fetch_binary(struct module *m, const struct resolve_opts *o, struct elf_file *f)
{
	char *path;
	bool downloaded, ok;
	int err;

	if (!fetch_wanted(m, o))
		return false;
	err = debug_server_fetch(DEBUG_SERVER_EXECUTABLE, m->build_id, m->build_id_len, NULL, &path,
				 &downloaded);
	if (err) {
		m->fetch_binary = err;
		log_debug("'%s': debuginfod binary: %s", m->path, fetch_error(err));
		return false;
	}
	ok = open_candidate(m, path, "debuginfod binary", f);
	m->fetch_binary = !ok          ? -EINVAL
			  : downloaded ? MODULE_FETCH_DOWNLOADED
				       : MODULE_FETCH_CACHED;
	if (ok)
		m->found_in = "debuginfod";
	free(path);
	return ok;
}

/* The vdso cannot be read after the fact, but ours is the same when the kernel is. */
static int resolve_vdso(struct module *m)
{
	unsigned long ehdr = getauxval(AT_SYSINFO_EHDR);
	struct symtab st = { 0 };
	uint8_t *copy = NULL;
	Elf *elf = NULL;
	int ret;

	if (ehdr && m->build_id_len) {
		const GElf_Ehdr *eh = (const GElf_Ehdr *)ehdr;
		size_t size = (size_t)(eh->e_shoff + (uint64_t)eh->e_shnum * eh->e_shentsize);
		struct elf_file f;

		if (eh->e_ident[EI_CLASS] == ELFCLASS64 && size > 0 && size < (64u << 20) &&
		    (copy = malloc(size))) {
			memcpy(copy, (const void *)ehdr, size);
			elf_version(EV_CURRENT);
			elf = elf_memory((char *)copy, size);
		}
		memset(&f, 0, sizeof(f));
		f.fd = -1;
		f.elf = elf;
		if (elf) {
			/* Reuse the note reader on the in-memory image. */
			Elf_Scn *scn = NULL;

			while ((scn = elf_nextscn(elf, scn))) {
				GElf_Shdr sh;
				Elf_Data *data;
				size_t off = 0, no, dof;
				GElf_Nhdr nh;

				if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE ||
				    !(data = elf_getdata(scn, NULL)))
					continue;
				while ((off = gelf_getnote(data, off, &nh, &no, &dof)) > 0)
					if (nh.n_type == NT_GNU_BUILD_ID &&
					    nh.n_descsz == m->build_id_len &&
					    !memcmp((char *)data->d_buf + dof, m->build_id,
						    m->build_id_len)) {
						if (!symtab_load(&st, elf) && st.n) {
							m->found_in = "self";
							m->symbols = st.source == SYMTAB_SYMTAB
									     ? "symtab"
									     : "dynsym";
							m->status = "ok";
						}
					}
			}
		}
	}
	log_debug("'%s': %s", m->path,
		  m->found_in ? "symbols from this machine's vdso (the same build-id)"
			      : "this machine's vdso differs (another kernel): placeholder names");
	ret = compose(m, &st, NULL, NULL);
	symtab_release(&st);
	if (elf)
		elf_end(elf);
	free(copy);
	return ret;
}

/* Names .dynsym lacks from the MiniDebugInfo (.gnu_debugdata) of f, when it has one. */
static int add_minidebuginfo(struct module *m, struct symtab *st, const struct elf_file *f)
{
	size_t before = st->n;
	int err = minidebuginfo_load(st, f->elf);

	if (!err)
		log_debug("'%s': MiniDebugInfo (.gnu_debugdata): %zu function symbols added",
			  m->path, st->n - before);
	else if (err != -ENOENT && err != -ENOMEM)
		log_debug("'%s': MiniDebugInfo (.gnu_debugdata) not read: %s", m->path,
			  err == -EINVAL ? "not an xz-compressed ELF file (damaged)"
					 : strerror(-err));
	return err == -ENOMEM ? err : 0;
}

/* Without DWARF, the fallbacks in order: .symtab, .dynsym (and MiniDebugInfo), placeholders. */
static const char *names_from(enum symtab_source source)
{
	switch (source) {
	case SYMTAB_SYMTAB:
		return "no DWARF: function names from .symtab";
	case SYMTAB_MINIDEBUGINFO:
		return "no DWARF, no .symtab: function names from .dynsym and the MiniDebugInfo";
	case SYMTAB_DYNSYM:
		return "no DWARF, no .symtab: function names from .dynsym (exported functions only)";
	default:
		return "no DWARF, no symbol table: placeholder names";
	}
}

static const char *symbols_name(enum symtab_source source)
{
	static const char *const names[] = { "none", "dynsym", "minidebuginfo", "symtab" };

	return names[source];
}

static int resolve_file(struct module *m, const struct resolve_opts *o)
{
	struct elf_file f, dbg;
	struct symtab st = { 0 };
	struct fde_src fs = { .m = m, .o = o };
	struct dwarf_lookup dw;
	bool have_dw = false;
	const char *dwarf_path = NULL;
	char err[256];
	int ret;

	if (!locate_file(m, o, &f) && !fetch_binary(m, o, &f)) {
		m->status = m->mismatch_path ? "build-id-mismatch" : "missing";
		return resolve_placeholders(m);
	}
	m->status = "ok";
	m->resolved_path = strdup(f.path);
	fs.elf = f.elf;
	ret = symtab_load(&st, f.elf);
	if (ret)
		goto out;
	if (f.has_debug_info) {
		dwarf_path = f.path;
	} else {
		m->debug_path = find_debug_file(m, o, &f);
		if (!m->debug_path)
			m->debug_path = fetch_debug_file(m, o);
		/* Stripped binaries keep only .dynsym; their debug file has the full .symtab. */
		if (m->debug_path && st.source != SYMTAB_SYMTAB &&
		    !elf_file_open(&dbg, m->debug_path)) {
			struct symtab st2;

			if (!symtab_load(&st2, dbg.elf) && st2.source == SYMTAB_SYMTAB) {
				log_debug("'%s': .symtab of the debug file '%s' instead of %s",
					  m->path, m->debug_path,
					  st.source == SYMTAB_DYNSYM ? ".dynsym" : "no symbols");
				symtab_release(&st);
				st = st2;
			} else {
				symtab_release(&st2);
			}
			elf_file_close(&dbg);
		}
		dwarf_path = m->debug_path;
	}
	if (st.source < SYMTAB_SYMTAB && m->naddrs && (ret = add_minidebuginfo(m, &st, &f)))
		goto out;
	if (st.source == SYMTAB_DYNSYM && m->naddrs) {
		const struct fde_table *t = fde_src_get(&fs);

		if (fs.err || (t && (ret = symtab_name_split_parts(&st, f.elf, t)))) {
			ret = ret ? ret : fs.err;
			goto out;
		}
	}
	m->symbols = symbols_name(st.source);
	if (dwarf_path && !m->naddrs) {
		m->symbols = "dwarf"; /* not read: no sample is there */
	} else if (dwarf_path) {
		ret = dwarf_info_resolve(dwarf_path, m->addrs, m->naddrs, o->inline_chains, o->jobs,
					 &m->pool, &dw, err, sizeof(err));
		if (!ret) {
			have_dw = true;
			m->cus = dw.cus;
			m->cus_parsed = dw.cus_parsed;
			if (dw.cus)
				m->symbols = "dwarf";
			if (err[0])
				m->dwarf_error = strdup(err);
			log_debug(
				"'%s': DWARF of '%s': %llu of %llu units read for %zu addresses%s%s",
				m->path, dwarf_path, (unsigned long long)dw.cus_parsed,
				(unsigned long long)dw.cus, m->naddrs, err[0] ? "; " : "", err);
		} else if (ret == -ENOMEM) {
			goto out;
		} else {
			log_debug("'%s': no usable DWARF in '%s' (%s)", m->path, dwarf_path,
				  err[0] ? err : strerror(-ret));
			if (err[0])
				m->dwarf_error = strdup(err);
			ret = 0;
		}
	}
	if (strcmp(m->symbols, "dwarf"))
		log_debug("'%s': %s", m->path, names_from(st.source));
	ret = compose(m, &st, have_dw ? &dw : NULL, &fs);
	if (m->addrs_ranged)
		log_debug("'%s': %zu of %zu addresses named by the FDE range that holds them "
			  "(func@0x<start>), %zu by no symbol or range",
			  m->path, m->addrs_ranged, m->naddrs,
			  m->naddrs - m->addrs_resolved - m->addrs_ranged);
	if (have_dw) {
		/* The frames point into the helpers' pools too. */
		m->more_pools = dw.pools;
		m->nmore_pools = dw.npools;
		dw.pools = NULL;
		dw.npools = 0;
		dwarf_lookup_release(&dw);
	}
out:
	fde_table_release(&fs.t);
	symtab_release(&st);
	elf_file_close(&f);
	return ret;
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Name each wanted object with the variable symbol covering it. 0 or -ENOMEM. */
static int name_objects(struct module *m, const struct symtab *st)
{
	size_t i;

	for (i = 0; i < m->nobjs; i++) {
		const struct symtab_sym *s = symtab_find_addr(st, m->objs[i]);
		char buf[1024];

		if (!s || !s->size)
			continue; /* an unsized symbol says nothing of where it ends */
		if (m->objs[i] == s->start)
			snprintf(buf, sizeof(buf), "%s", s->name);
		else
			snprintf(buf, sizeof(buf), "%s+0x%" PRIx64, s->name, m->objs[i] - s->start);
		if (!(m->obj_names[i] = str_pool_get(&m->pool, buf)))
			return -ENOMEM;
	}
	return 0;
}

/*
 * The variables holding the sync objects a wait named: from the file's .symtab, else its
 * separate debug file's, else .dynsym (exported variables only). Read apart from the
 * functions, which may come from the symbol cache. Returns 0 (nothing found is no error) or
 * -ENOMEM.
 */
static int resolve_objects(struct module *m, const struct resolve_opts *o)
{
	struct elf_file f, dbg;
	struct symtab st = { 0 };
	char *debug = NULL;
	size_t i, k;
	int ret;

	qsort(m->objs, m->nobjs, sizeof(*m->objs), u64_cmp);
	for (i = 0, k = 0; i < m->nobjs; i++)
		if (!k || m->objs[k - 1] != m->objs[i])
			m->objs[k++] = m->objs[i];
	m->nobjs = k;
	m->obj_names = calloc(k ? k : 1, sizeof(*m->obj_names));
	if (!m->obj_names)
		return -ENOMEM;
	if (m->kind != RAW_MODULE_FILE || m->path[0] != '/' || !locate_file(m, o, &f))
		return 0;
	ret = symtab_load_objects(&st, f.elf);
	if (!ret && st.source != SYMTAB_SYMTAB && (debug = find_debug_file(m, o, &f)) &&
	    !elf_file_open(&dbg, debug)) {
		struct symtab st2;

		if (!symtab_load_objects(&st2, dbg.elf) && st2.source == SYMTAB_SYMTAB) {
			symtab_release(&st);
			st = st2;
		} else {
			symtab_release(&st2);
		}
		elf_file_close(&dbg);
	}
	if (!ret)
		ret = name_objects(m, &st);
	log_debug("'%s': %zu sync objects in its data, named from %s", m->path, m->nobjs,
		  st.source == SYMTAB_SYMTAB   ? ".symtab"
		  : st.source == SYMTAB_DYNSYM ? ".dynsym"
					       : "nothing");
	free(debug);
	symtab_release(&st);
	elf_file_close(&f);
	return ret;
}

/* Bytes either side of an address searched for a PAUSE: a spin loop is a few instructions. */
#define SPIN_REACH 24

bool module_spin_code(const struct module *m, uint64_t addr)
{
	int64_t i = m->spin_code ? module_addr_index(m, addr) : -1;

	return i >= 0 && m->spin_code[i];
}

/*
 * The bytes of the file at virtual address [addr - SPIN_REACH, addr + SPIN_REACH] hold a PAUSE
 * (F3 90). The loadable segment holding addr gives its file offset; a range it does not
 * cover entirely is not looked at.
 */
static bool pause_near(Elf *elf, const uint8_t *file, size_t size, size_t nph, uint64_t addr)
{
	size_t i;

	for (i = 0; i < nph; i++) {
		GElf_Phdr ph;
		uint64_t lo, hi, off, k;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD ||
		    !(ph.p_flags & PF_X) || addr < ph.p_vaddr || addr >= ph.p_vaddr + ph.p_filesz)
			continue;
		lo = addr >= ph.p_vaddr + SPIN_REACH ? addr - SPIN_REACH : ph.p_vaddr;
		hi = addr + SPIN_REACH + 2 <= ph.p_vaddr + ph.p_filesz ? addr + SPIN_REACH + 2
								       : ph.p_vaddr + ph.p_filesz;
		off = ph.p_offset + (lo - ph.p_vaddr);
		if (off + (hi - lo) > size)
			return false;
		for (k = 0; k + 1 < hi - lo; k++)
			if (file[off + k] == 0xf3 && file[off + k + 1] == 0x90)
				return true;
		return false;
	}
	return false;
}

/* Which resolved addresses of an OpenMP runtime are in spin loops. 0 or -ENOMEM. */
static int find_spin_code(struct module *m, const struct resolve_opts *o)
{
	struct elf_file f;
	const uint8_t *file;
	size_t size = 0, nph = 0, i, n = 0;

	m->spin_code = calloc(m->naddrs ? m->naddrs : 1, 1);
	if (!m->spin_code)
		return -ENOMEM;
	if (m->kind != RAW_MODULE_FILE || m->path[0] != '/' || !locate_file(m, o, &f))
		return 0;
	file = (const uint8_t *)elf_rawfile(f.elf, &size);
	if (file && !elf_getphdrnum(f.elf, &nph))
		for (i = 0; i < m->naddrs; i++)
			n += m->spin_code[i] = pause_near(f.elf, file, size, nph, m->addrs[i]);
	log_debug("'%s': an OpenMP runtime: %zu of %zu addresses in spin loops", m->path, n,
		  m->naddrs);
	elf_file_close(&f);
	return 0;
}

int module_resolve(struct module *m, const struct resolve_opts *o)
{
	struct timespec t0, t1;
	size_t i, k;
	int ret;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (u64_sort(m->addrs, m->naddrs))
		return -ENOMEM;
	for (i = 0, k = 0; i < m->naddrs; i++)
		if (!k || m->addrs[k - 1] != m->addrs[i])
			m->addrs[k++] = m->addrs[i];
	m->naddrs = k;
	m->first = calloc(k ? k : 1, sizeof(*m->first));
	m->count = calloc(k ? k : 1, sizeof(*m->count));
	if (!m->first || !m->count)
		return -ENOMEM;
	if (o->cache_dir && m->build_id_len && sym_cache_load(m, o) == 0) {
		log_debug("'%s': %zu addresses from the symbol cache in '%s'", m->path, m->naddrs,
			  o->cache_dir);
		m->from_cache = true;
		ret = 0;
	} else if (m->kind == RAW_MODULE_VDSO) {
		ret = resolve_vdso(m);
	} else if (m->kind == RAW_MODULE_ANON || m->path[0] != '/') {
		log_debug("'%s': %s: placeholder names", m->path,
			  m->kind == RAW_MODULE_ANON ? "anonymous executable memory (JIT code)"
						     : "no file path");
		m->status = "ok";
		ret = resolve_placeholders(m);
	} else {
		ret = resolve_file(m, o);
		if (!ret && o->cache_dir && m->build_id_len && m->naddrs &&
		    !strcmp(m->status, "ok"))
			sym_cache_store(m, o); /* best effort */
	}
	if (!ret && m->nobjs)
		ret = resolve_objects(m, o);
	if (!ret && m->want_spin_code)
		ret = find_spin_code(m, o);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	m->seconds = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	return ret;
}
