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

#include "finalizer/eh-frame.h"
#include "finalizer/pymethod-table.h"
#include "common/hash-index.h"
#include "common/io.h"
#include "finalizer/sym-cache.h"
#include "finalizer/sorted.h"

/*
 * File: "PCSYMC8\n", u32 flags (1: inline chains), strings resolved_path (always NULL: the
 * module's file is found again by each result, module_resolve()), debug_path (NULL when it
 * was inside a result directory, whose archive another result cannot count on), symbols,
 * u64 count, then count entries sorted by address:
 *   u64 addr, u32 nframes, nframes * { str name, str mangled, str decl_file, u32 decl_line,
 *   str file, u32 line, u8 kind (bit 0: resolved, bit 1: range, bit 2: a method named from the
 *   method tables) }
 * A string is u32 length then bytes; length 0xffffffff stands for NULL. Native byte order:
 * the cache belongs to one machine.
 *
 * Beside it, <build-id>.fde holds the module's FDE ranges: "PCFDE01\n", u32 source (enum
 * fde_source), u64 count, then count * { u64 start, u64 end }; and <build-id>.pym its Python
 * method tables (finalizer/pymethod-table.h): "PCPYM01\n", str path (the file they were read
 * from: an extension's names are qualified by its directories), u64 count, then count *
 * { u64 addr, u32 rank, str name }.
 */
/*
 * 8: the method tables' lone entries (Cython's functions) and arrays an owner points inside;
 * 7: Python methods named from the method tables; 6: gcc's outlined OpenMP functions given
 * their first line as their definition line (the directive's); 5: PLT stubs and the entry
 * named; 4: no paths into a result's archive; 3: FDE ranges; 2: source paths cleaned, DWARF 5
 * file 0
 */
#define CACHE_MAGIC  "PCSYMC8\n"
#define RANGES_MAGIC "PCFDE01\n"
/* a change to how finalizer/pymethod-table.c reads or names the tables bumps it, as it bumps
   CACHE_MAGIC for the .sym files (whose frames hold those names) */
#define METHODS_MAGIC "PCPYM01\n"
#define NULL_STR      0xffffffffu
#define FLAG_INLINE   1u
#define KIND_RESOLVED 1u
#define KIND_RANGE    2u
#define KIND_METHOD   4u

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

/* The whole file at path (16 bytes to 2 GiB) in a new buffer *data (caller frees). */
static int read_file(const char *path, uint8_t **data, size_t *size)
{
	struct stat st;
	FILE *f;

	*data = NULL;
	f = fopen(path, "rb");
	if (!f)
		return -errno;
	if (fstat(fileno(f), &st) || st.st_size < 16 || st.st_size > (1LL << 31)) {
		fclose(f);
		return -EINVAL;
	}
	*size = (size_t)st.st_size;
	*data = malloc(*size);
	if (!*data || fread(*data, 1, *size, f) != *size) {
		fclose(f);
		free(*data);
		*data = NULL;
		return -EIO;
	}
	fclose(f);
	return 0;
}

static int cache_file_read(struct cache_file *c, const char *path)
{
	struct rd r;
	uint32_t len;
	uint64_t i;
	int ret;

	memset(c, 0, sizeof(*c));
	if ((ret = read_file(path, &c->data, &c->size)))
		return ret;
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
	return sorted_index(c->addr, c->count, addr);
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
	rd_str(&r, &len); /* resolved_path: NULL since version 4 */
	s = rd_str(&r, &len);
	m->debug_path = s ? strndup(s, len) : NULL;
	/* A debug file gone since (or a foreign one) names nothing. */
	if (m->debug_path && access(m->debug_path, R_OK)) {
		free(m->debug_path);
		m->debug_path = NULL;
	}
	s = rd_str(&r, &len);
	m->symbols = pool_str(m, s, len, &oom);
	m->status = "ok";
	m->found_in = "cache";
	for (i = 0; i < m->naddrs && !oom; i++) {
		uint32_t n, k;
		uint8_t kind;

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
			kind = (uint8_t)rd_u(&r, 1);
			f->resolved = (kind & KIND_RESOLVED) != 0;
			f->range = (kind & KIND_RANGE) != 0;
			f->method = (kind & KIND_METHOD) != 0;
			if (!f->name)
				oom = true;
		}
		if (n && m->frames[m->first[i]].resolved)
			m->addrs_resolved++;
		else if (n && m->frames[m->first[i]].range)
			m->addrs_ranged++;
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
		m->addrs_resolved = m->addrs_ranged = m->addrs_with_line = 0;
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
	uint8_t kind;

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
		kind = (f->resolved ? KIND_RESOLVED : 0) | (f->range ? KIND_RANGE : 0) |
		       (f->method ? KIND_METHOD : 0);
		w_bytes(w, &kind, 1);
	}
}

/* Write p[0..n) to path through a temporary file renamed over it: readers see all or none. */
static int write_file(const char *dir, const char *path, const void *p, size_t n, const void *tag)
{
	char tmp[4200];
	int fd, ret = 0;

	mkdir_parents(dir);
	snprintf(tmp, sizeof(tmp), "%s.tmp.%ld.%p", path, (long)getpid(), tag);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	ret = io_write_all(fd, p, n);
	close(fd);
	if (!ret && rename(tmp, path))
		ret = -errno;
	if (ret)
		unlink(tmp);
	return ret;
}

/* Whether path lies inside dir (a result's archive, which a later result cannot count on). */
static bool inside(const char *dir, const char *path)
{
	size_t n = dir ? strlen(dir) : 0;

	while (n > 1 && dir[n - 1] == '/')
		n--;
	return dir && path && !strncmp(path, dir, n) && path[n] == '/';
}

int sym_cache_store(struct module *m, const struct resolve_opts *o)
{
	struct cache_file old;
	struct wbuf w = { 0 };
	char path[4096];
	uint64_t count = 0, i, j;
	size_t count_at;
	int ret;
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
	w_str(&w, NULL);
	w_str(&w, inside(o->result_dir, m->debug_path) ? NULL : m->debug_path);
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
	ret = write_file(o->cache_dir, path, w.p, w.n, m);
	free(w.p);
	return ret;
}

/* <cache_dir>/<build-id>.<ext>: a file of m's build-id beside its .sym. 0 or -ENAMETOOLONG. */
static int side_path(char *path, size_t size, const struct module *m, const struct resolve_opts *o,
		     const char *ext)
{
	return snprintf(path, size, "%s/%s.%s", o->cache_dir, m->build_id_hex, ext) >= (int)size
		       ? -ENAMETOOLONG
		       : 0;
}

/* Start w as a side file of m's build-id: path filled, its magic written. */
static int side_begin(struct wbuf *w, char *path, size_t size, const struct module *m,
		      const struct resolve_opts *o, const char *ext, const char *magic)
{
	memset(w, 0, sizeof(*w));
	w_bytes(w, magic, 8);
	return side_path(path, size, m, o, ext);
}

/* Write what w holds as path, and free it. */
static int side_write(struct wbuf *w, const char *path, const struct module *m,
		      const struct resolve_opts *o)
{
	int ret = w->oom ? -ENOMEM : write_file(o->cache_dir, path, w->p, w->n, m);

	free(w->p);
	return ret;
}

int sym_cache_load_ranges(const struct module *m, const struct resolve_opts *o, struct fde_table *t)
{
	char path[4096];
	struct fde_range *v = NULL;
	uint64_t count, i;
	uint32_t source;
	struct rd r;
	uint8_t *data;
	size_t size;

	if (side_path(path, sizeof(path), m, o, "fde") || read_file(path, &data, &size))
		return -ENOENT;
	r = (struct rd){ data + 8, data + size, size < 20 || memcmp(data, RANGES_MAGIC, 8) };
	source = (uint32_t)rd_u(&r, 4);
	count = rd_u(&r, 8);
	if (r.bad || source > FDE_DEBUG_FRAME || count != (size - 20) / 16 || (size - 20) % 16 ||
	    (count && !(v = malloc(count * sizeof(*v))))) {
		free(data);
		return -ENOENT;
	}
	for (i = 0; i < count; i++) {
		v[i].start = rd_u(&r, 8);
		v[i].end = rd_u(&r, 8);
	}
	free(data);
	return fde_table_adopt(t, v, count, count ? (enum fde_source)source : FDE_NONE) ? -ENOENT
											: 0;
}

int sym_cache_store_ranges(const struct module *m, const struct resolve_opts *o,
			   const struct fde_table *t)
{
	struct wbuf w;
	char path[4096];
	uint64_t count = t->n;
	size_t i;

	if (side_begin(&w, path, sizeof(path), m, o, "fde", RANGES_MAGIC)) {
		free(w.p);
		return -ENAMETOOLONG;
	}
	w_u32(&w, (uint32_t)t->source);
	w_bytes(&w, &count, 8);
	for (i = 0; i < t->n; i++) {
		w_bytes(&w, &t->v[i].start, 8);
		w_bytes(&w, &t->v[i].end, 8);
	}
	return side_write(&w, path, m, o);
}

int sym_cache_load_methods(const struct module *m, const struct resolve_opts *o,
			   struct pymethod_table *t)
{
	char path[4096];
	const char *file, *name;
	uint32_t len, nlen;
	uint64_t count, i;
	struct rd r;
	uint8_t *data;
	size_t size;

	memset(t, 0, sizeof(*t));
	if (side_path(path, sizeof(path), m, o, "pym") || read_file(path, &data, &size))
		return -ENOENT;
	r = (struct rd){ data + 8, data + size, size < 20 || memcmp(data, METHODS_MAGIC, 8) };
	file = rd_str(&r, &len);
	count = rd_u(&r, 8);
	if (r.bad || !file || len != strlen(m->path) || memcmp(file, m->path, len) ||
	    count > (size - 20) / 16 || (count && !(t->v = calloc(count, sizeof(*t->v))))) {
		free(data);
		return -ENOENT;
	}
	t->cap = count;
	for (i = 0; i < count; i++) {
		struct pymethod *p = &t->v[i];

		p->addr = rd_u(&r, 8);
		p->rank = (uint32_t)rd_u(&r, 4);
		name = rd_str(&r, &nlen);
		/* sorted by address, one per address, as pymethod_table_load() makes them */
		if (r.bad || !name || (i && p->addr <= t->v[i - 1].addr) ||
		    !(p->name = strndup(name, nlen)))
			break;
		t->n++;
	}
	free(data);
	if (t->n == count && !r.bad && r.p == r.end)
		return 0;
	pymethod_table_release(t);
	return -ENOENT;
}

int sym_cache_store_methods(const struct module *m, const struct resolve_opts *o,
			    const struct pymethod_table *t)
{
	struct wbuf w;
	char path[4096];
	uint64_t count = t->n;
	size_t i;

	if (side_begin(&w, path, sizeof(path), m, o, "pym", METHODS_MAGIC)) {
		free(w.p);
		return -ENAMETOOLONG;
	}
	w_str(&w, m->path);
	w_bytes(&w, &count, 8);
	for (i = 0; i < t->n; i++) {
		w_bytes(&w, &t->v[i].addr, 8);
		w_u32(&w, t->v[i].rank);
		w_str(&w, t->v[i].name);
	}
	return side_write(&w, path, m, o);
}
