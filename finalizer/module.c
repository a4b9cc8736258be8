/* SPDX-License-Identifier: MIT */
/* A module: the addresses and objects wanted of it, and module_resolve(), which chooses how to
   name them (symbol cache, vdso, placeholders, or its files). */
#define LOG_DOMAIN "module"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/elf-note.h"
#include "common/grow.h"
#include "common/hash.h"
#include "common/log.h"
#include "finalizer/module-private.h"
#include "finalizer/str-pool.h"
#include "finalizer/sym-cache.h"
#include "finalizer/sorted.h"

int module_init(struct module *m, const struct raw_module *rm)
{
	const char *slash;

	memset(m, 0, sizeof(*m));
	m->path = str_dup_mem(rm->path, rm->path_len);
	if (!m->path)
		return -ENOMEM;
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

	FREE_ALL(m->path, m->addrs, m->wanted, m->objs, m->obj_names, m->spin_code, m->first,
		 m->count, m->frames, m->resolved_path, m->debug_path, m->mismatch_path,
		 m->dwarf_error);
	str_pool_release(&m->pool);
	for (i = 0; i < m->nmore_pools; i++)
		str_pool_release(&m->more_pools[i]);
	free(m->more_pools);
	memset(m, 0, sizeof(*m));
}

/*
 * Every frame of every located stack asks for its address, most of them asked before: the
 * interpreter loop under each of a Python program's stacks, an allocation's callers under each
 * of its call sites. A direct-mapped table of the addresses added lately keeps the repeats out
 * (module_resolve() would sort them away), so the list is about as long as the distinct
 * addresses, not as all frames.
 */
#define MODULE_WANTED 4096

int module_want(struct module *m, uint64_t addr)
{
	uint64_t *slot;

	if (!m->wanted) {
		m->wanted = calloc(MODULE_WANTED, sizeof(*m->wanted));
		if (!m->wanted)
			return -ENOMEM;
	}
	slot = &m->wanted[hash_mix(addr) & (MODULE_WANTED - 1)];
	if (*slot == addr + 1)
		return 0;
	if (array_reserve(&m->addrs, &m->cap, m->naddrs + 1, sizeof(*m->addrs)))
		return -ENOMEM;
	m->addrs[m->naddrs++] = addr;
	*slot = addr + 1;
	return 0;
}

int module_want_object(struct module *m, uint64_t addr)
{
	if (GROW(m->objs, m->nobjs + 1, m->objs_cap))
		return -ENOMEM;
	m->objs[m->nobjs++] = addr;
	return 0;
}

int64_t module_addr_index(const struct module *m, uint64_t addr)
{
	return sorted_index(m->addrs, m->naddrs, addr);
}

const char *module_object_name(const struct module *m, uint64_t addr)
{
	int64_t i = m->obj_names ? sorted_index(m->objs, m->nobjs, addr) : -1;

	return i >= 0 ? m->obj_names[i] : NULL;
}

/* Below this many values, qsort: the radix sort's 512 KiB of counts, cleared at every
   pass, cost more than the comparisons (a small result's module has a few hundred ips). */
#define U64_RADIX_MIN 16384

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
	if (n < U64_RADIX_MIN) {
		qsort(v, n, sizeof(*v), sorted_u64_cmp);
		return 0;
	}
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

int module_sort_unique(uint64_t *v, size_t *n)
{
	size_t i, k;

	if (u64_sort(v, *n))
		return -ENOMEM;
	for (i = 0, k = 0; i < *n; i++)
		if (!k || v[k - 1] != v[i])
			v[k++] = v[i];
	*n = k;
	return 0;
}

int module_resolve(struct module *m, const struct resolve_opts *o)
{
	struct timespec t0, t1;
	int ret;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (module_sort_unique(m->addrs, &m->naddrs))
		return -ENOMEM;
	m->first = calloc(m->naddrs ? m->naddrs : 1, sizeof(*m->first));
	m->count = calloc(m->naddrs ? m->naddrs : 1, sizeof(*m->count));
	if (!m->first || !m->count)
		return -ENOMEM;
	if (o->cache_dir && m->build_id_len && sym_cache_load(m, o) == 0) {
		struct elf_file f;

		log_debug("'%s': %zu addresses from the symbol cache in '%s'", m->path, m->naddrs,
			  o->cache_dir);
		/* The cache keeps no file path (one in another result's archive would outlive
		   it): the module's file is where this result finds it, if anywhere. */
		if (module_find_file(m, o, &f)) {
			free(m->resolved_path);
			m->resolved_path = strdup(f.path);
			elf_file_close(&f);
		}
		m->found_in = "cache";
		m->from_cache = true;
		ret = 0;
	} else if (m->kind == RAW_MODULE_VDSO) {
		ret = module_resolve_vdso(m);
	} else if (m->kind == RAW_MODULE_ANON || m->path[0] != '/') {
		log_debug("'%s': %s: placeholder names", m->path,
			  m->kind == RAW_MODULE_ANON ? "anonymous executable memory (JIT code)"
						     : "no file path");
		m->status = "ok";
		ret = module_resolve_placeholders(m);
	} else {
		ret = module_resolve_file(m, o);
		if (!ret && o->cache_dir && m->build_id_len && m->naddrs &&
		    !strcmp(m->status, "ok"))
			sym_cache_store(m, o); /* best effort */
	}
	if (!ret && m->nobjs)
		ret = module_resolve_objects(m, o);
	if (!ret && m->want_spin_code)
		ret = module_find_spin_code(m, o);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	m->seconds = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	return ret;
}
