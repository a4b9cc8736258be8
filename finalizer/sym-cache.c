/* SPDX-License-Identifier: MIT */
/* The per-build-id symbol cache: a small binary file of address -> frame chains. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "finalizer/hash-index.h"
#include "finalizer/sym-cache.h"

/*
 * File: "PCSYMC2\n", u32 flags (1: inline chains), strings resolved_path, debug_path, symbols,
 * u64 count, then count entries sorted by address:
 *   u64 addr, u32 nframes, nframes * { str name, str mangled, str decl_file, u32 decl_line,
 *   str file, u32 line, u8 resolved }
 * A string is u32 length then bytes; length 0xffffffff stands for NULL. Native byte order:
 * the cache belongs to one machine.
 */
#define CACHE_MAGIC "PCSYMC2\n" /* 2: source paths cleaned, DWARF 5 file 0 fixed */
#define NULL_STR    0xffffffffu
#define FLAG_INLINE 1u

const char *sym_cache_dir(char *buf, size_t size)
{
	const char *v = getenv("PCOLLECT_NO_CACHE");

	if (v && *v && strcmp(v, "0"))
		return NULL;
	if ((v = getenv("PCOLLECT_CACHE_DIR")) && *v)
		snprintf(buf, size, "%s", v);
	else if ((v = getenv("XDG_CACHE_HOME")) && *v)
		snprintf(buf, size, "%s/pcollect", v);
	else if ((v = getenv("HOME")) && *v)
		snprintf(buf, size, "%s/.cache/pcollect", v);
	else
		return NULL;
	return buf;
}

struct rd {
	const uint8_t *p, *end;
	bool bad;
};

static uint64_t rd_u(struct rd *r, size_t n)
{
	uint64_t v = 0;

	if ((size_t)(r->end - r->p) < n) {
		r->bad = true;
		return 0;
	}
	memcpy(&v, r->p, n); /* little-endian hosts only write and read this */
	r->p += n;
	return v;
}

/* A string: its bytes stay in the file buffer; *len NULL_STR for NULL. */
static const char *rd_str(struct rd *r, uint32_t *len)
{
	const char *s;

	*len = (uint32_t)rd_u(r, 4);
	if (r->bad || *len == NULL_STR)
		return NULL;
	if ((size_t)(r->end - r->p) < *len) {
		r->bad = true;
		return NULL;
	}
	s = (const char *)r->p;
	r->p += *len;
	return s;
}

struct cache_file {
	uint8_t *data;
	size_t size;
	uint32_t flags;
	const uint8_t *entries; /* start of the entries */
	uint64_t count;
	const uint8_t **at; /* entry i's start; sorted by address */
	uint64_t *addr;
};

static void cache_file_free(struct cache_file *c)
{
	free(c->data);
	free(c->at);
	free(c->addr);
	memset(c, 0, sizeof(*c));
}

static void skip_frames(struct rd *r, uint32_t n)
{
	uint32_t k, len;

	for (k = 0; k < n && !r->bad; k++) {
		rd_str(r, &len);
		rd_str(r, &len);
		rd_str(r, &len);
		rd_u(r, 4);
		rd_str(r, &len);
		rd_u(r, 4);
		rd_u(r, 1);
	}
}

/* mkdir -p: ~/.cache itself may not exist yet. */
static void mkdir_parents(const char *dir)
{
	char p[4096];
	size_t i;

	snprintf(p, sizeof(p), "%s", dir);
	for (i = 1; p[i]; i++) {
		if (p[i] == '/') {
			p[i] = '\0';
			mkdir(p, 0700);
			p[i] = '/';
		}
	}
	mkdir(p, 0700);
}

static int cache_path(char *buf, size_t size, const struct module *m, const struct resolve_opts *o)
{
	if (snprintf(buf, size, "%s/%s.sym", o->cache_dir, m->build_id_hex) >= (int)size)
		return -ENAMETOOLONG;
	return 0;
}

static int cache_file_read(struct cache_file *c, const char *path)
{
	struct rd r;
	FILE *f;
	struct stat st;
	uint32_t len;
	uint64_t i;

	memset(c, 0, sizeof(*c));
	f = fopen(path, "rb");
	if (!f)
		return -errno;
	if (fstat(fileno(f), &st) || st.st_size < 16 || st.st_size > (1LL << 31)) {
		fclose(f);
		return -EINVAL;
	}
	c->size = (size_t)st.st_size;
	c->data = malloc(c->size);
	if (!c->data || fread(c->data, 1, c->size, f) != c->size) {
		fclose(f);
		cache_file_free(c);
		return -EIO;
	}
	fclose(f);
	if (memcmp(c->data, CACHE_MAGIC, 8))
		goto bad;
	r.p = c->data + 8;
	r.end = c->data + c->size;
	r.bad = false;
	c->flags = (uint32_t)rd_u(&r, 4);
	rd_str(&r, &len);
	rd_str(&r, &len);
	rd_str(&r, &len);
	c->count = rd_u(&r, 8);
	if (r.bad || c->count > c->size)
		goto bad;
	c->entries = r.p;
	c->at = malloc((c->count ? c->count : 1) * sizeof(*c->at));
	c->addr = malloc((c->count ? c->count : 1) * sizeof(*c->addr));
	if (!c->at || !c->addr)
		goto bad;
	for (i = 0; i < c->count && !r.bad; i++) {
		c->at[i] = r.p;
		c->addr[i] = rd_u(&r, 8);
		skip_frames(&r, (uint32_t)rd_u(&r, 4));
		if (i && c->addr[i] <= c->addr[i - 1])
			r.bad = true;
	}
	if (r.bad)
		goto bad;
	return 0;
bad:
	cache_file_free(c);
	return -EINVAL;
}

static int64_t cache_find(const struct cache_file *c, uint64_t addr)
{
	size_t lo = 0, hi = c->count;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (c->addr[mid] < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < c->count && c->addr[lo] == addr ? (int64_t)lo : -1;
}

static const char *pool_str(struct module *m, const char *s, uint32_t len, bool *oom)
{
	int64_t id;

	if (!s)
		return NULL;
	id = str_pool_intern_len(&m->pool, s, len);
	if (id < 0) {
		*oom = true;
		return NULL;
	}
	return m->pool.strs[id];
}

int sym_cache_load(struct module *m, const struct resolve_opts *o)
{
	struct cache_file c;
	char path[4096];
	struct rd r;
	uint32_t len;
	const char *s;
	bool oom = false;
	size_t i;

	if (cache_path(path, sizeof(path), m, o) || cache_file_read(&c, path))
		return -ENOENT;
	if (((c.flags & FLAG_INLINE) != 0) != o->inline_chains)
		goto miss;
	for (i = 0; i < m->naddrs; i++)
		if (cache_find(&c, m->addrs[i]) < 0)
			goto miss;
	r.p = c.data + 12;
	r.end = c.data + c.size;
	r.bad = false;
	s = rd_str(&r, &len);
	m->resolved_path = s ? strndup(s, len) : NULL;
	s = rd_str(&r, &len);
	m->debug_path = s ? strndup(s, len) : NULL;
	s = rd_str(&r, &len);
	m->symbols = pool_str(m, s, len, &oom);
	m->status = "ok";
	m->found_in = "cache";
	for (i = 0; i < m->naddrs && !oom; i++) {
		uint32_t n, k;

		r.p = c.at[cache_find(&c, m->addrs[i])];
		rd_u(&r, 8);
		n = (uint32_t)rd_u(&r, 4);
		m->first[i] = (uint32_t)m->nframes;
		m->count[i] = n;
		if (array_reserve(&m->frames, &m->fcap, m->nframes + n, sizeof(*m->frames))) {
			oom = true;
			break;
		}
		for (k = 0; k < n; k++) {
			struct sym_frame *f = &m->frames[m->nframes++];

			s = rd_str(&r, &len);
			f->name = pool_str(m, s, len, &oom);
			s = rd_str(&r, &len);
			f->mangled = pool_str(m, s, len, &oom);
			s = rd_str(&r, &len);
			f->decl_file = pool_str(m, s, len, &oom);
			f->decl_line = (uint32_t)rd_u(&r, 4);
			s = rd_str(&r, &len);
			f->file = pool_str(m, s, len, &oom);
			f->line = (uint32_t)rd_u(&r, 4);
			f->resolved = rd_u(&r, 1) != 0;
			if (!f->name)
				oom = true;
		}
		if (n && m->frames[m->first[i]].resolved)
			m->addrs_resolved++;
		if (n && m->frames[m->first[i] + n - 1].file)
			m->addrs_with_line++;
	}
	cache_file_free(&c);
	if (oom || r.bad) {
		/* Undo: the caller resolves from the files instead. */
		free(m->resolved_path);
		free(m->debug_path);
		m->resolved_path = m->debug_path = NULL;
		m->nframes = 0;
		m->addrs_resolved = m->addrs_with_line = 0;
		m->symbols = "none";
		m->status = "missing";
		m->found_in = NULL;
		return -ENOENT;
	}
	return 0;
miss:
	cache_file_free(&c);
	return -ENOENT;
}

struct wbuf {
	uint8_t *p;
	size_t n, cap;
	bool oom;
};

static void w_bytes(struct wbuf *w, const void *d, size_t n)
{
	if (w->oom || array_reserve(&w->p, &w->cap, w->n + n, 1)) {
		w->oom = true;
		return;
	}
	memcpy(w->p + w->n, d, n);
	w->n += n;
}

static void w_u32(struct wbuf *w, uint32_t v)
{
	w_bytes(w, &v, 4);
}

static void w_str(struct wbuf *w, const char *s)
{
	if (!s) {
		w_u32(w, NULL_STR);
		return;
	}
	w_u32(w, (uint32_t)strlen(s));
	w_bytes(w, s, strlen(s));
}

static void w_entry(struct wbuf *w, const struct module *m, size_t i)
{
	uint32_t k;
	uint8_t res;

	w_bytes(w, &m->addrs[i], 8);
	w_u32(w, m->count[i]);
	for (k = 0; k < m->count[i]; k++) {
		const struct sym_frame *f = &m->frames[m->first[i] + k];

		w_str(w, f->name);
		w_str(w, f->mangled);
		w_str(w, f->decl_file);
		w_u32(w, f->decl_line);
		w_str(w, f->file);
		w_u32(w, f->line);
		res = f->resolved;
		w_bytes(w, &res, 1);
	}
}

int sym_cache_store(struct module *m, const struct resolve_opts *o)
{
	struct cache_file old;
	struct wbuf w = { 0 };
	char path[4096], tmp[4200];
	uint64_t count = 0, i, j;
	size_t count_at;
	int fd, ret = 0;
	bool have_old;

	/* Only DWARF answers are worth keeping (see the header). */
	if (strcmp(m->symbols, "dwarf") || cache_path(path, sizeof(path), m, o))
		return 0;
	have_old = !cache_file_read(&old, path);
	if (have_old && ((old.flags & FLAG_INLINE) != 0) != o->inline_chains) {
		/* Made in the other mode: replaced, not merged. */
		cache_file_free(&old);
		have_old = false;
	}
	w_bytes(&w, CACHE_MAGIC, 8);
	w_u32(&w, o->inline_chains ? FLAG_INLINE : 0);
	w_str(&w, m->resolved_path);
	w_str(&w, m->debug_path);
	w_str(&w, m->symbols);
	count_at = w.n;
	w_bytes(&w, &count, 8);
	/* Merge the sorted new and old entries; new ones win. */
	for (i = 0, j = 0; i < m->naddrs || (have_old && j < old.count);) {
		if (i < m->naddrs && (!have_old || j >= old.count || m->addrs[i] <= old.addr[j])) {
			if (have_old && j < old.count && old.addr[j] == m->addrs[i])
				j++;
			w_entry(&w, m, i++);
		} else {
			const uint8_t *end =
				j + 1 < old.count ? old.at[j + 1] : old.data + old.size;

			w_bytes(&w, old.at[j], (size_t)(end - old.at[j]));
			j++;
		}
		count++;
	}
	if (have_old)
		cache_file_free(&old);
	if (w.oom) {
		free(w.p);
		return -ENOMEM;
	}
	memcpy(w.p + count_at, &count, 8);
	mkdir_parents(o->cache_dir);
	snprintf(tmp, sizeof(tmp), "%s.tmp.%ld.%p", path, (long)getpid(), (void *)m);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		ret = -errno;
	} else {
		size_t off = 0;

		while (off < w.n) {
			ssize_t k = write(fd, w.p + off, w.n - off);

			if (k < 0) {
				ret = -errno;
				break;
			}
			off += (size_t)k;
		}
		close(fd);
		if (!ret && rename(tmp, path))
			ret = -errno;
		if (ret)
			unlink(tmp);
	}
	free(w.p);
	return ret;
}
