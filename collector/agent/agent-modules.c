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
	struct raw_segment segs[RAW_MAX_SEGMENTS];
};

struct module_list {
	struct module *v;
	size_t n, cap;
};

/* What the streams of this image already describe. Guarded by agent.lock. */
static struct module_list known;
/* The loader's counts of objects added and removed (dlpi_adds, dlpi_subs) at the last scan. */
static unsigned long long known_adds, known_subs;

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
}

/* One scan: the modules known before it, a cursor in them, and the ones new to it. */
struct scan {
	struct module_list added;
	size_t cursor;
	bool whole;     /* walk even when the loader's counts did not move */
	bool counted;   /* the counts were read (from the first object) */
	bool unchanged; /* they did not: nothing to do */
	bool failed;
};

static bool same_object(const struct module *m, const struct dl_phdr_info *info)
{
	return m->kind != RAW_MODULE_ANON && m->base == info->dlpi_addr &&
	       m->phdr == info->dlpi_phdr && m->dl_name &&
	       !strcmp(m->dl_name, info->dlpi_name ? info->dlpi_name : "");
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

	for (i = sc->cursor; i < known.n; i++)
		if (same_object(&known.v[i], info))
			goto found;
	for (i = 0; i < sc->cursor && i < known.n; i++)
		if (same_object(&known.v[i], info))
			goto found;
	return false;
found:
	known.v[i].seen = true;
	sc->cursor = i + 1;
	return true;
}

static void module_describe(struct module *m, const struct dl_phdr_info *info)
{
	uint64_t vdso = getauxval(AT_SYSINFO_EHDR);
	int i;

	m->kind = RAW_MODULE_FILE;
	m->base = info->dlpi_addr;
	m->phdr = info->dlpi_phdr;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_LOAD && m->nsegs < RAW_MAX_SEGMENTS) {
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
}

static int phdr_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	struct scan *sc = data;
	struct module *m;

	/* The loader counts what it added and removed: unchanged, nothing is new. */
	if (!sc->counted &&
	    size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof(info->dlpi_subs)) {
		sc->counted = true;
		if (!sc->whole && info->dlpi_adds == known_adds && info->dlpi_subs == known_subs) {
			sc->unchanged = true;
			return 1;
		}
		known_adds = info->dlpi_adds;
		known_subs = info->dlpi_subs;
	}
	if (known_again(sc, info))
		return 0;
	m = list_add(&sc->added);
	if (!m) {
		sc->failed = true;
		return 1;
	}
	module_describe(m, info);
	if (!m->path || !m->dl_name || !m->nsegs) {
		if (!m->path || !m->dl_name)
			sc->failed = true;
		module_release(m);
		sc->added.n--;
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
 * regions known already are marked seen, the others added to sc->added.
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
		    in_modules(&known, pm.start, pm.end) ||
		    in_modules(&sc->added, pm.start, pm.end))
			continue;
		path = pm.path[0] ? pm.path : "[anon]";
		for (i = 0; i < known.n && !same_anon(&known.v[i], &pm, path); i++)
			;
		if (i < known.n) {
			known.v[i].seen = true;
			continue;
		}
		m = list_add(&sc->added);
		if (!m) {
			sc->failed = true;
			break;
		}
		m->kind = RAW_MODULE_ANON;
		m->base = 0;
		m->path = strdup(path);
		m->nsegs = 1;
		m->segs[0].start = pm.start;
		m->segs[0].size = pm.end - pm.start;
		m->segs[0].file_offset = 0;
		m->segs[0].prot = pm.prot;
		if (!m->path) {
			sc->added.n--;
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
	struct scan sc = { .whole = maps };
	struct raw_writer *w;
	sigset_t old, outer;
	size_t i, kept;

	if (!agent.active)
		return;
	/*
	 * No sample of this thread while it scans: it mallocs and frees, and a handler that
	 * unwinds while this thread holds an arena lock can deadlock with a dlclose() in another
	 * thread (loader lock, then that arena) and the unwinder's lock a third one holds. A
	 * sample held back meanwhile is delivered when the signal is unblocked, and recorded as
	 * the agent's own (agent-sample.c).
	 */
	agent_block_sampling(&outer);
	pthread_mutex_lock(&agent.lock);
	for (i = 0; i < known.n; i++)
		known.v[i].seen = false;
	agent_in_dl++;
	agent_real.dl_iterate_phdr(phdr_cb, &sc);
	agent_in_dl--;
	if (sc.unchanged)
		goto out;
	if (sc.failed) {
		/* Describe everything again at the next scan: nothing is taken as gone. */
		known_adds = known_subs = 0;
		for (i = 0; i < known.n; i++)
			known.v[i].seen = true;
	}
	if (maps)
		scan_anon(&sc);
	for (i = 0; i < known.n && !maps; i++)
		if (known.v[i].kind == RAW_MODULE_ANON)
			known.v[i].seen = true;
	w = agent_proc_begin(&old);
	for (i = 0; i < sc.added.n; i++) {
		if (w)
			write_load(w, &sc.added.v[i]);
		if (sc.added.v[i].kind == RAW_MODULE_FILE)
			agent_python_module(sc.added.v[i].path, sc.added.v[i].base);
	}
	for (i = 0; w && i < known.n; i++)
		if (!known.v[i].seen)
			raw_writer_module_unload(w, raw_header_now(&agent.proc.hdr),
						 known.v[i].base, known.v[i].path);
	agent_proc_end(&old);
	/* Known from now on: the ones seen again, then the new ones. */
	for (i = kept = 0; i < known.n; i++) {
		if (known.v[i].seen)
			known.v[kept++] = known.v[i];
		else
			module_release(&known.v[i]);
	}
	known.n = kept;
	for (i = 0; i < sc.added.n; i++) {
		struct module *m = list_add(&known);

		if (!m) {
			/* Forgotten: described again at the next whole scan. */
			module_release(&sc.added.v[i]);
			known_adds = known_subs = 0;
			continue;
		}
		*m = sc.added.v[i];
	}
	sc.added.n = 0;
	if (sc.added.cap)
		agent_python_modules_done();
out:
	list_release(&sc.added);
	pthread_mutex_unlock(&agent.lock);
	agent_restore_mask(&outer);
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
