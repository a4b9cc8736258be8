/* SPDX-License-Identifier: MIT */
/* Guarded reads of the process's own memory: a bad pointer fails the read, not the program. */
#include <errno.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>
#include "collector/agent/python/python-private.h"

/*
 * process_vm_readv() on our own pid copies through the kernel, which returns EFAULT for an
 * unmapped or unreadable source instead of raising SIGSEGV. It is a plain system call, so it
 * is async-signal-safe, needs no signal handler of ours (the application keeps its SIGSEGV
 * handler) and no file descriptor. Reading oneself needs no ptrace permission.
 *
 * It costs about 1.2 us a call here whatever the size up to a few KiB (docs/performance.md),
 * so a sample makes as few calls as it can: one call copies many objects (an iovec each,
 * pyread_batch), or a whole run of memory around a frame that the frames after it are likely
 * to lie in (struct pymem). Both rest on how the kernel treats a list of remote iovecs: it
 * copies them in order and stops at the first byte it cannot read, returning the count so
 * far. Readability is per page, so any range inside a page that holds one readable byte is
 * readable: a run is read one page piece an iovec, the piece with the object wanted first,
 * then outwards page by page, and whatever the count covers is a good copy.
 */

#define PAGE 4096ul

static uintptr_t page_of(uintptr_t a)
{
	return a & ~(PAGE - 1);
}

int pyread(int pid, void *dst, uintptr_t src, size_t len)
{
	struct iovec local = { dst, len };
	struct iovec remote = { (void *)src, len };
	ssize_t n;

	if (len == 0)
		return 0;
	if (src < PAGE || src + len < src)
		return -1;
	n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	return n == (ssize_t)len ? 0 : -1;
}

int pyagent_read(void *dst, uintptr_t src, size_t len)
{
	int errsv = errno;
	int ret = pyread((int)getpid(), dst, src, len);

	errno = errsv;
	return ret;
}

static bool valid(uintptr_t addr, size_t len)
{
	return addr >= PAGE && addr + len >= addr;
}

size_t pymem_batch(struct pymem *m, struct pyread_req *req, size_t n)
{
	struct iovec local[PYREAD_BATCH], remote[PYREAD_BATCH];
	size_t at = 0, good = 0, count, k;
	ssize_t got;

	while (at < n) {
		for (count = 0; at + count < n && count < PYREAD_BATCH; count++) {
			struct pyread_req *r = &req[at + count];

			r->ok = false;
			if (!valid(r->addr, r->len))
				break; /* fails alone, after the ones before it */
			local[count].iov_base = r->dst;
			local[count].iov_len = r->len;
			remote[count].iov_base = (void *)r->addr;
			remote[count].iov_len = r->len;
		}
		got = 0;
		if (count) {
			m->calls++;
			got = process_vm_readv(m->pid, local, count, remote, count, 0);
		}
		/* the requests wholly copied are good; the copy stopped in the next one */
		for (k = 0; k < count && got >= (ssize_t)req[at + k].len; k++) {
			got -= (ssize_t)req[at + k].len;
			req[at + k].ok = true;
			good++;
		}
		if (k < count)
			at += k + 1; /* past the one the copy stopped in: it failed */
		else if (count < PYREAD_BATCH && at + count < n)
			at += count + 1; /* past the invalid address that ended the batch */
		else
			at += count;
	}
	return good;
}

void pymem_reset(struct pymem *m, int pid)
{
	m->pid = pid;
	m->own = false;
	m->nruns = 0;
	m->used = 0;
	m->calls = 0;
}

/* The run holding [addr, addr + len), or NULL. */
static const struct pymem_run *find(const struct pymem *m, uintptr_t addr, size_t len)
{
	unsigned i;

	for (i = 0; i < m->nruns; i++)
		if (addr >= m->run[i].lo && addr + len <= m->run[i].hi)
			return &m->run[i];
	return NULL;
}

/*
 * Copy [lo, hi) into a new run, the page pieces holding [addr, end) first, then outwards
 * page by page (downwards when dir < 0, upwards otherwise). Returns the run, or NULL when
 * [addr, end) itself is not readable.
 */
static const struct pymem_run *fetch(struct pymem *m, uintptr_t addr, uintptr_t end, uintptr_t lo,
				     uintptr_t hi, int dir)
{
	struct iovec local[PYMEM_PIECES], remote[PYMEM_PIECES];
	struct pymem_run *r = &m->run[m->nruns];
	uint8_t *buf = m->buf + m->used;
	size_t n = 0, first;
	uintptr_t a, b;
	ssize_t got;

	/* the wanted bytes with the rest of their pages, within [lo, hi) */
	a = page_of(addr) > lo ? page_of(addr) : lo;
	b = page_of(end - 1) + PAGE < hi ? page_of(end - 1) + PAGE : hi;
	remote[n].iov_base = (void *)a;
	remote[n].iov_len = b - a;
	n++;
	if (dir < 0) {
		for (; a > lo && n < PYMEM_PIECES; n++) {
			uintptr_t p = a - PAGE > lo && a - PAGE < a ? a - PAGE : lo;

			remote[n].iov_base = (void *)p;
			remote[n].iov_len = a - p;
			a = p;
		}
		lo = a;
	} else {
		for (; b < hi && n < PYMEM_PIECES; n++) {
			uintptr_t q = b + PAGE < hi ? b + PAGE : hi;

			remote[n].iov_base = (void *)b;
			remote[n].iov_len = q - b;
			b = q;
		}
		hi = b;
	}
	if (dir < 0)
		hi = (uintptr_t)remote[0].iov_base + remote[0].iov_len;
	else
		lo = (uintptr_t)remote[0].iov_base;
	for (first = 0; first < n; first++) {
		local[first].iov_base = buf + ((uintptr_t)remote[first].iov_base - lo);
		local[first].iov_len = remote[first].iov_len;
	}
	m->calls++;
	got = process_vm_readv(m->pid, local, n, remote, n, 0);
	if (got < (ssize_t)remote[0].iov_len)
		return NULL;
	/* keep the pieces wholly copied */
	got -= (ssize_t)remote[0].iov_len;
	r->lo = (uintptr_t)remote[0].iov_base;
	r->hi = r->lo + remote[0].iov_len;
	for (first = 1; first < n && (size_t)got >= remote[first].iov_len; first++) {
		got -= (ssize_t)remote[first].iov_len;
		if (dir < 0)
			r->lo = (uintptr_t)remote[first].iov_base;
		else
			r->hi = (uintptr_t)remote[first].iov_base + remote[first].iov_len;
	}
	r->data = buf + (r->lo - lo);
	m->used += hi - lo;
	m->nruns++;
	return r;
}

int pymem_read(struct pymem *m, void *dst, uintptr_t addr, size_t len, size_t extra, int dir)
{
	const struct pymem_run *r;
	uintptr_t lo, hi;

	if (len == 0)
		return 0;
	if (addr < PAGE || addr + len < addr)
		return -1;
	if (m->own) {
		memcpy(dst, (const void *)addr, len);
		return 0;
	}
	r = find(m, addr, len);
	if (!r && m->nruns < PYMEM_RUNS) {
		if (extra > PYMEM_BYTES - len)
			extra = PYMEM_BYTES - len;
		lo = addr, hi = addr + len;
		if (extra && dir < 0)
			lo = addr - extra > PAGE && addr - extra < addr ? addr - extra : PAGE;
		else if (extra)
			hi = hi + extra > hi ? hi + extra : UINTPTR_MAX;
		/* the run must fit what is left of buf; else the object alone */
		if (m->used + (hi - lo) <= PYMEM_BYTES)
			r = fetch(m, addr, addr + len, lo, hi, dir);
		else if (m->used + len <= PYMEM_BYTES)
			r = fetch(m, addr, addr + len, addr, addr + len, dir);
		else
			m->nruns = PYMEM_RUNS; /* full: plain reads from now on */
		/* the object's own pages come first: nothing of it is readable */
		if (!r && m->nruns < PYMEM_RUNS)
			return -1;
	}
	if (!r) {
		m->calls++;
		return pyread(m->pid, dst, addr, len);
	}
	memcpy(dst, r->data + (addr - r->lo), len);
	return 0;
}
