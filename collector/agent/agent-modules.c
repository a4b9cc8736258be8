/* SPDX-License-Identifier: MIT */
/* The agent's module records: loaded objects, vdso and JIT code, updated at dlopen/dlclose. */
#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include <elf.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>

#include "collector/agent/agent-private.h"
#include "common/elf-note.h"
#include "common/proc-maps.h"
#include "common/grow.h"

/* A module as seen by one scan. */
struct module {
	uint32_t kind;
	bool seen; /* found again by the scan under way */
	uint64_t base;
	char *path;
	/* Who the loader says it is (FILE and VDSO modules): how a scan knows it again. */
	const void *phdr;
	char *dl_name;
	uint8_t build_id[RAW_MAX_BUILD_ID];
	uint32_t build_id_len;
	uint32_t nsegs;
	/* Loaded by dlopen, it exports _PyRuntime: a Python interpreter to look at. */
	bool py_exported;
	/* The interpreter's symbols its dynamic symbol table gives (in memory, not the file). */
	struct pyagent_dynsyms py;
	/* Its own allocation: the list stays small (a scan walks it, a deletion moves it). */
	struct raw_segment *segs;
};

struct module_list {
	struct module *v;
	size_t n, cap;
};

/* What the streams of this image already describe. Guarded by agent.lock. */
static struct module_list known;
/* The loader's counts of objects added and removed (dlpi_adds, dlpi_subs) at the last scan. */
static unsigned long long known_adds, known_subs;
/* The last scan read the counts and every object: known is what was loaded then. */
static bool known_whole;

static struct module *list_add(struct module_list *l)
{
	if (GROW(l->v, l->n + 1, l->cap))
		return NULL;
	memset(&l->v[l->n], 0, sizeof(l->v[0]));
	return &l->v[l->n++];
}

static void module_release(struct module *m)
{
	free(m->path);
	free(m->dl_name);
	free(m->segs);
}

static void list_release(struct module_list *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		module_release(&l->v[i]);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

void agent_module_text(const struct dl_phdr_info *info, uintptr_t *lo, uintptr_t *hi)
{
	int i;

	*lo = UINTPTR_MAX;
	*hi = 0;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t start = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		if (start < *lo)
			*lo = start;
		if (start + ph->p_memsz > *hi)
			*hi = start + ph->p_memsz;
	}
}

void agent_modules_reset(void)
{
	list_release(&known);
	known_adds = known_subs = 0;
	known_whole = false;
}

/*
 * One scan: a cursor in the modules known before it (known.v[0..old)); the ones new to it are
 * appended to known (known.v[old..known.n)), so nothing is copied.
 */
struct scan {
	size_t old;
	size_t cursor;
	bool whole;     /* walk even when the loader's counts did not move */
	bool counted;   /* the counts were read (from the first object) */
	bool unchanged; /* they did not: nothing to do */
	bool none_gone; /* nothing removed since a whole scan: every known object is still there */
	bool failed;
	bool python; /* no interpreter found yet: new objects asked whether they are one */
};

/*
 * Two live objects never share their program headers' address: when none went since the last
 * whole scan, that address tells a known one, its name need not be compared (a comparison of
 * paths per object at each dlopen, which made the scans of a program that loads hundreds of
 * plugins quadratic in their paths' length).
 */
static bool same_object(const struct scan *sc, const struct module *m,
			const struct dl_phdr_info *info)
{
	return m->kind != RAW_MODULE_ANON && m->base == info->dlpi_addr &&
	       m->phdr == info->dlpi_phdr &&
	       (sc->none_gone ||
		(m->dl_name && !strcmp(m->dl_name, info->dlpi_name ? info->dlpi_name : "")));
}

/*
 * The known module the loader reports now, marked seen; false for a new one. The loader
 * walks its objects in the same order each time with new ones after those of their
 * namespace: the one after the last found is tried first, so a scan costs a comparison per
 * object, not one per pair.
 */
static bool known_again(struct scan *sc, const struct dl_phdr_info *info)
{
	size_t i;

	for (i = sc->cursor; i < sc->old; i++)
		if (same_object(sc, &known.v[i], info))
			goto found;
	for (i = 0; i < sc->cursor && i < sc->old; i++)
		if (same_object(sc, &known.v[i], info))
			goto found;
	return false;
found:
	known.v[i].seen = true;
	sc->cursor = i + 1;
	return true;
}

/* False when memory ran out. */
static bool module_describe(struct module *m, const struct dl_phdr_info *info)
{
	uint64_t vdso = getauxval(AT_SYSINFO_EHDR);
	uint32_t nload = 0;
	int i;

	m->kind = RAW_MODULE_FILE;
	m->base = info->dlpi_addr;
	m->phdr = info->dlpi_phdr;
	for (i = 0; i < info->dlpi_phnum; i++)
		nload += info->dlpi_phdr[i].p_type == PT_LOAD;
	if (nload > RAW_MAX_SEGMENTS)
		nload = RAW_MAX_SEGMENTS;
	m->segs = nload ? calloc(nload, sizeof(*m->segs)) : NULL;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_LOAD && m->segs && m->nsegs < nload) {
			struct raw_segment *s = &m->segs[m->nsegs++];

			s->start = info->dlpi_addr + ph->p_vaddr;
			s->size = ph->p_memsz;
			s->file_offset = ph->p_offset;
			s->prot = ph->p_flags & (PF_R | PF_W | PF_X);
			if (vdso && s->start == vdso)
				m->kind = RAW_MODULE_VDSO;
		} else if (ph->p_type == PT_NOTE && !m->build_id_len) {
			m->build_id_len =
				(uint32_t)elf_note_build_id((const void *)(info->dlpi_addr +
									   ph->p_vaddr),
							    ph->p_memsz, ph->p_align, m->build_id,
							    sizeof(m->build_id));
		}
	}
	if (m->kind == RAW_MODULE_VDSO)
		m->path = strdup("[vdso]");
	else if (!info->dlpi_name || !info->dlpi_name[0])
		m->path = strdup(agent.exe[0] ? agent.exe : "[exe]");
	else
		m->path = strdup(info->dlpi_name);
	m->dl_name = strdup(info->dlpi_name ? info->dlpi_name : "");
	return m->path && m->dl_name && (m->segs || !nload);
}

static bool sym_is(const ElfW(Sym) * s, const char *strtab, size_t strsz, const char *name)
{
	return s->st_shndx != SHN_UNDEF && s->st_name < strsz && !strcmp(strtab + s->st_name, name);
}

/* A lookup in a DT_GNU_HASH table, as the loader's. */
static const ElfW(Sym) * gnu_lookup(const uint32_t *t, const ElfW(Sym) * symtab, const char *strtab,
				    size_t strsz, const char *name)
{
	const size_t bits = sizeof(ElfW(Addr)) * 8;
	uint32_t nbuckets = t[0], symoff = t[1], nbloom = t[2], shift = t[3], h = 5381, i;
	const ElfW(Addr) *bloom = (const ElfW(Addr) *)(t + 4);
	const uint32_t *buckets = (const uint32_t *)(bloom + nbloom), *chain = buckets + nbuckets;
	const unsigned char *c;
	ElfW(Addr) word;

	for (c = (const unsigned char *)name; *c; c++)
		h = h * 33 + *c;
	if (!nbuckets || !nbloom)
		return NULL;
	word = bloom[(h / bits) % nbloom];
	if (!((word >> (h % bits)) & (word >> ((h >> shift) % bits)) & 1))
		return NULL;
	i = buckets[h % nbuckets];
	if (i < symoff)
		return NULL;
	for (;; i++) {
		uint32_t h2 = chain[i - symoff];

		if ((h | 1) == (h2 | 1) && sym_is(&symtab[i], strtab, strsz, name))
			return &symtab[i];
		if (h2 & 1)
			return NULL;
	}
}

/* A lookup in a DT_HASH table (older links), its chains bounded by their count. */
static const ElfW(Sym) * sysv_lookup(const uint32_t *t, const ElfW(Sym) * symtab,
				     const char *strtab, size_t strsz, const char *name)
{
	uint32_t nbucket = t[0], nchain = t[1], h = 0, g, i, n;
	const uint32_t *bucket = t + 2, *chain = bucket + nbucket;
	const unsigned char *c;

	for (c = (const unsigned char *)name; *c; c++) {
		h = (h << 4) + *c;
		g = h & 0xf0000000u;
		if (g)
			h ^= g >> 24;
		h &= ~g;
	}
	if (!nbucket)
		return NULL;
	for (i = bucket[h % nbucket], n = 0; i != STN_UNDEF && i < nchain && n < nchain;
	     i = chain[i], n++)
		if (sym_is(&symtab[i], strtab, strsz, name))
			return &symtab[i];
	return NULL;
}

/* A loaded object's dynamic symbol table and its hash table, in memory. */
struct dyn_table {
	const ElfW(Sym) * symtab;
	const uint32_t *gnu, *sysv;
	const char *strtab;
	size_t strsz;
};

/*
 * The object's tables, as the loader looks a symbol up: nothing read from its file. False
 * when it has no hash table (a symbol cannot be told without the file). Under the loader's
 * lock (dl_iterate_phdr): the object cannot go meanwhile.
 */
static bool dyn_table_of(const struct dl_phdr_info *info, struct dyn_table *tab)
{
	const ElfW(Dyn) *dyn = NULL;
	int i;

	memset(tab, 0, sizeof(*tab));
	for (i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
			dyn = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
	for (; dyn && dyn->d_tag != DT_NULL; dyn++) {
		uintptr_t a = agent_dyn_addr(info->dlpi_addr, dyn->d_un.d_ptr);

		if (dyn->d_tag == DT_SYMTAB)
			tab->symtab = (const ElfW(Sym) *)a;
		else if (dyn->d_tag == DT_STRTAB)
			tab->strtab = (const char *)a;
		else if (dyn->d_tag == DT_STRSZ)
			tab->strsz = dyn->d_un.d_val;
		else if (dyn->d_tag == DT_GNU_HASH)
			tab->gnu = (const uint32_t *)a;
		else if (dyn->d_tag == DT_HASH)
			tab->sysv = (const uint32_t *)a;
	}
	return tab->symtab && tab->strtab && (tab->gnu || tab->sysv);
}

static const ElfW(Sym) * dyn_lookup(const struct dyn_table *tab, const char *name)
{
	return tab->gnu ? gnu_lookup(tab->gnu, tab->symtab, tab->strtab, tab->strsz, name)
			: sysv_lookup(tab->sysv, tab->symtab, tab->strtab, tab->strsz, name);
}

/*
 * The interpreter's symbols among the object's dynamic ones (every libpython and every
 * python executable exports them): found there, the interpreter is taken from memory and its
 * file is not read (pyagent_on_image()). Whether it may be an interpreter: true when it
 * exports _PyRuntime or has no hash table to tell.
 */
static bool module_python_symbols(const struct dl_phdr_info *info, struct pyagent_dynsyms *py)
{
	struct dyn_table tab;
	size_t k;

	memset(py, 0, sizeof(*py));
	if (!dyn_table_of(info, &tab))
		return true;
	for (k = 0; k < PYAGENT_DYNSYMS; k++) {
		const ElfW(Sym) *s = dyn_lookup(&tab, pyagent_dynsym_names[k]);

		py->found[k] = s != NULL;
		py->value[k] = s ? s->st_value : 0;
	}
	return py->found[0];
}

static int phdr_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	struct scan *sc = data;
	struct module *m;
	bool ok;

	/* The loader counts what it added and removed: unchanged, nothing is new. */
	if (!sc->counted &&
	    size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof(info->dlpi_subs)) {
		sc->counted = true;
		if (!sc->whole && info->dlpi_adds == known_adds && info->dlpi_subs == known_subs) {
			sc->unchanged = true;
			return 1;
		}
		sc->none_gone = known_whole && info->dlpi_subs == known_subs;
		known_adds = info->dlpi_adds;
		known_subs = info->dlpi_subs;
	}
	if (known_again(sc, info))
		return 0;
	m = list_add(&known);
	if (!m) {
		sc->failed = true;
		return 1;
	}
	m->seen = true;
	ok = module_describe(m, info);
	/*
	 * Until an interpreter is found, a new object may be one (libpython loaded by a plugin):
	 * its dynamic symbols are looked up in memory, by their hash table, and only one that
	 * exports _PyRuntime (as every libpython does) is looked at, not each of a program's
	 * plugins. The whole scans (start, fork, attach, new executable memory) look at every
	 * new object: an interpreter linked into the executable need not export it, and then
	 * its file is read (pyagent_on_image()).
	 */
	if (ok && (sc->python || (sc->whole && !pyagent_active())) && m->kind == RAW_MODULE_FILE)
		m->py_exported = module_python_symbols(info, &m->py);
	if (!ok || !m->nsegs) {
		/* No segment: nothing to record (not a failure, nothing taken as gone). */
		if (!ok)
			sc->failed = true;
		module_release(m);
		known.n--;
	}
	return 0;
}

static bool in_modules(const struct module_list *l, uint64_t start, uint64_t end)
{
	size_t i, j;

	for (i = 0; i < l->n; i++) {
		if (l->v[i].kind == RAW_MODULE_ANON)
			continue;
		for (j = 0; j < l->v[i].nsegs; j++) {
			const struct raw_segment *s = &l->v[i].segs[j];
			/* Segments are not page-rounded; maps are. */
			uint64_t lo = s->start & ~(uint64_t)4095;
			uint64_t hi = (s->start + s->size + 4095) & ~(uint64_t)4095;

			if (start < hi && end > lo)
				return true;
		}
	}
	return false;
}

static bool same_anon(const struct module *a, const struct proc_map *pm, const char *path)
{
	return a->kind == RAW_MODULE_ANON && a->segs[0].start == pm->start &&
	       a->segs[0].size == pm->end - pm->start && !strcmp(a->path, path);
}

/*
 * Executable memory that belongs to no ELF module (JIT code), from /proc/self/maps: the
 * regions known already are marked seen, the others appended to known.
 */
static void scan_anon(struct scan *sc)
{
	char line[PATH_MAX + 128];
	FILE *f = fopen("/proc/self/maps", "re");

	if (!f) {
		sc->failed = true;
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		struct proc_map pm;
		const char *path;
		struct module *m;
		size_t i;

		if (proc_map_parse(line, &pm) || !proc_map_is_anon_exec(&pm) ||
		    in_modules(&known, pm.start, pm.end))
			continue;
		path = pm.path[0] ? pm.path : "[anon]";
		for (i = 0; i < sc->old && !same_anon(&known.v[i], &pm, path); i++)
			;
		if (i < sc->old) {
			known.v[i].seen = true;
			continue;
		}
		m = list_add(&known);
		if (!m) {
			sc->failed = true;
			break;
		}
		m->kind = RAW_MODULE_ANON;
		m->base = 0;
		m->path = strdup(path);
		m->segs = calloc(1, sizeof(*m->segs));
		m->seen = true;
		if (m->segs) {
			m->nsegs = 1;
			m->segs[0].start = pm.start;
			m->segs[0].size = pm.end - pm.start;
			m->segs[0].file_offset = 0;
			m->segs[0].prot = pm.prot;
		}
		if (!m->path || !m->segs) {
			module_release(m);
			known.n--;
			sc->failed = true;
		}
	}
	fclose(f);
}

static void write_load(struct raw_writer *w, const struct module *m)
{
	struct raw_module r = {
		.time_ns = raw_header_now(&agent.proc.hdr),
		.kind = m->kind,
		.base = m->base,
		.path = m->path,
		.build_id = m->build_id,
		.build_id_len = m->build_id_len,
		.nsegs = m->nsegs,
		.segs = m->segs,
	};

	if (raw_writer_module_load(w, &r) && !w->full)
		agent_log("cannot record module '%s'", m->path);
}

/*
 * Compare what is loaded now with what the process stream already says, and write the
 * difference: MODULE_LOAD for each new object, MODULE_UNLOAD for each one gone. maps: read
 * /proc/self/maps for JIT code too (at start, after fork, when the program maps executable
 * memory); the loader's changes alone otherwise (dlopen/dlclose), which cost nothing when
 * its counts did not move and a comparison per object when they did: only new objects are
 * read. Never in the handler.
 */
static void modules_scan(bool maps)
{
	AGENT_BUSY;
	struct scan sc = { .whole = maps, .python = !maps && !pyagent_active() };
	struct raw_writer *w;
	size_t i, kept;

	if (!agent.active)
		return;
	/*
	 * The signal is not blocked: a sample of this thread while it scans finds AGENT_BUSY
	 * set and is recorded as the agent's own at once, without unwinding (agent-sample.c),
	 * so the handler takes no lock this thread may hold (an arena's, the loader's, the
	 * unwinder's) and no sample waits for the scan's end to land in the program's frames.
	 */
	pthread_mutex_lock(&agent.lock);
	sc.old = known.n;
	for (i = 0; i < known.n; i++)
		known.v[i].seen = false;
	agent_in_dl++;
	agent_real.dl_iterate_phdr(phdr_cb, &sc);
	agent_in_dl--;
	if (sc.unchanged)
		goto out;
	if (maps)
		scan_anon(&sc);
	for (i = 0; i < sc.old; i++)
		/* Not read again, or not all read: nothing is taken as gone. */
		if (sc.failed || (!maps && known.v[i].kind == RAW_MODULE_ANON))
			known.v[i].seen = true;
	if (sc.failed)
		known_adds = known_subs = 0; /* everything looked at again next time */
	known_whole = sc.counted && !sc.failed;
	w = agent_proc_writer();
	for (i = sc.old; i < known.n; i++) {
		if (w)
			write_load(w, &known.v[i]);
		if (known.v[i].kind == RAW_MODULE_FILE && (maps || known.v[i].py_exported))
			agent_python_module(known.v[i].path, known.v[i].base, &known.v[i].py);
		/* 3.14's _asyncio (lib-dynload): its debug offsets name the running task */
		if (known.v[i].kind == RAW_MODULE_FILE)
			pyagent_on_asyncio(known.v[i].path, false);
	}
	for (i = 0; w && i < sc.old; i++)
		if (!known.v[i].seen)
			raw_writer_module_unload(w, raw_header_now(&agent.proc.hdr),
						 known.v[i].base, known.v[i].path);
	agent_proc_written();
	if (known.n > sc.old)
		agent_python_modules_done();
	/* Known from now on: the ones seen again, then the new ones, in their order. */
	for (i = kept = 0; i < known.n; i++) {
		if (!known.v[i].seen)
			module_release(&known.v[i]);
		else if (kept++ != i)
			known.v[kept - 1] = known.v[i];
	}
	known.n = kept;
out:
	pthread_mutex_unlock(&agent.lock);
	if (agent.cfg.memory && !sc.unchanged)
		mem_python_resolve();
}

void agent_modules_scan(void)
{
	modules_scan(true);
}

/* ---- interposed loader functions ------------------------------------------------------ */

AGENT_EXPORT void *dlopen(const char *file, int mode)
{
	void *h;

	if (!agent_real.dlopen)
		agent_resolve();
	agent_in_dl++;
	h = agent_real.dlopen(file, mode);
	agent_in_dl--;
	agent_dl_return(agent_real.dlopen);
	if (h && agent.active)
		modules_scan(false);
	return h;
}

AGENT_EXPORT void *dlmopen(Lmid_t lmid, const char *file, int mode)
{
	void *h;

	if (!agent_real.dlmopen)
		agent_resolve();
	agent_in_dl++;
	h = agent_real.dlmopen(lmid, file, mode);
	agent_in_dl--;
	agent_dl_return(agent_real.dlmopen);
	if (h && agent.active)
		modules_scan(false);
	return h;
}

AGENT_EXPORT int dlclose(void *handle)
{
	int ret;

	if (!agent_real.dlclose)
		agent_resolve();
	agent_in_dl++;
	ret = agent_real.dlclose(handle);
	agent_in_dl--;
	if (agent.active) {
		/* Unwind information cached for the unmapped code must not be used again. */
		unw_flush_cache(unw_local_addr_space, 0, 0);
		modules_scan(false);
	}
	agent_dl_return(agent_real.dlclose);
	return ret;
}

AGENT_EXPORT AGENT_EARLY int dl_iterate_phdr(int (*cb)(struct dl_phdr_info *, size_t, void *),
					     void *data)
{
	int ret;

	if (!agent_real.dl_iterate_phdr)
		agent_resolve();
	agent_in_dl++;
	ret = agent_real.dl_iterate_phdr(cb, data);
	agent_in_dl--;
	agent_dl_return(agent_real.dl_iterate_phdr);
	return ret;
}

/*
 * JIT compilers make code executable with mmap or mprotect: record the new region at once,
 * so the samples in it, from the first one on, fall in a known module.
 */
static void exec_memory_changed(int prot)
{
	if ((prot & PROT_EXEC) && agent.active && !agent_in_dl && !agent_in_vfork_child())
		agent_modules_scan();
}

/*
 * The build sets _FILE_OFFSET_BITS=64, under which <sys/mman.h> renames mmap to mmap64: the
 * wrappers are given their symbol names explicitly, so that both are interposed (a program
 * built without large-file offsets calls mmap, one built with them mmap64).
 */
static void *mapped(void *p, size_t len, int prot, int flags, void *ra, void *cfa)
{
	if (p != MAP_FAILED) {
		exec_memory_changed(prot);
		mem_mapped_at(p, len, prot, flags, ra, cfa);
	}
	return p;
}

AGENT_EXPORT void *agent_mmap(void *addr, size_t len, int prot, int flags, int fd,
			      off_t off) __asm__("mmap");
AGENT_EXPORT void *agent_mmap64(void *addr, size_t len, int prot, int flags, int fd,
				off_t off) __asm__("mmap64");

void *agent_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	if (!agent_real.mmap)
		agent_resolve();
	return mapped(agent_real.mmap(addr, len, prot, flags, fd, off), len, prot, flags,
		      __builtin_return_address(0), __builtin_dwarf_cfa());
}

void *agent_mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	if (!agent_real.mmap)
		agent_resolve();
	return mapped(agent_real.mmap(addr, len, prot, flags, fd, off), len, prot, flags,
		      __builtin_return_address(0), __builtin_dwarf_cfa());
}

AGENT_EXPORT int mprotect(void *addr, size_t len, int prot)
{
	int ret;

	if (!agent_real.mprotect)
		agent_resolve();
	ret = agent_real.mprotect(addr, len, prot);
	if (ret == 0)
		exec_memory_changed(prot);
	return ret;
}
