/* SPDX-License-Identifier: MIT */
/* Where a module's names come from: DWARF, .symtab (its own or its debug file's), .dynsym and
   the MiniDebugInfo, the FDE ranges of stripped code; the vdso's from this machine's. */
#define LOG_DOMAIN "module"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>

#include <gelf.h>

#include "common/grow.h"
#include "common/log.h"
#include "finalizer/dwarf-info.h"
#include "finalizer/minidebuginfo.h"
#include "finalizer/module-private.h"
#include "finalizer/sym-cache.h"

const struct fde_table *fde_src_get(struct fde_src *fs)
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

/* The vdso cannot be read after the fact, but ours is the same when the kernel is. */
int module_resolve_vdso(struct module *m)
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
	ret = module_compose(m, &st, NULL, NULL);
	symtab_release(&st);
	if (elf)
		elf_end(elf);
	free(copy);
	return ret;
}

bool module_symtab_from_debug(struct symtab *st, const char *path,
			      int (*load)(struct symtab *t, Elf *elf))
{
	struct elf_file dbg;
	struct symtab st2;
	bool taken;

	if (st->source == SYMTAB_SYMTAB || elf_file_open(&dbg, path))
		return false;
	taken = !load(&st2, dbg.elf) && st2.source == SYMTAB_SYMTAB;
	if (taken) {
		symtab_release(st);
		*st = st2;
	} else {
		symtab_release(&st2);
	}
	elf_file_close(&dbg);
	return taken;
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

/*
 * gcc's outlined OpenMP functions ("main._omp_fn.0") have no DW_AT_decl_line: the line of
 * their first instruction is the directive's. Their start addresses are resolved with the
 * sampled ones (module_compose() gives it them as their definition line). 0 or -ENOMEM.
 */
static int want_outlined_starts(struct module *m, const struct symtab *st)
{
	size_t i, n = m->naddrs;
	uint32_t *first, *count;

	for (i = 0; i < st->n; i++) {
		if (!strstr(st->syms[i].name, "._omp_fn."))
			continue;
		if (GROW(m->addrs, m->naddrs + 1, m->cap))
			return -ENOMEM;
		m->addrs[m->naddrs++] = st->syms[i].start;
	}
	if (m->naddrs == n)
		return 0;
	if (module_sort_unique(m->addrs, &m->naddrs))
		return -ENOMEM;
	first = calloc(m->naddrs, sizeof(*first));
	count = calloc(m->naddrs, sizeof(*count));
	if (!first || !count) {
		free(first);
		free(count);
		return -ENOMEM;
	}
	free(m->first);
	free(m->count);
	m->first = first;
	m->count = count;
	return 0;
}

int module_resolve_file(struct module *m, const struct resolve_opts *o)
{
	struct elf_file f;
	struct symtab st = { 0 };
	struct fde_src fs = { .m = m, .o = o };
	const char *was;
	struct dwarf_lookup dw;
	bool have_dw = false;
	const char *dwarf_path = NULL;
	char err[256];
	int ret;

	if (!module_find_file(m, o, &f) && !module_fetch_binary(m, o, &f)) {
		m->status = m->mismatch_path ? "build-id-mismatch" : "missing";
		return module_resolve_placeholders(m);
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
		m->debug_path = module_find_debug_file(m, o, &f);
		if (!m->debug_path)
			m->debug_path = module_fetch_debug_file(m, o);
		/* Stripped binaries keep only .dynsym; their debug file has the full .symtab. */
		was = st.source == SYMTAB_DYNSYM ? ".dynsym" : "no symbols";
		if (m->debug_path && module_symtab_from_debug(&st, m->debug_path, symtab_load))
			log_debug("'%s': .symtab of the debug file '%s' instead of %s", m->path,
				  m->debug_path, was);
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
	if (m->naddrs && (ret = symtab_name_stubs(&st, f.elf)))
		goto out;
	if (m->naddrs && (ret = want_outlined_starts(m, &st)))
		goto out;
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
	ret = module_compose(m, &st, have_dw ? &dw : NULL, &fs);
	if (!ret && m->naddrs)
		ret = module_name_methods(m, f.elf, &fs, &st);
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
