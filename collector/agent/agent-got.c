/* SPDX-License-Identifier: MIT */
/* An attached agent's interposition: the modules' GOT entries pointed at the agent's functions. */
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "collector/agent/agent-private.h"
#include "common/grow.h"

/*
 * Preloaded, the agent's definitions of pthread_create, dlopen, execve, sigaction and the
 * rest come first in every lookup. Loaded into a running process, they come last: every
 * module's calls are bound to the C library's already. So, as a debugger's or tracer's
 * "PLT hook" does, pcollect_attach() writes the addresses of our functions into the GOT
 * entries through which each module calls those (R_X86_64_JUMP_SLOT, and R_X86_64_GLOB_DAT
 * for code built with -fno-plt), and the detach writes back what was there. Our functions
 * call what the program would have called (agent_resolve(): RTLD_DEFAULT when attached).
 *
 * Left alone: the agent itself, the C library and the loader (their internal calls are not
 * made through a GOT, preloaded or not), the vdso, and sanitizer runtimes (whose interceptors
 * the program's calls reach first and which then call the C library's). A GOT protected by
 * RELRO is made writable for the store and read-only again.
 *
 * The agent is linked with -Bsymbolic-functions, so that &pthread_create below, and its own
 * calls such as execv() -> execve(), are its own functions, preloaded or loaded last.
 */

struct got_hook {
	const char *name;
	void *fn;
};

/* What the preloaded agent interposes (each is documented where it is defined). */
static const struct got_hook hooks[] = {
	{ "sigaction", (void *)sigaction },
	{ "signal", (void *)signal },
	{ "sigprocmask", (void *)sigprocmask },
	{ "pthread_sigmask", (void *)pthread_sigmask },
	{ "pthread_create", (void *)pthread_create },
	{ "pthread_setname_np", (void *)pthread_setname_np },
	{ "pthread_exit", (void *)pthread_exit },
	{ "prctl", (void *)prctl },
	{ "dlopen", (void *)dlopen },
	{ "dlmopen", (void *)dlmopen },
	{ "dlclose", (void *)dlclose },
	{ "dl_iterate_phdr", (void *)dl_iterate_phdr },
	{ "execve", (void *)execve },
	{ "execv", (void *)execv },
	{ "execvp", (void *)execvp },
	{ "execvpe", (void *)execvpe },
	{ "execl", (void *)execl },
	{ "execlp", (void *)execlp },
	{ "execle", (void *)execle },
	{ "fexecve", (void *)fexecve },
	{ "posix_spawn", (void *)posix_spawn },
	{ "posix_spawnp", (void *)posix_spawnp },
	{ "_exit", (void *)_exit },
	{ "_Exit", (void *)_Exit },
	{ "mmap", (void *)mmap },
	{ "mprotect", (void *)mprotect },
	{ "close", (void *)close },
	{ "close_range", (void *)close_range },
	{ "closefrom", (void *)closefrom },
	{ "dup2", (void *)dup2 },
	{ "dup3", (void *)dup3 },
	{ "pipe", (void *)pipe },
	{ "pipe2", (void *)pipe2 },
	{ "read", (void *)read },
	{ "sigtimedwait", (void *)sigtimedwait },
	{ "sigwaitinfo", (void *)sigwaitinfo },
	{ "sigwait", (void *)sigwait },
	{ "signalfd", (void *)signalfd },
};

/* One entry we changed: where, what was there, and in which module (to put it back). */
struct got_entry {
	void **slot;
	void *orig;
	void *ours;
	bool relro;    /* in the module's read-only-after-relocation part */
	uint64_t base; /* the module's load bias */
	char *module;  /* its name as the loader lists it */
};

/* A module looked at, so that a later pass skips it. */
struct got_module {
	uint64_t base;
	char *name;
	ssize_t first; /* its first entry, or -1: nothing to change in it */
};

static pthread_mutex_t got_lock = PTHREAD_MUTEX_INITIALIZER;
static struct got_entry *entries;
static size_t nentries, entries_cap;
static struct got_module *modules;
static size_t nmodules, modules_cap;

static const struct got_hook *hook_find(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(hooks) / sizeof(hooks[0]); i++)
		if (!strcmp(hooks[i].name, name))
			return &hooks[i];
	return NULL;
}

static bool left_alone(const struct dl_phdr_info *info)
{
	static const char *const names[] = { "libc.so",     "ld-linux",  "ld64.so",  "libasan",
					     "libhwasan",   "libtsan",   "libubsan", "liblsan",
					     "libclang_rt", "linux-vdso" };
	Dl_info self;
	const char *base;
	size_t i;

	if (info->dlpi_addr && info->dlpi_addr == getauxval(AT_SYSINFO_EHDR))
		return true;
	if (dladdr((void *)agent_got_patch, &self) && (uint64_t)self.dli_fbase == info->dlpi_addr)
		return true;
	base = strrchr(info->dlpi_name ? info->dlpi_name : "", '/');
	base = base ? base + 1 : (info->dlpi_name ? info->dlpi_name : "");
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strncmp(base, names[i], strlen(names[i])))
			return true;
	return false;
}

/* A page-aligned range of a module's read-only-after-relocation part, or lo == hi. */
struct relro {
	uintptr_t lo, hi;
};

static int slot_store(void **slot, void *value, bool relro)
{
	uintptr_t page = (uintptr_t)slot & ~(uintptr_t)(getpagesize() - 1);
	size_t len = (size_t)getpagesize();

	if (relro && agent_real.mprotect((void *)page, len, PROT_READ | PROT_WRITE))
		return -errno;
	__atomic_store_n(slot, value, __ATOMIC_RELEASE);
	if (relro && agent_real.mprotect((void *)page, len, PROT_READ))
		agent_log("cannot make a GOT page read-only again at %p", (void *)page);
	return 0;
}

static void patch_relocs(const struct dl_phdr_info *info, const ElfW(Rela) * rel, size_t size,
			 const ElfW(Sym) * symtab, const char *strtab, size_t strsz,
			 struct relro ro)
{
	size_t i, n = size / sizeof(*rel);

	for (i = 0; i < n; i++) {
		uint32_t type = ELF64_R_TYPE(rel[i].r_info);
		const ElfW(Sym) *sym = &symtab[ELF64_R_SYM(rel[i].r_info)];
		const struct got_hook *h;
		struct got_entry *e;
		void **slot;

		if ((type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT) ||
		    !ELF64_R_SYM(rel[i].r_info) || sym->st_shndx != SHN_UNDEF ||
		    sym->st_name >= strsz || !(h = hook_find(strtab + sym->st_name)))
			continue;
		slot = (void **)(info->dlpi_addr + rel[i].r_offset);
		if (*slot == h->fn || GROW(entries, nentries + 1, entries_cap))
			continue;
		e = &entries[nentries];
		e->slot = slot;
		e->orig = *slot;
		e->ours = h->fn;
		e->relro = (uintptr_t)slot >= ro.lo && (uintptr_t)slot < ro.hi;
		e->base = info->dlpi_addr;
		e->module = strdup(info->dlpi_name ? info->dlpi_name : "");
		if (!e->module || slot_store(slot, h->fn, e->relro)) {
			free(e->module);
			continue;
		}
		nentries++;
	}
}

static void patch_module(const struct dl_phdr_info *info)
{
	const ElfW(Dyn) *dyn = NULL;
	const ElfW(Sym) *symtab = NULL;
	const char *strtab = NULL;
	const ElfW(Rela) *jmprel = NULL, *rela = NULL;
	size_t strsz = 0, jmpsz = 0, relasz = 0, page = (size_t)getpagesize();
	struct relro ro = { 0, 0 };
	int i;

	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_DYNAMIC)
			dyn = (const ElfW(Dyn) *)(info->dlpi_addr + ph->p_vaddr);
		if (ph->p_type == PT_GNU_RELRO) {
			/* The loader makes the whole pages of it read-only, not a partial last. */
			ro.lo = (info->dlpi_addr + ph->p_vaddr) & ~(page - 1);
			ro.hi = (info->dlpi_addr + ph->p_vaddr + ph->p_memsz) & ~(page - 1);
		}
	}
	for (; dyn && dyn->d_tag != DT_NULL; dyn++) {
		switch (dyn->d_tag) {
		case DT_SYMTAB:
			symtab =
				(const ElfW(Sym) *)agent_dyn_addr(info->dlpi_addr, dyn->d_un.d_ptr);
			break;
		case DT_STRTAB:
			strtab = (const char *)agent_dyn_addr(info->dlpi_addr, dyn->d_un.d_ptr);
			break;
		case DT_STRSZ:
			strsz = dyn->d_un.d_val;
			break;
		case DT_JMPREL:
			jmprel = (const ElfW(Rela) *)agent_dyn_addr(info->dlpi_addr,
								    dyn->d_un.d_ptr);
			break;
		case DT_PLTRELSZ:
			jmpsz = dyn->d_un.d_val;
			break;
		case DT_RELA:
			rela = (const ElfW(Rela) *)agent_dyn_addr(info->dlpi_addr, dyn->d_un.d_ptr);
			break;
		case DT_RELASZ:
			relasz = dyn->d_un.d_val;
			break;
		}
	}
	if (!symtab || !strtab)
		return;
	if (jmprel)
		patch_relocs(info, jmprel, jmpsz, symtab, strtab, strsz, ro);
	if (rela)
		patch_relocs(info, rela, relasz, symtab, strtab, strsz, ro);
}

/* Seen before, and still as we left it (a module loaded again at the same place is not). */
static bool module_done(const struct dl_phdr_info *info)
{
	size_t i;

	for (i = 0; i < nmodules; i++) {
		const struct got_module *m = &modules[i];

		if (m->base != info->dlpi_addr || strcmp(m->name, info->dlpi_name))
			continue;
		return m->first < 0 || *entries[m->first].slot == entries[m->first].ours;
	}
	return false;
}

static int patch_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	size_t before = nentries;
	struct got_module *m;

	(void)size;
	(void)data;
	if (!info->dlpi_name || left_alone(info) || module_done(info))
		return 0;
	patch_module(info);
	if (GROW(modules, nmodules + 1, modules_cap))
		return 0;
	m = &modules[nmodules];
	m->base = info->dlpi_addr;
	m->name = strdup(info->dlpi_name);
	m->first = nentries > before ? (ssize_t)before : -1;
	if (m->name)
		nmodules++;
	return 0;
}

void agent_got_patch(void)
{
	/* Preloaded (idle until now), the loader made our functions the first already. */
	if (dlsym(RTLD_DEFAULT, "pthread_create") == (void *)pthread_create)
		return;
	pthread_mutex_lock(&got_lock);
	agent_in_dl++;
	agent_real.dl_iterate_phdr(patch_cb, NULL);
	agent_in_dl--;
	pthread_mutex_unlock(&got_lock);
}

/* The modules loaded now, to put back only entries of a module still there. */
static int loaded_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	const struct got_entry *e = data;

	(void)size;
	return info->dlpi_addr == e->base && info->dlpi_name && !strcmp(info->dlpi_name, e->module);
}

void agent_got_restore(void)
{
	size_t i;

	pthread_mutex_lock(&got_lock);
	/* Newest first: a slot changed twice gets its oldest value last. */
	for (i = nentries; i-- > 0;) {
		struct got_entry *e = &entries[i];

		if (agent_real.dl_iterate_phdr(loaded_cb, e) && *e->slot == e->ours)
			slot_store(e->slot, e->orig, e->relro);
		free(e->module);
	}
	for (i = 0; i < nmodules; i++)
		free(modules[i].name);
	free(entries);
	free(modules);
	entries = NULL;
	modules = NULL;
	nentries = entries_cap = nmodules = modules_cap = 0;
	pthread_mutex_unlock(&got_lock);
}
