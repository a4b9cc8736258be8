/* SPDX-License-Identifier: MIT */
/* The agent's module records: loaded objects, vdso and JIT code, updated at dlopen/dlclose. */
#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include <elf.h>
#include <errno.h>
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
	uint64_t base;
	char *path;
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

static struct module *list_add(struct module_list *l)
{
	if (GROW(l->v, l->n + 1, l->cap))
		return NULL;
	memset(&l->v[l->n], 0, sizeof(l->v[0]));
	return &l->v[l->n++];
}

static void list_release(struct module_list *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		free(l->v[i].path);
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
}

static int phdr_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	struct module_list *l = data;
	uint64_t vdso = getauxval(AT_SYSINFO_EHDR);
	struct module *m;
	int i;

	(void)size;
	m = list_add(l);
	if (!m)
		return 1;
	m->kind = RAW_MODULE_FILE;
	m->base = info->dlpi_addr;
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
	if (!m->path || !m->nsegs) {
		free(m->path);
		l->n--;
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

/* Executable memory that belongs to no ELF module (JIT code), from /proc/self/maps. */
static void scan_anon(struct module_list *l)
{
	size_t nfiles = l->n;
	char line[PATH_MAX + 128];
	FILE *f = fopen("/proc/self/maps", "re");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		struct module_list files = { l->v, nfiles, nfiles };
		struct proc_map pm;
		struct module *m;

		if (proc_map_parse(line, &pm) || !proc_map_is_anon_exec(&pm) ||
		    in_modules(&files, pm.start, pm.end))
			continue;
		m = list_add(l);
		if (!m)
			break;
		m->kind = RAW_MODULE_ANON;
		m->base = 0;
		m->path = strdup(pm.path[0] ? pm.path : "[anon]");
		m->nsegs = 1;
		m->segs[0].start = pm.start;
		m->segs[0].size = pm.end - pm.start;
		m->segs[0].file_offset = 0;
		m->segs[0].prot = pm.prot;
		if (!m->path)
			l->n--;
	}
	fclose(f);
}

static bool same_module(const struct module *a, const struct module *b)
{
	return a->kind == b->kind && a->base == b->base && a->segs[0].start == b->segs[0].start &&
	       a->segs[0].size == b->segs[0].size && !strcmp(a->path, b->path);
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
 * difference: MODULE_LOAD for each new object, MODULE_UNLOAD for each one gone. Called at
 * start, after fork, and after each dlopen/dlclose; never in the handler.
 */
void agent_modules_scan(void)
{
	AGENT_BUSY;
	struct module_list now = { 0 };
	struct raw_writer *w;
	bool *seen = NULL;
	sigset_t old, outer;
	size_t i, j;

	if (!agent.active)
		return;
	/*
	 * No sample of this thread while it scans: it mallocs and frees, and a handler that
	 * unwinds while this thread holds an arena lock can deadlock with a dlclose() in another
	 * thread (loader lock, then that arena) and the unwinder's lock a third one holds.
	 */
	agent_block_sampling(&outer);
	pthread_mutex_lock(&agent.lock);
	agent_in_dl++;
	agent_real.dl_iterate_phdr(phdr_cb, &now);
	agent_in_dl--;
	scan_anon(&now);
	seen = calloc(known.n + 1, sizeof(*seen));
	if (!seen)
		goto out;
	w = agent_proc_begin(&old);
	for (i = 0; i < now.n; i++) {
		for (j = 0; j < known.n; j++)
			if (!seen[j] && same_module(&now.v[i], &known.v[j]))
				break;
		if (j < known.n) {
			seen[j] = true;
			continue;
		}
		if (w)
			write_load(w, &now.v[i]);
		if (now.v[i].kind == RAW_MODULE_FILE)
			agent_python_module(now.v[i].path, now.v[i].base);
	}
	for (j = 0; w && j < known.n; j++)
		if (!seen[j])
			raw_writer_module_unload(w, raw_header_now(&agent.proc.hdr),
						 known.v[j].base, known.v[j].path);
	agent_proc_end(&old);
	list_release(&known);
	known = now;
	now.v = NULL;
	now.n = now.cap = 0;
	agent_python_modules_done();
out:
	free(seen);
	list_release(&now);
	pthread_mutex_unlock(&agent.lock);
	agent_restore_mask(&outer);
	if (agent.cfg.memory)
		mem_python_resolve();
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
		agent_modules_scan();
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
		agent_modules_scan();
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
		agent_modules_scan();
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
